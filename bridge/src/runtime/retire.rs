//! Freeing big values without holding a frame: the journal's entry for a clear of 100,000
//! entities, a replaced checkpoint or a finished restore hold hundreds of thousands of
//! allocations, and freeing them took tens of milliseconds of one frame. Collections the game
//! thread made are freed on it a slice per frame ([`FreedOverFrames`]; see
//! [`merge_freed_blocks`] for why not elsewhere); [`retire`] hands other values (what a load
//! parsed on its own thread, what a finished job held) to a thread of its own that drops it.

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

use bevy::prelude::{Resource, World};

use crate::runtime::slices::Slice;

/// Values waiting to be dropped at most; past it (or without the thread) a value is dropped
/// where it is.
const WAITING: usize = 64;

type Retired = Box<dyn Send>;

fn retirer() -> Option<&'static SyncSender<Retired>> {
    static RETIRER: OnceLock<Option<SyncSender<Retired>>> = OnceLock::new();
    RETIRER
        .get_or_init(|| {
            let (sender, receiver) = sync_channel::<Retired>(WAITING);
            // At the game's priority, unlike the bridge's other threads: when this thread
            // falls behind, its queue fills and values are dropped on the game thread. Woken by
            // the game thread, it waits for a free core rather than take the game thread's.
            std::thread::Builder::new()
                .name("bevy-mcp-retire".to_owned())
                .spawn(move || {
                    crate::runtime::background::wait_for_a_free_core();
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
/// each unit of freeing keeps the merging in the slice. With other allocators it is one
/// allocation.
pub(crate) fn merge_freed_blocks() {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(
        MERGING_ALLOCATION,
    )));
}

/// Items freed per unit (each an entity's values, mostly).
pub(crate) const ITEMS_PER_UNIT: usize = 64;

/// What is left of a collection being freed: each item is dropped as it is taken.
type Draining = Box<dyn Iterator<Item = ()> + Send + Sync>;

/// Collections being freed on the game thread, oldest first, a slice per frame.
#[derive(Resource, Default)]
pub(crate) struct FreedOverFrames(VecDeque<Draining>);

impl FreedOverFrames {
    /// Frees the items of `items` over the next frames, [`ITEMS_PER_UNIT`] at a time (at once
    /// where the bridge's plugin is absent): for a collection of many small values the game
    /// thread made (what a restore or an undo read and wrote, a journal entry of 100,000
    /// entities, a saved snapshot).
    pub(crate) fn hand_over_items<I>(world: &mut World, items: I)
    where
        I: IntoIterator<Item: 'static>,
        I::IntoIter: Send + Sync + 'static,
    {
        if let Some(mut freeing) = world.get_resource_mut::<FreedOverFrames>() {
            freeing.0.push_back(Box::new(items.into_iter().map(drop)));
        }
    }

    /// Values not freed yet.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Frees a slice per frame until nothing waits, and says in how many frames (fails past
    /// 100).
    #[cfg(test)]
    pub(crate) fn frames_to_free_all(world: &mut World) -> usize {
        let mut frames = 0;
        while world.resource::<FreedOverFrames>().len() > 0 {
            FreedOverFrames::free_some(world);
            frames += 1;
            assert!(frames < 100, "freeing never ended");
        }
        frames
    }

    /// This frame's slice of freeing (the executor calls it every frame).
    pub(crate) fn free_some(world: &mut World) {
        let Some(mut waiting) = world
            .get_resource_mut::<FreedOverFrames>()
            .filter(|freeing| !freeing.0.is_empty())
            .map(|mut freeing| std::mem::take(&mut freeing.0))
        else {
            return;
        };
        Slice::within(world, |_, slice| {
            while let Some(value) = waiting.front_mut()
                && slice.more()
            {
                let done = value.by_ref().take(ITEMS_PER_UNIT).count() < ITEMS_PER_UNIT;
                // Merged unit by unit, so the slice's clock counts the merging too.
                merge_freed_blocks();
                if done {
                    waiting.pop_front();
                }
            }
        });
        if let Some(mut freeing) = world.get_resource_mut::<FreedOverFrames>() {
            // Collections handed over meanwhile (none today) come after those already waiting.
            waiting.append(&mut freeing.0);
            freeing.0 = waiting;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::runtime::slices::MAX_UNITS;

    #[test]
    fn a_collection_is_freed_item_by_item_over_frames() {
        // One slice frees at most MAX_UNITS units of ITEMS_PER_UNIT items: ten more take a
        // second frame.
        let total = MAX_UNITS as usize * ITEMS_PER_UNIT + 10;
        let shared = Arc::new(());
        let items: Vec<Arc<()>> = (0..total).map(|_| Arc::clone(&shared)).collect();
        let mut world = World::new();
        world.init_resource::<FreedOverFrames>();
        FreedOverFrames::hand_over_items(&mut world, items);
        assert_eq!(
            Arc::strong_count(&shared),
            total + 1,
            "nothing freed at once"
        );
        FreedOverFrames::free_some(&mut world);
        let left = Arc::strong_count(&shared) - 1;
        assert!(
            left > 0 && left < total,
            "a first slice frees some: {left} left"
        );
        FreedOverFrames::frames_to_free_all(&mut world);
        assert_eq!(Arc::strong_count(&shared), 1, "every item freed");
    }
}
