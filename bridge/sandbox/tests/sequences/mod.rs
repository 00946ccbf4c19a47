//! A stateful sequence fuzzer: seeded, bounded, reproducible random sequences of calls from three
//! interleaved sessions on the sandbox (every kind of world change, undo and redo, checkpoints,
//! their listing and restores, input holds with cancels, duplicate and despawn of anything the world lists and of
//! the bridge's own gamepad, spawn trees, world save and load, the game's own actions), with the
//! world's invariants checked after every step:
//!
//! - the app is alive and answers, and no handler panicked;
//! - no entity is its own ancestor;
//! - a listing of the checkpoints agrees with itself (count, bound, names, order, bytes);
//! - nothing stays pressed that no running call holds;
//! - an undo followed by a redo of the step just made leaves `history.diff` `same` against a
//!   checkpoint taken right after it (component sets included);
//! - at the end, after cleanup, no entity leaked: every disabled entity is one the history holds,
//!   and no simulated gamepad is left;
//! - nothing was written outside the configured folders.
//!
//! Steps are JSON (`{"session", "act", ...}`) and name entities by their position in the
//! world's listing at the time the step runs, so a failing sequence shrinks (steps dropped one by
//! one while it still fails) and prints as a script that `replay_steps` runs again; such scripts
//! are kept in `tests/sequences/*.json` as regression tests. `BRIDGE_SEQUENCE_TRACE=1` prints
//! every call and its answer.

#![allow(dead_code)] // Some parts serve only the render-gated tests.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bevy::ecs::entity_disabling::Disabled;
use bevy::ecs::query::Allow;
use bevy::prelude::{ChildOf, Entity, Name, With, World};
use bevy_mcp_sandbox::testing::{Harness, PendingCall};
use mcp_native_transport::{ProgressSink, ToolError};
use serde_json::{Value, json};

/// The sessions that take turns.
pub const SESSIONS: [&str; 3] = ["alice", "bob", "carol"];
/// The session the checks run as (its checkpoints are its own).
const CHECKER: &str = "checker";

/// A state of the game's that derives `States` without `Reflect`, as most games' do: the bridge
/// names it and refuses to set it.
#[derive(bevy::prelude::States, Default, Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stage {
    #[default]
    Warmup,
    Final,
}

/// What broke, at which step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The step's index.
    pub step: usize,
    /// The invariant (its kind, used to tell whether a shrunk sequence fails the same way).
    pub kind: &'static str,
    /// What was seen.
    pub detail: String,
}

/// A deterministic generator of steps.
pub struct Generator {
    rng: fastrand::Rng,
    names: usize,
}

impl Generator {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: fastrand::Rng::with_seed(seed),
            names: 0,
        }
    }

    /// The next step.
    pub fn step(&mut self) -> Value {
        let session = self.rng.usize(..SESSIONS.len());
        let pick = self.rng.usize(..1000);
        let other = self.rng.usize(..1000);
        let step = match self.rng.u32(..133) {
            0..=9 => {
                self.names += 1;
                let children = self.rng.usize(..4);
                json!({"act": "spawn", "name": format!("F{}", self.names), "children": children})
            }
            10..=16 => json!({"act": "despawn", "pick": pick}),
            17..=19 => json!({"act": "despawn_descendants", "pick": pick}),
            20..=24 => json!({"act": "duplicate", "pick": pick, "tree": self.rng.bool()}),
            25..=30 => {
                json!({"act": "set_parent", "pick": pick, "parent": other, "detach": self.rng.u32(..4) == 0})
            }
            31..=35 => json!({"act": "move", "pick": pick, "x": self.rng.i32(-50..50)}),
            36..=38 => {
                json!({"act": "rename", "pick": pick, "name": format!("R{}", self.rng.u32(..20))})
            }
            39..=48 => json!({"act": "undo", "all": self.rng.u32(..4) == 0}),
            49..=54 => json!({"act": "redo"}),
            55..=57 => json!({"act": "checkpoint", "name": format!("c{}", self.rng.u32(..3))}),
            58..=59 => json!({"act": "restore", "name": format!("c{}", self.rng.u32(..3))}),
            60 => json!({"act": "list_checkpoints"}),
            61..=62 => json!({"act": "save", "name": format!("w{}", self.rng.u32(..2))}),
            63..=64 => json!({"act": "load", "name": format!("w{}", self.rng.u32(..2))}),
            65 => json!({"act": "clear"}),
            66..=68 => json!({"act": "spawn_wave", "count": self.rng.u32(1..6)}),
            69 => json!({"act": "reset_level"}),
            70..=71 => json!({"act": "add_score", "points": self.rng.u32(1..10)}),
            72..=75 => json!({"act": "hold_keys", "frames": self.rng.u32(1..40)}),
            76..=78 => json!({"act": "hold_gamepad", "frames": self.rng.u32(1..40)}),
            79..=81 => json!({"act": "cancel"}),
            82 => json!({"act": "end_session"}),
            83 => json!({"act": "release_all"}),
            84..=85 => json!({"act": "disconnect_gamepad"}),
            86..=87 => json!({"act": "duplicate_pad"}),
            88 => json!({"act": "despawn_pad"}),
            89..=91 => json!({"act": "frames", "frames": self.rng.u32(1..5)}),
            92..=93 => json!({"act": "save_outside"}),
            94..=96 => {
                json!({"act": "insert_health", "pick": pick, "current": self.rng.i32(-10..100)})
            }
            97..=99 => json!({"act": "remove_health", "pick": pick}),
            100..=102 => json!({"act": "step_frames", "frames": self.rng.u32(1..6)}),
            103..=104 => json!({"act": "score", "red": self.rng.u32(..50)}),
            105 => {
                // Now and then the game's own state without reflection: refused, nothing moves.
                let (state, values) = if self.rng.u32(..4) == 0 {
                    ("Stage", ["Warmup", "Final"].as_slice())
                } else {
                    (
                        "GameState",
                        ["Menu", "Playing", "Paused", "GameOver"].as_slice(),
                    )
                };
                json!({"act": "state", "state": state, "value": values[self.rng.usize(..values.len())]})
            }
            106..=107 => json!({"act": "record_start", "name": format!("s{}", self.rng.u32(..2))}),
            108..=109 => json!({"act": "record_stop"}),
            110 => json!({"act": "load_asset"}),
            111 => json!({"act": "release_assets"}),
            112 => json!({"act": "explode"}),
            113 => json!({"act": "goal"}),
            114 => json!({"act": "watch", "pick": pick, "frames": self.rng.u32(1..20)}),
            115 => json!({"act": "wait_for_wave", "frames": self.rng.u32(1..30)}),
            116 => json!({"act": "pause"}),
            117..=118 => json!({"act": "type_text"}),
            119..=120 => json!({"act": "click"}),
            121 => json!({"act": "scroll"}),
            122 => json!({"act": "watch_score", "frames": self.rng.u32(1..20)}),
            123 => json!({"act": "observe_explosions", "frames": self.rng.u32(1..20)}),
            124..=125 => {
                json!({"act": "mutate_health", "pick": pick, "current": self.rng.i32(-10..100)})
            }
            126 => json!({"act": "move_by_component", "x": self.rng.i32(-50..50)}),
            127 => json!({"act": "reset_score"}),
            // A handle written every way: by path, a missing path, a file of another asset type,
            // a new asset, a reference to the last note written (which `release_assets` may have
            // freed since).
            128..=131 => {
                let shows = ["path", "missing", "wrong", "new", "reference"][self.rng.usize(..5)];
                json!({"act": "sign", "pick": pick, "shows": shows})
            }
            _ => {
                let kind = ["pinch", "rotate", "pan", "double_tap"][self.rng.usize(..4)];
                json!({"act": "gesture", "kind": kind})
            }
        };
        let mut step = step;
        step["session"] = json!(session);
        step
    }
}

/// Runs `steps` on a fresh sandbox in a fresh folder, checking after each; the first broken
/// invariant, if any.
pub fn run(steps: &[Value]) -> Result<(), Broken> {
    run_counted(steps).map(|_| ())
}

/// [`run`], with what the run did.
pub fn run_counted(steps: &[Value]) -> Result<Stats, Broken> {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let mut runner = Runner {
        // Game time paused: the game moves nothing by itself, so an undo right after a step
        // never meets a change of the game's.
        harness: Harness::paused_in_with(dir.path(), |app| {
            bevy::prelude::AppExtStates::init_state::<Stage>(app);
            crate::handles::with_signposts(app);
        }),
        dir: dir.path().to_path_buf(),
        running: Vec::new(),
        stats: Stats::default(),
        last_note: None,
    };
    for (index, step) in steps.iter().enumerate() {
        runner
            .step(step)
            .and_then(|journaled| runner.check(journaled))
            .map_err(|(kind, detail)| Broken {
                step: index,
                kind,
                detail,
            })?;
    }
    runner.cleanup().map_err(|(kind, detail)| Broken {
        step: steps.len(),
        kind,
        detail,
    })?;
    Ok(runner.stats)
}

/// Drops steps from a failing sequence while it still fails the same way, within `budget`.
pub fn shrink(steps: &[Value], broken: &Broken, budget: Duration) -> Vec<Value> {
    let started = Instant::now();
    let mut kept: Vec<Value> = steps[..=broken.step.min(steps.len().saturating_sub(1))].to_vec();
    let mut index = kept.len();
    while index > 0 && started.elapsed() < budget {
        index -= 1;
        let mut fewer = kept.clone();
        fewer.remove(index);
        if let Err(again) = run(&fewer)
            && again.kind == broken.kind
        {
            kept = fewer;
        }
    }
    kept
}

/// A call still running (an input hold), by session.
struct Running {
    session: usize,
    input: bool,
    call: PendingCall,
}

struct Runner {
    harness: Harness,
    dir: PathBuf,
    running: Vec<Running>,
    stats: Stats,
    /// The last note a sign was given, as the bridge read it back (a path or a reference).
    last_note: Option<Value>,
}

/// What a run did, to show it did something: answers by code and undo round trips checked.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// `tool.action` answers by outcome (`ok` or the error code).
    pub answers: std::collections::BTreeMap<String, usize>,
    /// Undo-then-redo round trips checked.
    pub round_trips: usize,
}

type Failure = (&'static str, String);

fn is_panic(error: &ToolError) -> bool {
    error.code.as_str() == "HANDLER_PANICKED"
}

impl Runner {
    /// The plain entities of the world, in index order, as the listing shows them.
    fn listed(&mut self) -> Vec<Entity> {
        let listed = self
            .harness
            .call_as(
                CHECKER,
                "inspect",
                "list_entities",
                json!({"limit": 500, "offset": 0}),
            )
            .map(|page| page["entities"].clone())
            .unwrap_or(Value::Null);
        listed
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|row| row["bits"].as_u64().and_then(Entity::try_from_bits))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn pick(&mut self, step: &Value, key: &str) -> Option<Entity> {
        let listed = self.listed();
        let index = step[key].as_u64()? as usize;
        (!listed.is_empty()).then(|| listed[index % listed.len()])
    }

    fn pad(&mut self) -> Option<Value> {
        let held = self
            .harness
            .call_as(CHECKER, "input", "held", json!({}))
            .ok()?;
        held["gamepads"]
            .as_array()?
            .iter()
            .find(|pad| pad["simulated"] == json!(true))
            .map(|pad| pad["entity"].clone())
    }

    /// Runs one step; whether it made a change the journal holds for its session (so an undo
    /// and a redo of it can be checked).
    fn step(&mut self, step: &Value) -> Result<Option<usize>, Failure> {
        let session = step["session"].as_u64().unwrap_or(0) as usize % SESSIONS.len();
        let id = |entity: Entity| json!(entity.to_string());
        let mut signed = None;
        let call: Option<(&str, &str, Value)> = match step["act"].as_str().unwrap_or_default() {
            "spawn" => {
                let count = step["children"].as_u64().unwrap_or(0);
                let children: Vec<Value> = (0..count)
                    .map(|index| match index {
                        0 => json!({"name": format!("{}-0", step["name"].as_str().unwrap_or("F"))}),
                        _ => json!({"name": format!("{}-{index}", step["name"].as_str().unwrap_or("F")), "under": index - 1}),
                    })
                    .collect();
                Some((
                    "control_entity",
                    "spawn",
                    json!({"name": step["name"], "children": children, "components": {"bevy_transform::components::transform::Transform": {"translation": [0.0, 0.0, 0.0], "rotation": [0.0, 0.0, 0.0, 1.0], "scale": [1.0, 1.0, 1.0]}}}),
                ))
            }
            "despawn" => self
                .pick(step, "pick")
                .map(|entity| ("control_entity", "despawn", json!({"entity": id(entity)}))),
            "despawn_descendants" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "despawn_descendants",
                    json!({"entity": id(entity)}),
                )
            }),
            "duplicate" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "duplicate",
                    json!({"entity": id(entity), "withDescendants": step["tree"]}),
                )
            }),
            "set_parent" => {
                let entity = self.pick(step, "pick");
                let parent = if step["detach"] == json!(true) {
                    None
                } else {
                    self.pick(step, "parent")
                };
                entity.map(|entity| {
                    (
                        "control_entity",
                        "set_parent",
                        json!({"entity": id(entity), "parent": parent.map(id)}),
                    )
                })
            }
            "move" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "set_transform",
                    json!({"entity": id(entity), "mode": "translate", "translation": [step["x"], 0, 0]}),
                )
            }),
            "rename" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "rename",
                    json!({"entity": id(entity), "name": step["name"]}),
                )
            }),
            "insert_health" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "insert_components",
                    json!({"entity": id(entity), "components": {"Health": {"current": step["current"], "max": 100.0}}}),
                )
            }),
            "sign" => self.pick(step, "pick").map(|entity| {
                signed = Some(entity);
                let shows = match step["shows"].as_str() {
                    Some("path") => json!("hello.note"),
                    Some("missing") => json!("missing.note"),
                    Some("wrong") => json!("textures/checker.png"),
                    Some("new") => json!({"new": {"text": "made by the fuzzer"}}),
                    _ => self.last_note.clone().unwrap_or(json!("notes/briefing.note")),
                };
                (
                    "control_entity",
                    "insert_components",
                    json!({"entity": id(entity), "components": {"Signpost": {"shows": shows}}}),
                )
            }),
            "remove_health" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "remove_components",
                    json!({"entity": id(entity), "components": ["Health"]}),
                )
            }),
            "undo" => Some((
                "history",
                "undo",
                json!({"allSessions": step["all"] == json!(true)}),
            )),
            "redo" => Some(("history", "redo", json!({}))),
            "checkpoint" => Some((
                "history",
                "checkpoint",
                json!({"name": step["name"], "overwrite": true}),
            )),
            "restore" => Some(("history", "restore", json!({"name": step["name"]}))),
            "list_checkpoints" => Some(("history", "list_checkpoints", json!({}))),
            "save" => Some((
                "manage_world",
                "save",
                json!({"name": step["name"], "overwrite": true}),
            )),
            "save_outside" => Some((
                "manage_world",
                "save",
                json!({"name": "../outside", "overwrite": true}),
            )),
            "load" => Some(("manage_world", "load", json!({"name": step["name"]}))),
            "clear" => Some(("manage_world", "clear", json!({}))),
            "spawn_wave" => Some(("game", "spawn_wave", json!({"count": step["count"]}))),
            "reset_level" => Some(("game", "reset_level", json!({}))),
            "add_score" => Some((
                "game",
                "add_score",
                json!({"team": "red", "points": step["points"]}),
            )),
            // Calls that go on over frames: started, left running, checked as they end.
            "hold_keys" => self.start_running(
                session,
                ("input", "press_keys"),
                json!({"keys": ["ArrowRight"], "frames": step["frames"]}),
            ),
            "hold_gamepad" => self.start_running(
                session,
                ("input", "gamepad"),
                json!({"buttons": ["South"], "frames": step["frames"]}),
            ),
            "type_text" => self.start_running(session, ("input", "type_text"), json!({"text": "Ada"})),
            "click" => self.start_running(session, ("input", "click"), json!({})),
            "scroll" => self.start_running(session, ("input", "scroll"), json!({"y": 3})),
            "cancel" => {
                if let Some(running) = self.running.iter().rev().find(|run| run.session == session)
                {
                    running.call.cancel.cancel();
                }
                self.harness.run_frames(1);
                None
            }
            "end_session" => {
                // What a DELETE does to a session's calls: every one is cancelled.
                for running in self.running.iter().filter(|run| run.session == session) {
                    running.call.cancel.cancel();
                }
                self.harness.run_frames(1);
                None
            }
            "release_all" => Some(("input", "release_all", json!({}))),
            "disconnect_gamepad" => Some(("input", "disconnect_gamepad", json!({}))),
            "duplicate_pad" => self
                .pad()
                .map(|pad| ("control_entity", "duplicate", json!({"entity": pad}))),
            "despawn_pad" => self
                .pad()
                .map(|pad| ("control_entity", "despawn", json!({"entity": pad}))),
            "step_frames" => Some((
                "control_app",
                "step_frames",
                json!({"frames": step["frames"]}),
            )),
            "pause" => Some(("control_app", "pause", json!({}))),
            "score" => Some((
                "manage_resource",
                "mutate",
                json!({"resource": "Score", "path": ".red", "value": step["red"]}),
            )),
            "state" => Some((
                "state",
                "set",
                json!({"state": step["state"].as_str().unwrap_or("GameState"), "value": step["value"]}),
            )),
            "record_start" => Some((
                "playtest",
                "record_start",
                json!({"name": step["name"], "overwrite": true}),
            )),
            "record_stop" => Some(("playtest", "record_stop", json!({}))),
            "gesture" => Some((
                "input",
                "gesture",
                json!({"kind": step["kind"], "amount": 0.1, "x": 3, "y": -2}),
            )),

            "load_asset" => Some(("manage_asset", "load", json!({"path": "hello.note"}))),
            "release_assets" => Some(("manage_asset", "release", json!({"all": true}))),
            "explode" => Some((
                "manage_events",
                "trigger_event",
                json!({"event": "Explosion", "value": {"at": [0, 0, 0], "damage": 10, "radius": 5}}),
            )),
            "goal" => Some((
                "manage_events",
                "write_message",
                json!({"message": "GoalScored", "value": {"team": "Blue"}}),
            )),
            "watch" => match self.pick(step, "pick") {
                Some(entity) => self.start_running(
                    session,
                    ("watch", "watch_entity"),
                    json!({"entity": id(entity), "components": ["Transform"], "frames": step["frames"]}),
                ),
                None => None,
            },
            "watch_score" => self.start_running(
                session,
                ("watch", "watch_resource"),
                json!({"resource": "Score", "frames": step["frames"]}),
            ),
            "observe_explosions" => self.start_running(
                session,
                ("watch", "observe_event"),
                json!({"event": "Explosion", "frames": step["frames"]}),
            ),
            "wait_for_wave" => self.start_running(
                session,
                ("game", "wait_for_wave_cleared"),
                json!({"maxFrames": step["frames"]}),
            ),
            "mutate_health" => self.pick(step, "pick").map(|entity| {
                (
                    "control_entity",
                    "mutate_component",
                    json!({"entity": id(entity), "component": "Health", "path": ".current", "value": step["current"]}),
                )
            }),
            "reset_score" => Some(("manage_resource", "reset_to_default", json!({"resource": "Score"}))),
            // No entity is named after a component: refused, with the ids of its carriers.
            "move_by_component" => Some((
                "control_entity",
                "set_transform",
                json!({"entity": "Health", "mode": "translate", "translation": [step["x"], 0, 0]}),
            )),
            "frames" => {
                self.harness
                    .run_frames(step["frames"].as_u64().unwrap_or(1) as usize);
                None
            }
            other => return Err(("unknown step", other.to_owned())),
        };
        let Some((tool, action, params)) = call else {
            return Ok(None);
        };
        let before = self.newest_entry(SESSIONS[session]);
        let answer = self
            .harness
            .call_as(SESSIONS[session], tool, action, params.clone());
        if std::env::var_os("BRIDGE_SEQUENCE_TRACE").is_some() {
            let shown = match &answer {
                Ok(value) => value.to_string(),
                Err(error) => error.to_string(),
            };
            eprintln!(
                "{} {tool}.{action} {params} -> {}",
                SESSIONS[session],
                shown.chars().take(600).collect::<String>()
            );
        }
        if let (Some(entity), Ok(_)) = (signed, &answer) {
            self.last_note = self
                .harness
                .call_as(
                    CHECKER,
                    "inspect",
                    "get_entity",
                    json!({"entity": id(entity), "components": ["Signpost"]}),
                )
                .ok()
                .and_then(|read| {
                    let signpost = read["components"].as_object()?.values().next()?.clone();
                    Some(signpost["shows"].clone())
                });
        }
        let outcome = match &answer {
            Ok(_) => "ok".to_owned(),
            Err(error) => error.code.to_string(),
        };
        *self
            .stats
            .answers
            .entry(format!("{tool}.{action} {outcome}"))
            .or_default() += 1;
        match answer {
            Err(error) if is_panic(&error) => Err((
                "handler panicked",
                format!("{tool}.{action} {params}: {error}"),
            )),
            Ok(listing) if action == "list_checkpoints" => {
                checkpoints_listed_as_held(&listing)?;
                Ok(None)
            }
            answer if step["state"] == json!("Stage") => {
                let stage = *self
                    .harness
                    .world()
                    .resource::<bevy::prelude::State<Stage>>()
                    .get();
                match answer {
                    Err(error)
                        if error.code.as_str() == "STATE_NOT_FOUND" && stage == Stage::Warmup =>
                    {
                        Ok(None)
                    }
                    other => Err((
                        "unreflected state refused",
                        format!("state.set of Stage answered {other:?}; the state is {stage:?}"),
                    )),
                }
            }
            Ok(written) if step["shows"] == json!("missing") || step["shows"] == json!("wrong") => {
                Err((
                    "a missing file or one of another asset type accepted",
                    format!("{tool}.{action} {params}: {written}"),
                ))
            }
            Err(error) if step["act"] == json!("move_by_component") => {
                carriers_in_sight(self.harness.world(), &error)?;
                Ok(None)
            }
            _ => {
                let after = self.newest_entry(SESSIONS[session]);
                let journaled = after.is_some_and(|(id, undoable)| {
                    undoable && before.is_none_or(|(old, _)| id > old)
                });
                Ok(journaled.then_some(session))
            }
        }
    }

    /// Starts a call that goes on over frames and leaves it running (input calls are what
    /// `input.held` must account for); nothing to answer now.
    fn start_running(
        &mut self,
        session: usize,
        (tool, action): (&str, &str),
        params: Value,
    ) -> Option<(&'static str, &'static str, Value)> {
        let call = self.harness.start_as(
            SESSIONS[session],
            tool,
            action,
            params,
            ProgressSink::disabled(),
        );
        self.running.push(Running {
            session,
            input: tool == "input",
            call,
        });
        self.harness.run_frames(1);
        None
    }

    /// The newest journal entry of `session`: its number and whether it can be undone.
    fn newest_entry(&mut self, session: &str) -> Option<(u64, bool)> {
        let listed = self
            .harness
            .call_as(session, "history", "list", json!({"limit": 256}))
            .ok()?;
        let newest = listed["entries"]
            .as_array()?
            .iter()
            .find(|entry| entry["yours"] == json!(true))?;
        Some((
            newest["id"].as_u64()?,
            newest["undoable"] == json!(true) && newest["state"] == json!("done"),
        ))
    }

    /// The invariants after a step; `journaled` names the session whose step the journal holds.
    fn check(&mut self, journaled: Option<usize>) -> Result<(), Failure> {
        self.harness.run_frames(2);
        if std::env::var_os("BRIDGE_SEQUENCE_TRACE").is_some() {
            let world = self.harness.world();
            let rows: Vec<String> = world
                .query_filtered::<(
                    Entity,
                    &Name,
                    Option<&ChildOf>,
                    bevy::prelude::Has<Disabled>,
                ), Allow<Disabled>>()
                .iter(world)
                .map(|(entity, name, parent, held)| {
                    format!(
                        "{entity}:{name}<{:?}{}",
                        parent.map(ChildOf::parent),
                        if held { "(held)" } else { "" }
                    )
                })
                .collect();
            eprintln!("   world: {}", rows.join(" "));
        }
        self.finished_calls()?;
        if self.harness.app.should_exit().is_some() {
            return Err(("app alive", "the app was asked to exit".to_owned()));
        }
        self.harness
            .call_as(CHECKER, "control_app", "get_state", json!({}))
            .map_err(|error| ("app alive", error.to_string()))?;
        no_parent_loop(self.harness.world())?;
        self.nothing_stuck()?;
        if let Some(session) = journaled {
            self.undo_redo_round_trip(session)?;
        }
        self.nothing_outside()?;
        Ok(())
    }

    /// Answers of running calls that finished: none may be a panic.
    fn finished_calls(&mut self) -> Result<(), Failure> {
        let mut still = Vec::new();
        for running in std::mem::take(&mut self.running) {
            match running.call.try_answer() {
                None => still.push(running),
                Some(Err(error)) if is_panic(&error) => {
                    return Err(("handler panicked", error.to_string()));
                }
                Some(_) => {}
            }
        }
        self.running = still;
        Ok(())
    }

    /// Nothing is pressed that no running call holds.
    fn nothing_stuck(&mut self) -> Result<(), Failure> {
        let held = self
            .harness
            .call_as(CHECKER, "input", "held", json!({}))
            .map_err(|error| ("input held", error.to_string()))?;
        let running = self.running.iter().filter(|run| run.input).count();
        let holds = held["heldByBridge"].as_array().map_or(0, Vec::len);
        if holds > running {
            return Err((
                "input held",
                format!("{holds} holds for {running} running calls: {held}"),
            ));
        }
        let pressed = held["keys"].as_array().is_some_and(|keys| !keys.is_empty())
            || held["gamepads"].as_array().is_some_and(|pads| {
                pads.iter()
                    .any(|pad| pad["buttons"].as_array().is_some_and(|b| !b.is_empty()))
            });
        if running == 0 && pressed {
            return Err((
                "input held",
                format!("pressed with no call running: {held}"),
            ));
        }
        Ok(())
    }

    /// Undo then redo of the step just made leaves the world as it was right after it.
    fn undo_redo_round_trip(&mut self, session: usize) -> Result<(), Failure> {
        let who = SESSIONS[session];
        self.harness
            .call_as(
                CHECKER,
                "history",
                "checkpoint",
                json!({"name": "round-trip", "overwrite": true}),
            )
            .map_err(|error| ("round trip", format!("checkpoint: {error}")))?;
        match self.harness.call_as(who, "history", "undo", json!({})) {
            Ok(_) => {}
            // The round trip is only asked of changes that can be taken back now.
            Err(error)
                if matches!(
                    error.code.as_str(),
                    "UNDO_CONFLICT" | "NOTHING_TO_UNDO" | "NOT_UNDOABLE"
                ) =>
            {
                return Ok(());
            }
            Err(error) => return Err(("round trip", format!("undo: {error}"))),
        }
        self.harness.run_frames(1);
        self.harness
            .call_as(who, "history", "redo", json!({}))
            .map_err(|error| ("round trip", format!("redo after undo: {error}")))?;
        self.harness.run_frames(1);
        self.stats.round_trips += 1;
        let diff = self
            .harness
            .call_as(CHECKER, "history", "diff", json!({"from": "round-trip"}))
            .map_err(|error| ("round trip", format!("diff: {error}")))?;
        if diff["same"] != json!(true) {
            return Err((
                "round trip",
                format!("undo then redo changed the world: {diff}"),
            ));
        }
        Ok(())
    }

    /// Only the configured folders were written to.
    fn nothing_outside(&mut self) -> Result<(), Failure> {
        let allowed: HashSet<&str> = ["scenes", "scripts", "screenshots"].into_iter().collect();
        let entries = std::fs::read_dir(&self.dir).map_err(|error| ("files", error.to_string()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !allowed.contains(name.as_str()) {
                return Err(("files", format!("{name} was written outside the folders")));
            }
        }
        Ok(())
    }

    /// Ends every call, disconnects the gamepad, and checks that nothing leaked.
    fn cleanup(&mut self) -> Result<(), Failure> {
        for running in &self.running {
            running.call.cancel.cancel();
        }
        let _ = self
            .harness
            .call_as(CHECKER, "input", "disconnect_gamepad", json!({}));
        self.harness.run_frames(12);
        self.finished_calls()?;
        self.nothing_stuck()?;
        let world = self.harness.world();
        let disabled: Vec<Entity> = world
            .query_filtered::<Entity, (With<Disabled>, Allow<Disabled>)>()
            .iter(world)
            .collect();
        let diagnostics = self
            .harness
            .call_as(CHECKER, "system_control", "diagnostics", json!({}))
            .map_err(|error| ("leak", error.to_string()))?;
        let held = diagnostics["bridge"]["heldEntities"].as_u64().unwrap_or(0) as usize;
        if disabled.len() != held {
            return Err((
                "leak",
                format!(
                    "{} disabled entities, the holding area counts {held}",
                    disabled.len()
                ),
            ));
        }
        let world = self.harness.world();
        let pads = world
            .query::<&bevy::input::gamepad::GamepadSettings>()
            .iter(world)
            .count();
        if pads > 0 {
            return Err(("leak", format!("{pads} gamepads left after disconnecting")));
        }
        Ok(())
    }
}

/// No entity is its own ancestor.
/// A listing of the checkpoints agrees with itself: as many rows as it says it holds, within the
/// bound, each name once, oldest first, and its bytes the sum of the rows'.
/// A call naming an entity by a component's name lists, as that component's carriers, only
/// entities in the game's sight: none the history holds out of sight, none that is plumbing.
fn carriers_in_sight(world: &mut World, error: &ToolError) -> Result<(), Failure> {
    let details = error.details.clone().unwrap_or_default();
    let Some(carriers) = details["carriers"].as_array() else {
        return Ok(());
    };
    for carrier in carriers {
        let entity = carrier["bits"].as_u64().and_then(Entity::try_from_bits);
        let shown = entity.and_then(|entity| world.get_entity(entity).ok());
        let in_sight = shown.is_some_and(|entity| {
            !entity.contains::<Disabled>()
                && !entity.contains::<bevy::ecs::resource::IsResource>()
                && !entity.contains::<bevy::ecs::observer::Observer>()
        });
        if !in_sight {
            return Err((
                "carriers in sight",
                format!("{carrier} is not an entity of the game's sight: {details}"),
            ));
        }
    }
    Ok(())
}

fn checkpoints_listed_as_held(listing: &Value) -> Result<(), Failure> {
    let broken = |what: &str| Err(("checkpoint listing", format!("{what}: {listing}")));
    let rows = listing["checkpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if listing["held"] != json!(rows.len()) {
        return broken("held is not the number of rows");
    }
    if listing["limits"]["checkpoints"]
        .as_u64()
        .is_none_or(|limit| rows.len() as u64 > limit)
    {
        return broken("more rows than the bound");
    }
    let names: HashSet<&str> = rows.iter().filter_map(|row| row["name"].as_str()).collect();
    if names.len() != rows.len() {
        return broken("a name twice, or a row without one");
    }
    let frames: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["frame"].as_u64())
        .collect();
    if frames.len() != rows.len() || frames.windows(2).any(|pair| pair[0] > pair[1]) {
        return broken("not oldest first");
    }
    let bytes: u64 = rows.iter().filter_map(|row| row["bytes"].as_u64()).sum();
    if listing["bytes"] != json!(bytes) {
        return broken("its bytes are not the rows' sum");
    }
    Ok(())
}

fn no_parent_loop(world: &mut World) -> Result<(), Failure> {
    let parents: HashMap<Entity, Entity> = world
        .query_filtered::<(Entity, &ChildOf), Allow<Disabled>>()
        .iter(world)
        .map(|(entity, child_of)| (entity, child_of.parent()))
        .collect();
    for start in parents.keys() {
        let mut seen = HashSet::from([*start]);
        let mut current = *start;
        while let Some(parent) = parents.get(&current) {
            if !seen.insert(*parent) {
                let name = world.get::<Name>(*start).map(|name| name.to_string());
                return Err(("parent loop", format!("{start} ({name:?}) is in a loop")));
            }
            current = *parent;
        }
    }
    Ok(())
}

/// Runs a kept sequence (a JSON array of steps) and fails on the first broken invariant.
pub fn replay_steps(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{error}"));
    let steps: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}"));
    if let Err(broken) = run(&steps) {
        panic!("{}: {broken:?}", path.display());
    }
}
