//! What the bridge observes of the app and of itself, for `system_control`: recent log lines,
//! frame times, the audit trail of execute calls, facts about the bridge, and the terms `search`
//! may match of the running app. All bounded.

pub mod audit;
pub mod facts;
pub mod frames;
pub mod logs;
pub mod search_terms;

pub use logs::capture_logs;
