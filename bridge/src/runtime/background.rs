//! The bridge's own worker threads are guests in the game's process: each one runs at the
//! lowest priority its scheduler gives (niceness 19 on Linux), so on a machine with fewer cores
//! than busy threads the game's threads win the core and a load's parsing or a save's writing
//! never delays a frame. They still get every core the game leaves idle. The transport's
//! threads and the freeing thread keep the game's priority (see `retire`).

use std::io;
use std::thread::JoinHandle;

/// Starts a thread named `name` that runs `work` at the lowest priority.
pub(crate) fn spawn_background<T, F>(name: &str, work: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            yield_to_the_game();
            work()
        })
}

/// Lowers the calling thread's priority to the lowest; where the platform refuses, the thread
/// runs on at its priority, which is only slower for the game on a busy machine.
fn yield_to_the_game() {
    if let Err(error) =
        thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min)
    {
        tracing::debug!(?error, "a bridge thread keeps its priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On Linux the priority is the thread's niceness, readable in `/proc/thread-self/stat`
    /// (field 19): a background thread has the lowest (19), the thread that started it keeps its
    /// own.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_background_thread_runs_at_the_lowest_priority() {
        fn niceness() -> Option<i64> {
            let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
            // The command name (field 2) is in parentheses and may hold spaces.
            let after_name = stat.rsplit_once(')')?.1;
            after_name.split_whitespace().nth(16)?.parse().ok()
        }
        let ours = niceness();
        let theirs = spawn_background("bevy-mcp-test", niceness)
            .map(|thread| thread.join())
            .ok()
            .and_then(Result::ok)
            .flatten();
        assert_eq!(theirs, Some(19));
        assert_ne!(ours, Some(19), "the starting thread keeps its priority");
    }
}
