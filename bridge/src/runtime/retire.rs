//! Freeing big values off the game thread: the journal's entry for a clear of 100,000 entities,
//! a replaced checkpoint or a finished restore hold hundreds of thousands of allocations, and
//! freeing them took tens of milliseconds of one frame. [`retire`] hands such a value to a
//! thread of its own that drops it. [`merge_freed_blocks`] is for values freed on the game
//! thread itself, a slice at a time.

use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

/// Values waiting to be dropped at most; past it (or without the thread) a value is dropped
/// where it is.
const WAITING: usize = 64;

type Retired = Box<dyn Send>;

fn retirer() -> Option<&'static SyncSender<Retired>> {
    static RETIRER: OnceLock<Option<SyncSender<Retired>>> = OnceLock::new();
    RETIRER
        .get_or_init(|| {
            let (sender, receiver) = sync_channel::<Retired>(WAITING);
            std::thread::Builder::new()
                .name("bevy-mcp-retire".to_owned())
                .spawn(move || {
                    // Each value is dropped as it arrives; the thread ends with the process.
                    while let Ok(value) = receiver.recv() {
                        drop(value);
                    }
                })
                .ok()
                .map(|_| sender)
        })
        .as_ref()
}

/// Drops `value` on the retiring thread (or here, when that thread cannot take it).
pub(crate) fn retire<T: Send + 'static>(value: T) {
    let Some(sender) = retirer() else {
        return drop(value);
    };
    match sender.try_send(Box::new(value)) {
        Ok(()) => {}
        Err(TrySendError::Full(value) | TrySendError::Disconnected(value)) => drop(value),
    }
}

/// An allocation big enough to bypass glibc's caches of small blocks.
const MERGING_ALLOCATION: usize = 4096;

/// Has the allocator merge the small blocks this thread freed, now, inside the caller's slice.
///
/// glibc keeps freed small blocks unmerged ("fastbins") until the next allocation of a kilobyte
/// or more from the same arena, which merges them all at once: after 100,000 entities' values
/// were freed, that one allocation took 27–33 ms of the game's frame. One such allocation after
/// each slice of freeing keeps the merging in the slice. With other allocators it is one
/// allocation.
pub(crate) fn merge_freed_blocks() {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(
        MERGING_ALLOCATION,
    )));
}
