//! The one setting of the process's allocator the bridge changes, and why.
//!
//! glibc's malloc keeps small freed blocks in "fast bins", unmerged, and merges every one of
//! them at the next allocation of a kilobyte or more. Work over the whole world frees a
//! hundred thousand entities' values a slice at a time, and whichever allocation came next
//! (the bridge's or the game's) paid for merging them all: single units of 2–7 ms in runs of
//! `mcp-bench --whole-world-only` at 100,000 entities, in the save, the load and the undo of
//! a clear. With fast bins off each free merges its own block at once, so its cost stays in
//! the slice that freed it: of seven full runs (four with this call, three with the same
//! setting through `GLIBC_TUNABLES`), five kept every call within the frame target in the game
//! thread's CPU time and two missed by one frame each (a load's slice of 3.4 ms; 9.6 ms of the
//! game's own in a frame of 16 clients), against seven of twenty-odd runs before; the idle
//! frame did not get slower. The setting is the whole process's, so the app opts in
//! (`BridgeConfig::with_allocator_tuning(true)`; the sandbox does); even then an app that tunes
//! malloc itself keeps its setting: the bridge leaves fast bins alone when `GLIBC_TUNABLES`
//! names `mxfast`.

use bevy::prelude::Resource;

/// What the bridge did to the allocator's fast bins, once, when its plugin was built.
#[derive(Resource, Clone, Debug, PartialEq, Eq)]
pub(crate) enum FastBins {
    /// Turned off: freed small blocks are merged at once.
    TurnedOff,
    /// Left as they were, and why.
    LeftAlone(&'static str),
}

/// Turns glibc's fast bins off unless `tune` is false or the app set them itself.
pub(crate) fn settle_fast_bins(tune: bool) -> FastBins {
    if !tune {
        return FastBins::LeftAlone("the app asked the bridge not to tune the allocator");
    }
    if std::env::var("GLIBC_TUNABLES").is_ok_and(|tunables| tunables.contains("mxfast")) {
        return FastBins::LeftAlone("GLIBC_TUNABLES sets glibc.malloc.mxfast");
    }
    turn_fast_bins_off()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn turn_fast_bins_off() -> FastBins {
    // SAFETY: `mallopt` only sets a number glibc's allocator reads under its own lock;
    // `M_MXFAST` 0 is a documented value (no fast bins), allowed at any time, and any blocks
    // already in fast bins are merged by the call itself.
    let applied = unsafe { libc::mallopt(libc::M_MXFAST, 0) };
    if applied == 1 {
        FastBins::TurnedOff
    } else {
        FastBins::LeftAlone("glibc refused the setting")
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn turn_fast_bins_off() -> FastBins {
    FastBins::LeftAlone("the allocator is not glibc's")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_bins_are_left_alone_when_the_app_says_so() {
        assert_eq!(
            settle_fast_bins(false),
            FastBins::LeftAlone("the app asked the bridge not to tune the allocator")
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn glibc_takes_the_setting() {
        // The test process does not set GLIBC_TUNABLES (CI does not either).
        if std::env::var_os("GLIBC_TUNABLES").is_none() {
            assert_eq!(settle_fast_bins(true), FastBins::TurnedOff);
        }
    }
}
