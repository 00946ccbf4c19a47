//! The bridge's own worker threads are guests in the game's process: each one runs at the
//! lowest priority its scheduler gives (niceness 19 on Linux), so on a machine with fewer cores
//! than busy threads the game's threads win the core and a load's parsing or a save's writing
//! never delays a frame. They still get every core the game leaves idle. The transport's
//! threads and the freeing thread keep the game's priority (see `retire`) but never take a core
//! from a running thread when they wake ([`wait_for_a_free_core`]).

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

/// Has the calling thread wait, when it wakes, for a core to come free rather than take one
/// from the thread running there (Linux's `SCHED_BATCH`; its niceness, its share of the cores
/// and its place on an idle core are unchanged). For the transport's and the freeing thread:
/// the game thread wakes them as it hands over an answer or a value, and a woken thread at the
/// game's priority took the game thread's core on the spot, for as long as it wrote 16 clients'
/// answers (2.5 ms of a frame in a scheduler trace, `perf sched`, of `mcp-bench`'s 16 clients),
/// while the game thread, mid-update, waited. Returns whether the system took it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn wait_for_a_free_core() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads the `sched_param` it is given (a live local) and
    // changes only the calling thread's policy (pid 0); `SCHED_BATCH` with priority 0 is open
    // to unprivileged threads and leaves the niceness as it was.
    let taken = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0 };
    if !taken {
        // As with the background threads' priority: refused, the thread runs on as it was.
        let error = io::Error::last_os_error();
        tracing::debug!(?error, "a bridge thread keeps its scheduling policy");
    }
    taken
}

/// Elsewhere the thread keeps its policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn wait_for_a_free_core() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field `number` (1-based, as `man proc` counts) of the calling thread's
    /// `/proc/thread-self/stat`.
    #[cfg(target_os = "linux")]
    fn own_stat_field(number: usize) -> Option<i64> {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
        // The command name (field 2) is in parentheses and may hold spaces; field 3 follows it.
        let after_name = stat.rsplit_once(')')?.1;
        after_name.split_whitespace().nth(number - 3)?.parse().ok()
    }

    /// On Linux the priority is the thread's niceness (field 19): a background thread has the
    /// lowest (19), the thread that started it keeps its own.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_background_thread_runs_at_the_lowest_priority() {
        let niceness = || own_stat_field(19);
        let ours = niceness();
        let theirs = spawn_background("bevy-mcp-test", niceness)
            .map(|thread| thread.join())
            .ok()
            .and_then(Result::ok)
            .flatten();
        assert_eq!(theirs, Some(19));
        assert_ne!(ours, Some(19), "the starting thread keeps its priority");
    }

    /// The policy (field 41) is the thread's own: a thread that asks to wait for a free core
    /// runs as `SCHED_BATCH`, the thread that started it keeps its own.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_thread_that_waits_for_a_free_core_runs_as_a_batch_thread() {
        let policy = || own_stat_field(41);
        let theirs = std::thread::spawn(move || (wait_for_a_free_core(), policy()))
            .join()
            .ok();
        assert_eq!(theirs, Some((true, Some(i64::from(libc::SCHED_BATCH)))));
        assert_eq!(policy(), Some(i64::from(libc::SCHED_OTHER)));
    }
}
