//! P8's whole-world rows: the calls that read or change every entity (checkpoint, diff, restore,
//! clear, undo, the game's world-wide actions, a query ordered by a whole component, sixteen
//! queries at once), each timed on the sandbox at 60 fps with 1,000 / 10,000 / 100,000 extra
//! entities, with the game's longest update while it ran against the idle p99, and the resident
//! memory a checkpoint costs against its serialized bytes.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{BenchConfig, BenchError, ServerProcess, WORLD_SIZES, resident_kib};
use crate::mcp::McpSession;
use fixed_work::{BusyFrames, busy_frames, p99_and_worst_ms};

mod fixed_work;

/// How often the sampler asks for the update times while a call runs: well inside the
/// two seconds (120 updates at 60 fps) that `updateMs` covers, so no update is missed.
const SAMPLE_EVERY: Duration = Duration::from_millis(500);

/// What `updateMs` covers: 120 updates at 60 fps, and a little more.
const UPDATES_WINDOW: Duration = Duration::from_millis(2_200);

/// How long the sampler goes on after a call answered: what the bridge frees once a call is
/// done (its snapshot, its journal entry) is still the call's cost to the game.
const AFTERMATH: Duration = Duration::from_millis(1_000);

/// The longest a measured call may take (the bridge's largest `timeoutMs`).
const TIMEOUT_MS: u64 = 600_000;

/// The target: no update while a call runs is longer than the idle p99 by more than this.
const ALLOWED_OVER_IDLE_MS: f64 = 2.0;

/// The label of a control window: no call, for as long as the call before it took.
const CONTROL_LABEL: &str = "control: no call, as long as the call above";

/// The label of a busy control window (see [`fixed_work`]).
const BUSY_CONTROL_LABEL: &str = "busy control: no call; 1 ms of fixed arithmetic a frame on a \
     thread of the benchmark, as long as the call above";

/// Checkpoints taken back to back to measure memory per checkpoint.
const MEMORY_CHECKPOINTS: usize = 3;

/// `system_control.diagnostics` of the app `session` is connected to.
async fn diagnostics(session: &McpSession) -> Value {
    session
        .execute("system_control", "diagnostics", json!({}))
        .await
        .payload()
}

/// The longest update and the highest p99 seen while a call runs, on the wall clock and in
/// the game thread's CPU time (the difference is time it waited for a core or a lock).
/// With each longest update, the bridge's own part of it (the rest is the game's systems), and
/// the part of that after the calls (housekeeping).
#[derive(Debug, Default, Clone, Copy)]
struct Updates {
    worst_ms: f64,
    worst_bridge_ms: f64,
    worst_housekeeping_ms: f64,
    p99_ms: f64,
    cpu_worst_ms: f64,
    cpu_worst_bridge_ms: f64,
    cpu_worst_housekeeping_ms: f64,
    cpu_p99_ms: f64,
}

impl Updates {
    fn see(&mut self, diagnostics: &Value) {
        let figure = |name: &str| diagnostics["updateMs"][name].as_f64().unwrap_or(0.0);
        if figure("worstMs") > self.worst_ms {
            self.worst_ms = figure("worstMs");
            self.worst_bridge_ms = figure("worstBridgeMs");
            self.worst_housekeeping_ms = figure("worstHousekeepingMs");
        }
        if figure("cpuWorstMs") > self.cpu_worst_ms {
            self.cpu_worst_ms = figure("cpuWorstMs");
            self.cpu_worst_bridge_ms = figure("cpuWorstBridgeMs");
            self.cpu_worst_housekeeping_ms = figure("cpuWorstHousekeepingMs");
        }
        self.p99_ms = self.p99_ms.max(figure("p99Ms"));
        self.cpu_p99_ms = self.cpu_p99_ms.max(figure("cpuP99Ms"));
    }

    /// The figures of a busy control's frames (they have no bridge part).
    fn of_busy(frames: &BusyFrames) -> Updates {
        let (p99_ms, worst_ms) = p99_and_worst_ms(&frames.wall);
        let (cpu_p99_ms, cpu_worst_ms) = p99_and_worst_ms(&frames.cpu);
        Updates {
            worst_ms,
            p99_ms,
            cpu_worst_ms,
            cpu_p99_ms,
            ..Updates::default()
        }
    }
}

/// Reads the update times on a session of its own until told to stop, then once more.
struct Sampler {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Updates>,
}

impl Sampler {
    async fn start(address: SocketAddr) -> Sampler {
        let session = McpSession::start(address).await;
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            let mut seen = Updates::default();
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(SAMPLE_EVERY) => seen.see(&diagnostics(&session).await),
                }
            }
            seen.see(&diagnostics(&session).await);
            seen
        });
        Sampler { stop, task }
    }

    async fn finish(self) -> Updates {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

/// Calls `bevy` asking for progress: a long call's stream then carries an event every frame
/// or so, where the reader would otherwise give up on a quiet stream.
async fn call_with_progress(session: &McpSession, arguments: Value) -> crate::mcp::CallOutcome {
    let id = session.next_id();
    session
        .call_with_id(json!(id), arguments, Some(json!(format!("bench-{id}"))))
        .await
}

/// Executes a call, granting consent when the action asks for it, with the longest timeout.
async fn execute_granted(session: &McpSession, tool: &str, action: &str, params: Value) -> Value {
    let options = json!({"timeoutMs": TIMEOUT_MS});
    let arguments = json!({"operation": "execute", "tool": tool, "action": action,
        "params": params, "options": options});
    let outcome = call_with_progress(session, arguments).await;
    if outcome.error_code().as_deref() != Some("CONSENT_REQUIRED") {
        return outcome.payload();
    }
    let mut next = outcome.payload()["error"]["nextCall"].clone();
    next["options"] = options;
    call_with_progress(session, next).await.payload()
}

/// One measured window: how long it took, over how many frames, the game's updates meanwhile.
struct Measured {
    reply: Value,
    row: Value,
    took: Duration,
}

/// What a measured window holds: `clients` copies of a call at once (each on a session of its
/// own), or no call at all for as long as a call took (the control: what this machine does to
/// the game's updates with the bridge idle, over a window of the same length), or no call and
/// frames of fixed work on a thread of the benchmark (the busy control: what this machine does
/// to frames as busy as a call's, with nothing in them that could be slow).
enum Work {
    Call((&'static str, &'static str, Value), usize),
    Nothing(Duration),
    Busy(Duration),
}

/// Runs one window of work and measures it.
async fn measure(address: SocketAddr, label: &str, work: Work, idle: Idle) -> Measured {
    let probe = McpSession::start(address).await;
    // The update times cover the last two seconds: let the calls before this one leave them.
    tokio::time::sleep(UPDATES_WINDOW).await;
    let clients = match &work {
        Work::Call(_, clients) => *clients,
        Work::Nothing(_) | Work::Busy(_) => 0,
    };
    let mut busy = None;
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(McpSession::start(address).await);
    }
    let frame_before = diagnostics(&probe).await["frame"].as_u64();
    // The busy control is judged by its own frames: the game's update times are not sampled.
    let sampler = match &work {
        Work::Busy(_) => None,
        Work::Call(..) | Work::Nothing(_) => Some(Sampler::start(address).await),
    };
    let started = Instant::now();
    let mut replies = Vec::with_capacity(clients);
    match work {
        Work::Call((tool, action, params), _) => {
            let mut running = tokio::task::JoinSet::new();
            for session in sessions {
                let params = params.clone();
                running.spawn(async move { execute_granted(&session, tool, action, params).await });
            }
            while let Some(reply) = running.join_next().await {
                // A client that failed (its stream went quiet past the reader's limit) is an error.
                replies.push(reply.unwrap_or_else(|failed| {
                    json!({"error": {"code": "BENCH_CLIENT_FAILED", "message": failed.to_string()}})
                }));
            }
        }
        Work::Nothing(duration) => tokio::time::sleep(duration).await,
        Work::Busy(duration) => {
            busy = Some(
                tokio::task::spawn_blocking(move || busy_frames(duration))
                    .await
                    .unwrap_or_default(),
            );
        }
    }
    let took = started.elapsed();
    let frame_after = diagnostics(&probe).await["frame"].as_u64();
    tokio::time::sleep(AFTERMATH).await;
    let updates = match (&busy, sampler) {
        (Some(frames), _) => Updates::of_busy(frames),
        (None, Some(sampler)) => sampler.finish().await,
        (None, None) => Updates::default(),
    };
    // The first failure if any call failed, else any reply.
    let reply = replies
        .iter()
        .find(|reply| reply["error"].is_object())
        .or(replies.first())
        .cloned()
        .unwrap_or_default();
    let error = reply["error"]["code"].as_str().map(str::to_owned);
    let within = updates.worst_ms <= idle.p99_ms + ALLOWED_OVER_IDLE_MS;
    let within_cpu = updates.cpu_worst_ms <= idle.cpu_p99_ms + ALLOWED_OVER_IDLE_MS;
    let row = json!({
        "call": label,
        "clients": clients,
        "control": clients == 0,
        "controlKind": match (clients, busy.is_some()) {
            (0, true) => json!("busy"),
            (0, false) => json!("idle"),
            _ => Value::Null,
        },
        "ms": took.as_secs_f64() * 1000.0,
        "frames": frame_before.zip(frame_after).map(|(before, after)| after.saturating_sub(before)),
        "worstUpdateMs": updates.worst_ms,
        "worstUpdateBridgeMs": updates.worst_bridge_ms,
        "worstUpdateHousekeepingMs": updates.worst_housekeeping_ms,
        "p99UpdateMs": updates.p99_ms,
        "worstUpdateCpuMs": updates.cpu_worst_ms,
        "worstUpdateCpuBridgeMs": updates.cpu_worst_bridge_ms,
        "worstUpdateCpuHousekeepingMs": updates.cpu_worst_housekeeping_ms,
        "p99UpdateCpuMs": updates.cpu_p99_ms,
        "error": error,
        "withinTarget": within && error.is_none(),
        "withinTargetCpu": within_cpu && error.is_none(),
    });
    Measured { reply, row, took }
}

/// The idle app's p99 update, on both clocks: what each call is held against.
#[derive(Debug, Clone, Copy)]
struct Idle {
    p99_ms: f64,
    cpu_p99_ms: f64,
}

/// A `where` of eight tests that every crate passes, so the whole world is read and tested.
fn eight_tests() -> Value {
    let test = |path: &str, op: &str, value: f64| json!({"component": "Transform", "path": path, "op": op, "value": value});
    json!([
        test(".translation.x", "gt", -1.0e9),
        test(".translation.x", "lt", 1.0e9),
        test(".translation.y", "gt", -1.0e9),
        test(".translation.y", "lt", 1.0e9),
        test(".translation.z", "gt", -1.0e9),
        test(".translation.z", "lt", 1.0e9),
        test(".scale.x", "gt", 0.0),
        test(".scale.y", "gt", 0.0),
    ])
}

/// What a checkpoint costs in resident memory against its serialized bytes.
fn memory_figures(grown_kib: Option<u64>, bytes: u64) -> Value {
    let grown = grown_kib.map(|kib| kib * 1024);
    let ratio = grown.map(|grown| grown as f64 / bytes.max(1) as f64);
    json!({
        "serializedBytes": bytes,
        "residentGrowthBytes": grown,
        "residentPerSerialized": ratio,
        "met": bytes > 0 && ratio.is_some_and(|ratio| ratio <= 2.0),
    })
}

/// Three more checkpoints of the world as it is: they share what is unchanged with the first, so
/// they cost far less than their serialized bytes.
async fn later_checkpoints(server: &ServerProcess, session: &McpSession) -> Value {
    let before = resident_kib(server.pid()).ok();
    let mut bytes = 0;
    for index in 0..MEMORY_CHECKPOINTS {
        let taken = execute_granted(
            session,
            "history",
            "checkpoint",
            json!({"name": format!("memory-{index}")}),
        )
        .await;
        bytes += taken["bytes"].as_u64().unwrap_or(0);
    }
    let after = resident_kib(server.pid()).ok();
    let grown = before
        .zip(after)
        .map(|(before, after)| after.saturating_sub(before));
    let mut figures = memory_figures(grown, bytes);
    figures["checkpoints"] = json!(MEMORY_CHECKPOINTS);
    figures
}

/// The whole-world calls in the order they run (each leaves the world for the next).
fn calls() -> Vec<(&'static str, (&'static str, &'static str, Value), usize)> {
    let ordered = json!({"with": ["Transform"], "components": [], "limit": 10,
        "orderBy": {"component": "Transform", "path": ""}});
    let filtered = json!({"with": ["Transform"], "components": [], "limit": 10,
        "where": eight_tests(), "orderBy": {"component": "Transform", "path": ".translation.x"}});
    vec![
        (
            "checkpoint",
            ("history", "checkpoint", json!({"name": "start"})),
            1,
        ),
        (
            "diff against now",
            ("history", "diff", json!({"from": "start"})),
            1,
        ),
        (
            "restore (one entity despawned since)",
            ("history", "restore", json!({"name": "start"})),
            1,
        ),
        (
            "game.spawn_wave {count: 20}",
            ("game", "spawn_wave", json!({"count": 20})),
            1,
        ),
        ("game.reset_level", ("game", "reset_level", json!({})), 1),
        (
            "query ordered by a whole Transform",
            ("inspect", "query", ordered),
            1,
        ),
        (
            "16 clients: 8-test where + orderBy",
            ("inspect", "query", filtered),
            16,
        ),
        (
            "manage_world.clear",
            ("manage_world", "clear", json!({})),
            1,
        ),
        (
            "undo of the clear",
            // The clear was another session's: undo takes back every session's newest change.
            ("history", "undo", json!({"allSessions": true})),
            1,
        ),
        (
            "clear again, then restore",
            ("history", "restore", json!({"name": "start"})),
            1,
        ),
        // Last: the load doubles the world.
        (
            "manage_world.save (the whole world)",
            (
                "manage_world",
                "save",
                json!({"name": "bench-world", "overwrite": true}),
            ),
            1,
        ),
        (
            "manage_world.load (that file)",
            ("manage_world", "load", json!({"name": "bench-world"})),
            1,
        ),
    ]
}

/// The calls a call needs run before it (each needs at most one level).
fn needs(label: &str) -> &'static [&'static str] {
    match label {
        "diff against now"
        | "restore (one entity despawned since)"
        | "clear again, then restore" => &["checkpoint"],
        "undo of the clear" => &["manage_world.clear"],
        "manage_world.load (that file)" => &["manage_world.save (the whole world)"],
        _ => &[],
    }
}

/// Whether a call runs: every call when nothing is named, else those whose label holds a named
/// word and the calls they need.
fn runs(label: &str, named: &[String]) -> bool {
    let kept = |label: &str| named.iter().any(|word| label.contains(word.as_str()));
    named.is_empty()
        || kept(label)
        || calls()
            .iter()
            .any(|(other, _, _)| kept(other) && needs(other).contains(&label))
}

/// Every whole-world call at one world size.
async fn one_size(config: &BenchConfig, size: u32) -> Result<Value, BenchError> {
    let name = format!("bevy-mcp-whole-{size}");
    let count = size.to_string();
    let scenes = config.log_dir.join(format!("{name}-scenes"));
    let scenes = scenes.to_string_lossy();
    let server = ServerProcess::start(
        &name,
        &config.bin_dir.join("bevy-mcp"),
        &[
            "--port",
            "0",
            "--fps",
            "60",
            "--extra-entities",
            &count,
            "--scenes-dir",
            &scenes,
        ],
        &config.log_dir,
    )?;
    let session = McpSession::start(server.address).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let idle = diagnostics(&session).await["updateMs"].clone();
    let idle_p99 = Idle {
        p99_ms: idle["p99Ms"].as_f64().unwrap_or(0.0),
        cpu_p99_ms: idle["cpuP99Ms"].as_f64().unwrap_or(0.0),
    };
    let mut rows = Vec::new();
    let mut checkpoint_bytes = Value::Null;
    let mut memory = Value::Null;
    let mut later = Value::Null;
    let named = &config.whole_world_calls;
    for (label, call, clients) in calls() {
        if !runs(label, named) {
            continue;
        }
        // What each call finds: a change to restore, a world to clear again.
        if label.starts_with("restore") {
            execute_granted(
                &session,
                "control_entity",
                "despawn",
                json!({"entity": "Crate 1"}),
            )
            .await;
        }
        if label.starts_with("manage_world.save") && named.is_empty() {
            // Before the load doubles the world.
            later = later_checkpoints(&server, &session).await;
        }
        if label.starts_with("clear again") {
            execute_granted(&session, "manage_world", "clear", json!({})).await;
        }
        let resident_before = resident_kib(server.pid()).ok();
        let measured = measure(server.address, label, Work::Call(call, clients), idle_p99).await;
        if label == "checkpoint" {
            checkpoint_bytes = measured.reply["bytes"].clone();
            // The first checkpoint of the world: nothing is shared yet.
            let grown = resident_before
                .zip(resident_kib(server.pid()).ok())
                .map(|(before, after)| after.saturating_sub(before));
            memory = memory_figures(grown, checkpoint_bytes.as_u64().unwrap_or(0));
        }
        rows.push(measured.row);
        if config.whole_world_controls {
            for (label, control) in [
                (CONTROL_LABEL, Work::Nothing(measured.took)),
                (BUSY_CONTROL_LABEL, Work::Busy(measured.took)),
            ] {
                rows.push(measure(server.address, label, control, idle_p99).await.row);
            }
        }
    }
    let (controls, calls): (Vec<&Value>, Vec<&Value>) =
        rows.iter().partition(|row| row["control"] == json!(true));
    let (busy, controls): (Vec<&Value>, Vec<&Value>) = controls
        .into_iter()
        .partition(|row| row["controlKind"] == json!("busy"));
    let met = calls.iter().all(|row| row["withinTarget"] == json!(true));
    let met_cpu = calls
        .iter()
        .all(|row| row["withinTargetCpu"] == json!(true));
    let over = |rows: &[&Value], key: &str| json!({"over": rows.iter().filter(|row| row[key] != json!(true)).count(), "of": rows.len()});
    let windows_over = json!({
        "calls": {"wall": over(&calls, "withinTarget"), "cpu": over(&calls, "withinTargetCpu")},
        "controls": {"wall": over(&controls, "withinTarget"), "cpu": over(&controls, "withinTargetCpu")},
        "busyControls": {"wall": over(&busy, "withinTarget"), "cpu": over(&busy, "withinTargetCpu")},
    });
    Ok(json!({
        "entities": size,
        "idleUpdateMs": idle,
        "checkpointBytes": checkpoint_bytes,
        "calls": rows,
        "memoryPerCheckpoint": memory,
        "laterCheckpoints": later,
        "met": met && memory["met"] == json!(true),
        "metInCpuTime": met_cpu,
        "windowsOver": windows_over,
    }))
}

/// P8's whole-world rows at every world size; the target is judged at the largest.
pub(super) async fn whole_world_operations(config: &BenchConfig) -> Result<Value, BenchError> {
    let mut worlds = Vec::new();
    let sizes = if config.whole_world_sizes.is_empty() {
        WORLD_SIZES.to_vec()
    } else {
        config.whole_world_sizes.clone()
    };
    for size in sizes {
        eprintln!("whole-world calls at {size} entities...");
        worlds.push(one_size(config, size).await?);
    }
    let largest = worlds.last();
    let met = largest.is_some_and(|largest| largest["met"] == json!(true));
    let met_cpu = largest.is_some_and(|largest| largest["metInCpuTime"] == json!(true));
    Ok(json!({"worlds": worlds, "met": met, "metInCpuTime": met_cpu}))
}

/// The row that counts the windows over the target, the calls' beside the controls', when the
/// run had controls: if windows with no call go over as often, the machine makes the misses.
fn windows_over(world: &Value) -> String {
    let over = &world["windowsOver"];
    let count = |rows: &str, clock: &str| {
        format!(
            "{} of {}",
            over[rows][clock]["over"], over[rows][clock]["of"]
        )
    };
    if over["controls"]["wall"]["of"].as_u64().unwrap_or(0) == 0 {
        return String::new();
    }
    // Runs before the busy control was added have none.
    let busy = if over["busyControls"]["wall"]["of"].as_u64().unwrap_or(0) == 0 {
        String::new()
    } else {
        format!(
            "; busy controls (fixed work) {}, {}",
            count("busyControls", "wall"),
            count("busyControls", "cpu"),
        )
    };
    format!(
        "| {} | windows over the target: calls {} on the wall clock, {} in CPU time; controls (no call) {}, {}{busy} | | | | | | |\n",
        world["entities"],
        count("calls", "wall"),
        count("calls", "cpu"),
        count("controls", "wall"),
        count("controls", "cpu"),
    )
}

/// The Markdown of the whole-world rows.
pub(super) fn render(results: &Value, figure: fn(&Value, usize) -> String) -> String {
    let mut out = format!(
        "\n**P8 whole-world calls** (sandbox at 60 fps plus N crates; each call alone unless \
         said; target at 100,000: no update while it runs, or in the second after it \
         answers, longer than the idle p99 + \
         {ALLOWED_OVER_IDLE_MS} ms, resident memory per checkpoint ≤ 2× its serialized bytes: \
         {}; the same in the game thread's CPU time: {}):\n\n\
         | entities | call | ms | frames | worst update ms (bridge's part, of it after the calls) | p99 update ms | worst (bridge's part, of it after the calls) / p99 update CPU ms | within target (wall / CPU) |\n\
         |---|---|---|---|---|---|---|---|\n",
        if results["met"] == json!(true) {
            "met"
        } else {
            "NOT met"
        },
        if results["metInCpuTime"] == json!(true) {
            "met"
        } else {
            "NOT met"
        }
    );
    for world in results["worlds"].as_array().into_iter().flatten() {
        out += &format!(
            "| {} | idle | | | {} | {} | {} / {} | |\n",
            world["entities"],
            figure(&world["idleUpdateMs"]["worstMs"], 2),
            figure(&world["idleUpdateMs"]["p99Ms"], 2),
            figure(&world["idleUpdateMs"]["cpuWorstMs"], 2),
            figure(&world["idleUpdateMs"]["cpuP99Ms"], 2),
        );
        for row in world["calls"].as_array().into_iter().flatten() {
            let error = row["error"]
                .as_str()
                .map(|code| format!(" ({code})"))
                .unwrap_or_default();
            let yes = |key: &str| if row[key] == json!(true) { "yes" } else { "no" };
            out += &format!(
                "| {} | {}{error} | {} | {} | {} ({}, {}) | {} | {} ({}, {}) / {} | {} / {} |\n",
                world["entities"],
                row["call"].as_str().unwrap_or_default(),
                figure(&row["ms"], 0),
                row["frames"],
                figure(&row["worstUpdateMs"], 2),
                figure(&row["worstUpdateBridgeMs"], 2),
                figure(&row["worstUpdateHousekeepingMs"], 2),
                figure(&row["p99UpdateMs"], 2),
                figure(&row["worstUpdateCpuMs"], 2),
                figure(&row["worstUpdateCpuBridgeMs"], 2),
                figure(&row["worstUpdateCpuHousekeepingMs"], 2),
                figure(&row["p99UpdateCpuMs"], 2),
                yes("withinTarget"),
                yes("withinTargetCpu"),
            );
        }
        out += &windows_over(world);
        let memory = &world["memoryPerCheckpoint"];
        let later = &world["laterCheckpoints"];
        // A run of some calls only (`--calls`) takes no later checkpoints.
        let later = if later["checkpoints"].is_null() {
            String::new()
        } else {
            format!(
                "; {} more of the world then, {} B serialized, by {} B (they share what is unchanged)",
                later["checkpoints"], later["serializedBytes"], later["residentGrowthBytes"],
            )
        };
        // A run of some calls only (`--calls`) may take no checkpoint at all.
        if memory.is_null() {
            out += &format!(
                "| {} | memory: not measured (this run took no checkpoint) | | | | | | |\n",
                world["entities"]
            );
            continue;
        }
        out += &format!(
            "| {} | memory: the first checkpoint, {} B serialized, grew the process by {} B ({}×){later} | | | | | | {} |\n",
            world["entities"],
            memory["serializedBytes"],
            memory["residentGrowthBytes"],
            figure(&memory["residentPerSerialized"], 2),
            if memory["met"] == json!(true) {
                "yes"
            } else {
                "no"
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(value: &Value, places: usize) -> String {
        value
            .as_f64()
            .map_or_else(String::new, |value| format!("{value:.places$}"))
    }

    #[test]
    fn controls_are_counted_apart_from_calls_only_when_the_run_had_them() {
        let world = |controls: u64| {
            json!({"worlds": [{
                "entities": 100000,
                "calls": [],
                "memoryPerCheckpoint": null,
                "laterCheckpoints": null,
                "windowsOver": {
                    "calls": {"wall": {"over": 2, "of": 12}, "cpu": {"over": 0, "of": 12}},
                    "controls": {"wall": {"over": 3, "of": controls}, "cpu": {"over": 1, "of": controls}},
                },
            }]})
        };
        let with = render(&world(12), figure);
        assert!(
            with.contains("calls 2 of 12 on the wall clock, 0 of 12 in CPU time; controls (no call) 3 of 12, 1 of 12"),
            "{with}"
        );
        assert!(!render(&world(0), figure).contains("windows over"));
        // Busy controls are counted apart from the idle ones, when the run had them.
        assert!(!with.contains("busy"), "{with}");
        let mut busy = world(12);
        busy["worlds"][0]["windowsOver"]["busyControls"] =
            json!({"wall": {"over": 1, "of": 12}, "cpu": {"over": 4, "of": 12}});
        let with_busy = render(&busy, figure);
        assert!(
            with_busy.contains(
                "controls (no call) 3 of 12, 1 of 12; busy controls (fixed work) 1 of 12, 4 of 12"
            ),
            "{with_busy}"
        );
    }

    #[test]
    fn the_memory_row_names_later_checkpoints_only_when_a_run_took_them() {
        let world = |later: Value| {
            json!({"worlds": [{
                "entities": 1000,
                "calls": [],
                "memoryPerCheckpoint": {"serializedBytes": 10, "residentGrowthBytes": 15, "residentPerSerialized": 1.5, "met": true},
                "laterCheckpoints": later,
            }]})
        };
        let some_calls = render(&world(Value::Null), figure);
        assert!(some_calls.contains("(1.50×) |"), "{some_calls}");
        assert!(!some_calls.contains("null"), "{some_calls}");
        let no_checkpoint = render(
            &json!({"worlds": [{
                "entities": 1000,
                "calls": [],
                "memoryPerCheckpoint": null,
                "laterCheckpoints": null,
            }]}),
            figure,
        );
        assert!(
            no_checkpoint.contains("memory: not measured") && !no_checkpoint.contains("null"),
            "{no_checkpoint}"
        );
        let every_call = render(
            &world(json!({"checkpoints": 3, "serializedBytes": 30, "residentGrowthBytes": 12})),
            figure,
        );
        assert!(
            every_call.contains("; 3 more of the world then, 30 B serialized, by 12 B"),
            "{every_call}"
        );
    }
}
