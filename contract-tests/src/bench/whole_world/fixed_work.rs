//! The busy control of P8's whole-world rows: frames of fixed arithmetic on a thread of the
//! benchmark, as much per frame as the bridge may take for work over the whole world, measured
//! on the same two clocks as the game's updates.
//!
//! A frame of the same work should take the same time. On a shared virtual machine it does
//! not: the host may stop the virtual CPU, and a thread's CPU clock may count the stop (this
//! one counted up to 1.9 ms on a unit of 25 µs). Such a stop lands in a frame with a chance
//! that grows with how busy the frame is, so a window where the game idles (the plain control)
//! shows fewer of them than a call that keeps the game thread busy for a millisecond a frame.
//! The busy control is as busy as the call, with nothing else that could be slow: a frame of
//! it over the target is the machine's.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::load::percentile;

/// One frame at 60 fps.
const FRAME: Duration = Duration::from_micros(16_667);

/// The work of a frame: what the bridge may take of one for work over the whole world
/// (`WORLD_WORK_PER_FRAME`).
const WORK_PER_FRAME: Duration = Duration::from_micros(1_000);

/// Steps of one unit of arithmetic (a few tens of microseconds).
const STEPS_PER_UNIT: u64 = 20_000;

/// Units timed to find the fastest (what a unit costs when nothing stops it).
const CALIBRATION_UNITS: usize = 400;

/// The same arithmetic every time, kept from being folded away.
fn unit(seed: u64) -> u64 {
    let mut x = black_box(seed);
    for _ in 0..STEPS_PER_UNIT {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    black_box(x)
}

/// The thread's CPU time so far, where the platform tells it.
fn thread_cpu() -> Option<Duration> {
    cpu_time::ThreadTime::try_now()
        .ok()
        .map(|time| time.as_duration())
}

/// The frames of a busy window, on both clocks.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct BusyFrames {
    pub(super) wall: Vec<Duration>,
    /// Empty where the platform cannot tell a thread's CPU time.
    pub(super) cpu: Vec<Duration>,
}

/// Units in a frame's work: the work over the fastest unit's cost, found by timing units.
fn units_per_frame() -> u32 {
    let fastest = (0..CALIBRATION_UNITS)
        .map(|index| {
            let started = Instant::now();
            unit(index as u64);
            started.elapsed()
        })
        .min()
        .unwrap_or(WORK_PER_FRAME)
        .max(Duration::from_micros(1));
    let units = WORK_PER_FRAME.as_nanos() / fastest.as_nanos();
    u32::try_from(units).unwrap_or(u32::MAX).max(1)
}

/// Runs frames of fixed work for `duration` on this thread, one every 1/60 s, and measures
/// each. Blocks: call it on a thread of its own.
pub(super) fn busy_frames(duration: Duration) -> BusyFrames {
    let units = units_per_frame();
    let mut frames = BusyFrames::default();
    let started = Instant::now();
    while started.elapsed() < duration {
        let frame = Instant::now();
        let cpu = thread_cpu();
        for index in 0..units {
            unit(u64::from(index));
        }
        frames.wall.push(frame.elapsed());
        if let Some((before, after)) = cpu.zip(thread_cpu()) {
            frames.cpu.push(after.saturating_sub(before));
        }
        std::thread::sleep((frame + FRAME).saturating_duration_since(Instant::now()));
    }
    frames
}

/// The p99 and the longest of some frames, in milliseconds (the load generator's percentile).
pub(super) fn p99_and_worst_ms(frames: &[Duration]) -> (f64, f64) {
    let mut sorted = frames.to_vec();
    sorted.sort();
    (percentile(&sorted, 0.99), percentile(&sorted, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_window_measures_frames_of_work_on_both_clocks() {
        let frames = busy_frames(Duration::from_millis(100));
        assert!(!frames.wall.is_empty());
        // Each frame did its units: never nothing (a bound below, not a speed).
        assert!(frames.wall.iter().all(|frame| !frame.is_zero()));
        if cfg!(target_os = "linux") {
            assert_eq!(frames.cpu.len(), frames.wall.len());
        }
    }

    #[test]
    fn p99_and_worst_are_read_from_the_sorted_frames() {
        let frames: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        // 99% of 200 is rank 198.
        assert_eq!(p99_and_worst_ms(&frames), (198.0, 200.0));
        assert_eq!(p99_and_worst_ms(&[]), (0.0, 0.0));
    }
}
