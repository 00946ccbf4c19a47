//! How a call reaches the game thread and runs there: the mailbox between the transport thread
//! and the game, the executor that starts calls under the frame budget and advances long-running
//! jobs, the runner that wakes for a call, and the transport thread itself.

pub mod budget;
pub mod catalog;
#[cfg(feature = "render")]
pub mod event_loop;
pub mod executor;
pub mod identity;
pub mod mailbox;
pub mod runner;
pub mod transport;
