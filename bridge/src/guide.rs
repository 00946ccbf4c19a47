//! The guide: everything the README leaves out, one chapter per module.
//!
//! The chapters are the Markdown files of `bridge/docs/`; their Rust examples compile (and the
//! runnable ones run) as doc tests, so they cannot drift from the code.
//!
//! | chapter | what it covers |
//! |---|---|
//! | [`clients`] | connecting Claude Code, Cursor and any MCP client; `--doctor`; sessions that survive restarts; errors that say what to do next |
//! | [`protocol`] | prompts, resources and subscriptions, completions, log lines, resumable streams |
//! | [`search`] | how `search` reads a request: the game's own names, the phrasebook, the learnt model, the rules every query obeys |
//! | [`embedding`] | adding the plugin to a game, Bevy 0.19 and 0.20, development builds only, the plugin group, queries, states |
//! | [`unreflected`] | games whose components do not derive `Reflect` |
//! | [`view`] | screenshots, the UI tree, the example games, rendering without a GPU |
//! | [`history`] | undo and redo, the holding area, checkpoints, diff, restore, whole-world calls |
//! | [`playtests`] | input as a player gives it, expectations, recording, replay by the agent and in CI |
//! | [`custom_actions`] | a game's own actions, bound into the same catalog and executor |
//! | [`lan`] | capability tokens and their scopes, the tokens file, TLS |
//! | [`configuration`] | every flag and builder method, the frame budget, how answers travel |
//! | [`writes`] | the write policy: what a client can write, asset handles, the backstop |
//! | [`limits`] | every bound and what happens beyond it; known gaps |
//! | [`performance`] | the benchmark and where the bridge stands against its peers |
//! | [`architecture`] | the workspace's crates and the bridge's layers |
//! | [`catalog`] | changing the records, teaching search, adding a built-in action |
//! | [`ci`] | what `.ci/run` does, and the fuzzers worth running longer |

#[doc = include_str!("../docs/clients.md")]
pub mod clients {}
#[doc = include_str!("../docs/protocol.md")]
pub mod protocol {}
#[doc = include_str!("../docs/search.md")]
pub mod search {}
#[doc = include_str!("../docs/embedding.md")]
pub mod embedding {}
#[doc = include_str!("../docs/unreflected.md")]
pub mod unreflected {}
#[doc = include_str!("../docs/view.md")]
pub mod view {}
#[doc = include_str!("../docs/history.md")]
pub mod history {}
#[doc = include_str!("../docs/playtests.md")]
pub mod playtests {}
#[doc = include_str!("../docs/custom_actions.md")]
pub mod custom_actions {}
#[doc = include_str!("../docs/lan.md")]
pub mod lan {}
#[doc = include_str!("../docs/configuration.md")]
pub mod configuration {}
#[doc = include_str!("../docs/writes.md")]
pub mod writes {}
#[doc = include_str!("../docs/limits.md")]
pub mod limits {}
#[doc = include_str!("../docs/performance.md")]
pub mod performance {}
#[doc = include_str!("../docs/architecture.md")]
pub mod architecture {}
#[doc = include_str!("../docs/catalog.md")]
pub mod catalog {}
#[doc = include_str!("../docs/ci.md")]
pub mod ci {}
