//! A frame-paced runner for headless apps that wakes as soon as a call arrives.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bevy::app::{App, AppExit, PluginsState};
use bevy::prelude::Resource;

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
            if let Some(mut times) = app.world_mut().get_resource_mut::<UpdateTimes>() {
                times.record(took, cpu);
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
/// waited for a core or for a lock another thread held; the second tells those apart.
#[derive(Resource, Debug, Default)]
pub(crate) struct UpdateTimes {
    wall: VecDeque<Duration>,
    /// Empty where the platform cannot tell a thread's CPU time.
    cpu: VecDeque<Duration>,
}

/// Updates kept: two seconds at 60 fps.
const UPDATES_KEPT: usize = 120;

impl UpdateTimes {
    fn record(&mut self, wall: Duration, cpu: Option<Duration>) {
        keep_last(&mut self.wall, wall);
        if let Some(cpu) = cpu {
            keep_last(&mut self.cpu, cpu);
        }
    }

    /// `{p99Ms, worstMs, samples, cpuP99Ms?, cpuWorstMs?}` of the kept updates (nearest-rank p99).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let (p99, worst) = p99_and_worst(&self.wall);
        let mut figures = serde_json::json!({
            "p99Ms": p99,
            "worstMs": worst,
            "samples": self.wall.len(),
        });
        if !self.cpu.is_empty() {
            let (p99, worst) = p99_and_worst(&self.cpu);
            figures["cpuP99Ms"] = p99.into();
            figures["cpuWorstMs"] = worst.into();
        }
        figures
    }
}

fn keep_last(kept: &mut VecDeque<Duration>, took: Duration) {
    if kept.len() >= UPDATES_KEPT {
        kept.pop_front();
    }
    kept.push_back(took);
}

/// The nearest-rank 99th percentile and the longest, in milliseconds.
fn p99_and_worst(kept: &VecDeque<Duration>) -> (f64, f64) {
    let mut sorted: Vec<Duration> = kept.iter().copied().collect();
    sorted.sort();
    let millis = |duration: Option<&Duration>| {
        duration.map_or(0.0, |duration| duration.as_secs_f64() * 1000.0)
    };
    let rank = (sorted.len() * 99).div_ceil(100).saturating_sub(1);
    (millis(sorted.get(rank)), millis(sorted.last()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_times_keep_the_last_two_seconds_on_both_clocks() {
        let mut times = UpdateTimes::default();
        for index in 0..(UPDATES_KEPT as u64 + 10) {
            times.record(
                Duration::from_millis(index),
                Some(Duration::from_micros(index)),
            );
        }
        let figures = times.to_json();
        assert_eq!(figures["samples"], UPDATES_KEPT);
        assert_eq!(figures["worstMs"], (UPDATES_KEPT + 9) as f64);
        assert_eq!(figures["cpuWorstMs"], (UPDATES_KEPT + 9) as f64 / 1000.0);
        // Nearest rank: the 119th of 120 sorted values (10..=129).
        assert_eq!(figures["p99Ms"], 128.0);
    }

    #[test]
    fn without_cpu_times_only_the_wall_clock_is_reported() {
        let mut times = UpdateTimes::default();
        times.record(Duration::from_millis(3), None);
        let figures = times.to_json();
        assert_eq!(figures["worstMs"], 3.0);
        assert!(figures.get("cpuWorstMs").is_none());
    }
}
