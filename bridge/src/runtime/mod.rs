//! How a call reaches the game thread and runs there.
//!
//! Reading order: [`action`] (what a built-in action is: handler and footprint) and [`job`] (the
//! one trait for work over frames); [`registry`] (every action, built-in and the app's own,
//! behind one [`registry::Binding`] trait); [`mailbox`] (the bounded channel from the transport
//! thread) and [`local`] (calls made from inside the app, through the same gateway and mailbox);
//! [`executor`] (runs calls after `Last` under the [`budget`], with [`hooks`] where the journal
//! and recordings attach) and [`slices`] (the frame's time for work over the whole world); [`schedule`], [`runner`], [`event_loop`]; [`transport`] (the server's
//! thread) and [`identity`] (what makes the engine-agnostic server the bridge); [`retire`]
//! (freeing big values without holding a frame), [`allocator`] (glibc's fast bins off, so freeing
//! costs the slice that frees) and [`background`] (the bridge's own threads run at the lowest
//! priority).

pub(crate) mod action;
pub(crate) mod allocator;
pub(crate) mod background;
pub(crate) mod budget;
pub(crate) mod catalog;
#[cfg(feature = "render")]
pub(crate) mod event_loop;
pub(crate) mod executor;
pub(crate) mod hooks;
pub(crate) mod housekeeping;
pub(crate) mod identity;
pub(crate) mod job;
pub(crate) mod local;
pub(crate) mod mailbox;
pub(crate) mod registry;
pub(crate) mod retire;
pub(crate) mod runner;
pub(crate) mod schedule;
pub(crate) mod slices;
pub(crate) mod transport;
