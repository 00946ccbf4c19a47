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
            app.update();
            if let Some(mut times) = app.world_mut().get_resource_mut::<UpdateTimes>() {
                times.record(started.elapsed());
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
#[derive(Resource, Debug, Default)]
pub(crate) struct UpdateTimes(VecDeque<Duration>);

/// Updates kept: two seconds at 60 fps.
const UPDATES_KEPT: usize = 120;

impl UpdateTimes {
    fn record(&mut self, took: Duration) {
        if self.0.len() >= UPDATES_KEPT {
            self.0.pop_front();
        }
        self.0.push_back(took);
    }

    /// `{p99Ms, worstMs, samples}` of the kept updates (nearest-rank p99).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut sorted: Vec<Duration> = self.0.iter().copied().collect();
        sorted.sort();
        let millis = |duration: Option<&Duration>| {
            duration.map_or(0.0, |duration| duration.as_secs_f64() * 1000.0)
        };
        let rank = (sorted.len() * 99).div_ceil(100).saturating_sub(1);
        serde_json::json!({
            "p99Ms": millis(sorted.get(rank)),
            "worstMs": millis(sorted.last()),
            "samples": sorted.len(),
        })
    }
}
