//! Recent real frame times, for `system_control.diagnostics`.

use std::collections::VecDeque;

use bevy::prelude::{Real, Res, ResMut, Resource, Time};

/// Frame times sampled for `diagnostics`.
pub(crate) const FRAME_SAMPLES: usize = 120;

/// Recent real frame times, for `diagnostics`.
#[derive(Resource, Debug, Default)]
pub(crate) struct FrameTimes(pub VecDeque<f64>);

impl FrameTimes {
    /// Records one frame's duration in milliseconds.
    pub(crate) fn record(&mut self, millis: f64) {
        if self.0.len() >= FRAME_SAMPLES {
            self.0.pop_front();
        }
        self.0.push_back(millis);
    }
}

/// Records the last frame's real duration (the frame budget's own time is in `FrameBudget`).
pub(crate) fn record_frame_time(time: Option<Res<Time<Real>>>, times: Option<ResMut<FrameTimes>>) {
    if let (Some(time), Some(mut times)) = (time, times) {
        times.record(time.delta_secs_f64() * 1000.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_times_keep_the_last_samples() {
        let mut times = FrameTimes::default();
        for index in 0..(FRAME_SAMPLES + 5) {
            times.record(index as f64);
        }
        assert_eq!(times.0.len(), FRAME_SAMPLES);
        assert_eq!(times.0.front().copied(), Some(5.0));
    }
}
