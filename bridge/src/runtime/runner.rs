//! A frame-paced runner for headless apps that wakes as soon as a call arrives.

use std::time::{Duration, Instant};

use bevy::app::{App, AppExit, PluginsState};

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
