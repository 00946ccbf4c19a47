//! What changed in the world and how to take it back: the journal of every change a call makes,
//! and the world as values (snapshots, differences, and making the world match one side).

pub mod journal;
pub mod world_delta;
