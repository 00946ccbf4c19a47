//! The bridge's own work after the calls ([`BridgeSystems::Housekeeping`]: releasing held
//! entities nothing names any more, refreshing search's terms of the world) is the bridge's
//! time in the frame as much as the calls are: it is added to the frame's bridge time, so
//! `system_control.diagnostics` and the runner's update times do not count it as the game's.

use std::time::Duration;

use bevy::prelude::{Res, ResMut, Resource};

use crate::runtime::budget::FrameBudget;
#[cfg(doc)]
use crate::runtime::schedule::BridgeSystems;

/// When this frame's housekeeping began, on the budget's clock and in the game thread's CPU
/// time.
#[derive(Resource, Debug, Default)]
pub(crate) struct HousekeepingStarted {
    at: Option<Duration>,
    /// The thread's CPU time so far (a `ThreadTime` is tied to its thread; a resource is not).
    cpu: Option<Duration>,
}

/// The game thread's CPU time so far, where the platform tells it.
fn thread_cpu() -> Option<Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|time| time.as_duration())
}

/// Marks the start of the frame's housekeeping (runs before [`BridgeSystems::Housekeeping`]).
pub(crate) fn begin_housekeeping(
    budget: Option<Res<FrameBudget>>,
    mut started: ResMut<HousekeepingStarted>,
) {
    started.at = budget.map(|budget| budget.mark());
    started.cpu = thread_cpu();
}

/// Adds the frame's housekeeping to the frame's bridge time (runs after it).
pub(crate) fn count_housekeeping(
    budget: Option<ResMut<FrameBudget>>,
    mut started: ResMut<HousekeepingStarted>,
) {
    let (Some(mut budget), Some(at)) = (budget, started.at.take()) else {
        return;
    };
    let wall = budget.mark().saturating_sub(at);
    let cpu = started
        .cpu
        .take()
        .zip(thread_cpu())
        .map(|(before, now)| now.saturating_sub(before));
    budget.add_housekeeping(wall, cpu);
}

#[cfg(test)]
mod tests {
    use bevy::ecs::system::RunSystemOnce;
    use bevy::prelude::World;

    use super::*;
    use crate::runtime::budget::{BudgetClock, DEFAULT_FRAME_BUDGET};

    #[test]
    fn housekeeping_counts_as_the_bridges_time() {
        let mut world = World::new();
        world.insert_resource(FrameBudget::new(DEFAULT_FRAME_BUDGET, BudgetClock::Real));
        world.init_resource::<HousekeepingStarted>();
        let work = world.resource::<FrameBudget>().begin();
        world.resource_mut::<FrameBudget>().end(work);
        let calls = world.resource::<FrameBudget>().last_frame();
        world
            .run_system_once(begin_housekeeping)
            .expect("the system runs");
        // A sleep lasts at least as long as asked: a bound below, not a speed.
        let housekeeping = Duration::from_millis(20);
        std::thread::sleep(housekeeping);
        world
            .run_system_once(count_housekeeping)
            .expect("the system runs");
        let frame = world.resource::<FrameBudget>().last_frame();
        assert!(frame >= calls + housekeeping, "{frame:?}");
        // Told apart from the calls' part too.
        let after_calls = world.resource::<FrameBudget>().last_housekeeping();
        assert!(after_calls >= housekeeping, "{after_calls:?}");
        assert!(after_calls <= frame, "{after_calls:?} of {frame:?}");
        // Counted once: a frame without housekeeping adds nothing.
        world
            .run_system_once(count_housekeeping)
            .expect("the system runs");
        assert_eq!(world.resource::<FrameBudget>().last_frame(), frame);
    }
}
