//! Bevy, as this build has it: 0.19 or 0.20, chosen by the `bevy_0_19` / `bevy_0_20` feature.
//!
//! Every crate of the workspace that uses Bevy depends on this one under the name `bevy`, so its
//! code writes `use bevy::prelude::*` whatever the version, and Bevy's derives (which look for a
//! dependency named `bevy` in the crate's manifest and then write `::bevy::ecs::...`) work
//! unchanged. Everything Bevy exports is re-exported here; what differs between the two versions,
//! and is needed by the bridge, lives in [`compat`] and nowhere else.

#![deny(missing_docs)]

#[cfg(all(feature = "bevy_0_19", feature = "bevy_0_20"))]
compile_error!(
    "both `bevy_0_19` and `bevy_0_20` are on: choose one. A game on Bevy 0.20 depends on the \
     bridge with `default-features = false, features = [\"bevy_0_20\"]`; in this workspace, pass \
     `--no-default-features --features bevy_0_20`."
);

#[cfg(not(any(feature = "bevy_0_19", feature = "bevy_0_20")))]
compile_error!(
    "no Bevy version is chosen: turn on `bevy_0_19` (Bevy 0.19.1) or `bevy_0_20` (Bevy 0.20.1), \
     the one your game uses."
);

#[cfg(all(feature = "bevy_0_19", not(feature = "bevy_0_20")))]
pub use bevy_0_19::*;

#[cfg(all(feature = "bevy_0_20", not(feature = "bevy_0_19")))]
pub use bevy_0_20::*;

#[cfg(any(
    all(feature = "bevy_0_19", not(feature = "bevy_0_20")),
    all(feature = "bevy_0_20", not(feature = "bevy_0_19"))
))]
pub mod compat;
