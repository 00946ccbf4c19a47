//! A frame-paced runner for headless apps that wakes as soon as a call arrives.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bevy::app::{App, AppExit, PluginsState};
use bevy::prelude::Resource;

use crate::runtime::budget::FrameBudget;
use crate::runtime::mailbox::BridgeSignals;

/// A runner that runs one frame every `1/fps` seconds, or at once when a call arrives, and sleeps
/// in between (an idle app uses almost no CPU). Ends on `AppExit` or a stop request
/// ([`crate::BridgeSignals`]). For headless tools and servers; windowed apps keep winit's runner.
pub fn frame_paced_runner(fps: f64) -> impl FnOnce(App) -> AppExit {
    move |mut app: App| {
        // As Bevy's own runners do: finish the plugins unless the caller already did.
        if app.plugins_state() != PluginsState::Cleaned {
            while app.plugins_state() == PluginsState::Adding {
                bevy::tasks::tick_global_task_pools_on_main_thread();
            }
            app.finish();
            app.cleanup();
        }
        // 0 (or less) runs uncapped: the next frame starts as soon as the last one ends.
        let frame = (fps > 0.0).then(|| Duration::from_secs_f64(1.0 / fps.clamp(1.0, 1000.0)));
        let waker = app
            .world()
            .get_resource::<BridgeSignals>()
            .map(|signals| signals.waker.clone());
        loop {
            let started = Instant::now();
            let cpu = cpu_time::ThreadTime::try_now().ok();
            app.update();
            let took = started.elapsed();
            let cpu = cpu.and_then(|cpu| cpu.try_elapsed().ok());
            let budget = app.world().get_resource::<FrameBudget>();
            let bridge = budget.map(|budget| BridgePart {
                all: budget.last_frame(),
                housekeeping: budget.last_housekeeping(),
            });
            let bridge_cpu = budget.and_then(|budget| {
                Some(BridgePart {
                    all: budget.last_frame_cpu()?,
                    housekeeping: budget.last_housekeeping_cpu()?,
                })
            });
            if let Some(mut times) = app.world_mut().get_resource_mut::<UpdateTimes>() {
                times.record(Update {
                    wall: took,
                    cpu,
                    bridge,
                    bridge_cpu,
                });
            }
            if let Some(exit) = app.should_exit() {
                return exit;
            }
            match (&waker, frame) {
                (Some(waker), _) if waker.stop_requested() => return AppExit::Success,
                (_, None) => {}
                (Some(waker), Some(frame)) => {
                    waker.sleep_until(started + frame);
                }
                (None, Some(frame)) => {
                    std::thread::sleep((started + frame).saturating_duration_since(Instant::now()))
                }
            }
        }
    }
}

/// How long the most recent frames' updates took (every schedule: the game's systems and the
/// bridge's work), as [`frame_paced_runner`] measures them: what the game pays per frame,
/// whatever the frame rate. Other runners leave it empty.
///
/// Each update is kept twice: on the wall clock (what a player sees) and in the game thread's
/// CPU time (what the update did). On a busy machine the first also holds the time the thread
/// waited for a core or for a lock another thread held; the second tells those apart. The
/// bridge's own time in each update is kept beside them, so the longest update tells whether
/// the bridge's work or the game's systems made it long.
#[derive(Resource, Debug, Default)]
pub(crate) struct UpdateTimes {
    updates: VecDeque<Update>,
}

/// One update as the runner measured it.
#[derive(Debug, Clone, Copy)]
struct Update {
    wall: Duration,
    /// `None` where the platform cannot tell a thread's CPU time.
    cpu: Option<Duration>,
    /// The bridge's time on the game thread in this update (its calls, jobs and slices), on
    /// the wall clock and in CPU time.
    bridge: Option<BridgePart>,
    bridge_cpu: Option<BridgePart>,
}

/// The bridge's time in one update, and how much of it came after the calls (housekeeping:
/// releasing held entities, refreshing search's terms), so a long update tells which of the
/// two made it long.
#[derive(Debug, Clone, Copy)]
struct BridgePart {
    all: Duration,
    housekeeping: Duration,
}

/// Updates kept: two seconds at 60 fps.
const UPDATES_KEPT: usize = 120;

impl UpdateTimes {
    fn record(&mut self, update: Update) {
        if self.updates.len() >= UPDATES_KEPT {
            self.updates.pop_front();
        }
        self.updates.push_back(update);
    }

    /// `{p99Ms, worstMs, worstBridgeMs?, worstHousekeepingMs?, samples, cpuP99Ms?, cpuWorstMs?,
    /// cpuWorstBridgeMs?, cpuWorstHousekeepingMs?}` of the kept updates (nearest-rank p99); a
    /// `…BridgeMs` is the bridge's part of that worst update, on the same clock, and a
    /// `…HousekeepingMs` the part of that after the calls.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let wall = Figures::of(
            self.updates
                .iter()
                .map(|update| (update.wall, update.bridge)),
        );
        let mut figures = serde_json::json!({
            "p99Ms": wall.p99_ms,
            "worstMs": wall.worst_ms,
            "samples": self.updates.len(),
        });
        if let Some(bridge) = wall.worst_bridge {
            figures["worstBridgeMs"] = millis(bridge.all).into();
            figures["worstHousekeepingMs"] = millis(bridge.housekeeping).into();
        }
        let cpu_times = self
            .updates
            .iter()
            .filter_map(|update| Some((update.cpu?, update.bridge_cpu)));
        if self.updates.iter().any(|update| update.cpu.is_some()) {
            let cpu = Figures::of(cpu_times);
            figures["cpuP99Ms"] = cpu.p99_ms.into();
            figures["cpuWorstMs"] = cpu.worst_ms.into();
            if let Some(bridge) = cpu.worst_bridge {
                figures["cpuWorstBridgeMs"] = millis(bridge.all).into();
                figures["cpuWorstHousekeepingMs"] = millis(bridge.housekeeping).into();
            }
        }
        figures
    }
}

/// The nearest-rank 99th percentile and the longest of some updates, in milliseconds, and the
/// bridge's time in the longest.
struct Figures {
    p99_ms: f64,
    worst_ms: f64,
    worst_bridge: Option<BridgePart>,
}

impl Figures {
    fn of(updates: impl Iterator<Item = (Duration, Option<BridgePart>)>) -> Figures {
        let mut sorted: Vec<(Duration, Option<BridgePart>)> = updates.collect();
        sorted.sort_by_key(|(took, _)| *took);
        let rank = (sorted.len() * 99).div_ceil(100).saturating_sub(1);
        let worst = sorted.last();
        Figures {
            p99_ms: sorted.get(rank).map_or(0.0, |(took, _)| millis(*took)),
            worst_ms: worst.map_or(0.0, |(took, _)| millis(*took)),
            worst_bridge: worst.and_then(|(_, bridge)| *bridge),
        }
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_times_keep_the_last_two_seconds_on_both_clocks() {
        let mut times = UpdateTimes::default();
        for index in 0..(UPDATES_KEPT as u64 + 10) {
            times.record(Update {
                wall: Duration::from_millis(index),
                cpu: Some(Duration::from_micros(index)),
                bridge: Some(BridgePart {
                    all: Duration::from_micros(index / 2),
                    housekeeping: Duration::from_micros(index / 8),
                }),
                bridge_cpu: Some(BridgePart {
                    all: Duration::from_micros(index / 4),
                    housekeeping: Duration::from_micros(index / 16),
                }),
            });
        }
        let figures = times.to_json();
        assert_eq!(figures["samples"], UPDATES_KEPT);
        assert_eq!(figures["worstMs"], (UPDATES_KEPT + 9) as f64);
        assert_eq!(figures["cpuWorstMs"], (UPDATES_KEPT + 9) as f64 / 1000.0);
        // Nearest rank: the 119th of 120 sorted values (10..=129).
        assert_eq!(figures["p99Ms"], 128.0);
        // The bridge's part of the longest update is that update's, not the longest of its own,
        // and so is the part of it after the calls.
        for (figure, share) in [
            ("worstBridgeMs", 2),
            ("cpuWorstBridgeMs", 4),
            ("worstHousekeepingMs", 8),
            ("cpuWorstHousekeepingMs", 16),
        ] {
            assert_eq!(
                figures[figure],
                ((UPDATES_KEPT + 9) / share) as f64 / 1000.0,
                "{figure}"
            );
        }
    }

    #[test]
    fn without_cpu_times_only_the_wall_clock_is_reported() {
        let mut times = UpdateTimes::default();
        times.record(Update {
            wall: Duration::from_millis(3),
            cpu: None,
            bridge: None,
            bridge_cpu: None,
        });
        let figures = times.to_json();
        assert_eq!(figures["worstMs"], 3.0);
        assert!(figures.get("cpuWorstMs").is_none());
        assert!(figures.get("worstBridgeMs").is_none());
    }
}
