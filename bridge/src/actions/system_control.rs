//! `system_control`: versions, limits, logs, frame timing and the audit trail.

use bevy::prelude::World;
use bevy_mcp_generated::params::*;
use serde_json::{Value, json};

use super::manage_asset::HeldAssets;
use crate::game::GameActions;
use crate::observe::audit::SharedAuditLog;
use crate::observe::doctor::{Check, client_checks};
use crate::observe::facts::BridgeFacts;
use crate::observe::frames::FrameTimes;
use crate::observe::logs::{level_rank, log_ring};
use crate::reflect::world::frame;
use crate::reflect::world::plain_entity_count;
use crate::runtime::action::Action;
use crate::runtime::budget::FrameBudget;
use crate::runtime::catalog::ServedCatalog;
use crate::runtime::executor::ActiveJobs;
use crate::runtime::runner::UpdateTimes;
use crate::runtime::transport::{BridgeEndpoint, TransportStats};

/// `system_control.app_info`.
pub(crate) const APP_INFO: Action<SystemControlAppInfoParams> =
    Action::read(|world, _| Ok(app_info(world)));
/// `system_control.get_logs`.
pub(crate) const GET_LOGS: Action<SystemControlGetLogsParams> =
    Action::read(|_, params| Ok(get_logs(params)));
/// `system_control.diagnostics`.
pub(crate) const DIAGNOSTICS: Action<SystemControlDiagnosticsParams> =
    Action::run(|world, _| Ok(diagnostics(world)));
/// `system_control.audit_log`.
pub(crate) const AUDIT_LOG: Action<SystemControlAuditLogParams> =
    Action::read(|world, params| Ok(audit_log(world, params)));

/// `system_control.doctor`.
pub(crate) const DOCTOR: Action<SystemControlDoctorParams> =
    Action::read(|world, params| Ok(doctor(world, params)));

fn doctor(world: &World, params: SystemControlDoctorParams) -> Value {
    let token_required = world
        .get_resource::<BridgeFacts>()
        .is_some_and(|facts| facts.token_required);
    let mut checks = Vec::new();
    let url = match world.get_resource::<BridgeEndpoint>() {
        Some(BridgeEndpoint::Listening { url, .. }) => {
            checks.push(Check::pass("endpoint", format!("listening on {url}")));
            Some(url.clone())
        }
        Some(BridgeEndpoint::Failed(reason)) => {
            checks.push(Check::fail(
                "endpoint",
                format!("the MCP server did not start: {reason}"),
                "free the port (or pick another with BridgeConfig::with_port / --port) and restart the app",
            ));
            None
        }
        _ => {
            checks.push(Check::fail(
                "endpoint",
                "the bridge serves no HTTP endpoint (BridgeConfig::serve is false, or it is still starting)",
                "leave BridgeConfig::serve on, and call the doctor again after the first frames",
            ));
            None
        }
    };
    checks.push(Check::pass(
        "token",
        if token_required {
            "a capability token is required: clients send X-MCP-Capability-Token: <token>"
        } else {
            "no token: the server answers loopback clients only"
        },
    ));
    checks.push(crate::actions::view::rendering_check(world));
    if let Some(url) = url {
        let project = params
            .project_dir
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        checks.extend(client_checks(
            &project,
            home.as_deref(),
            &url,
            token_required,
        ));
    }
    json!({
        "ok": checks.iter().all(|check| check.ok),
        "checks": checks.iter().map(Check::to_json).collect::<Vec<_>>(),
    })
}

fn app_info(world: &World) -> Value {
    let endpoint = match world.get_resource::<BridgeEndpoint>() {
        Some(BridgeEndpoint::Listening { url, .. }) => json!({"url": url}),
        Some(BridgeEndpoint::Failed(reason)) => json!({"error": reason}),
        _ => json!({"url": null}),
    };
    let facts = world.get_resource::<BridgeFacts>();
    let mut endpoint = endpoint;
    endpoint["tokenRequired"] = json!(facts.is_some_and(|facts| facts.token_required));
    json!({
        "bridgeVersion": env!("CARGO_PKG_VERSION"),
        "bevyVersion": bevy::compat::BEVY_VERSION,
        "catalogRevision": world.get_resource::<ServedCatalog>().map_or(bevy_mcp_generated::CATALOG.revision, |served| served.0.revision),
        "protocolVersions": mcp_native_transport::jsonrpc::SUPPORTED_VERSIONS,
        "endpoint": endpoint,
        "limits": facts.map_or(Value::Null, |facts| facts.limits.clone()),
        "plugins": facts.map_or_else(Vec::new, |facts| facts.plugins.clone()),
        "pluginsNote": "Only well-known Bevy plugins and this bridge can be detected: Bevy does not publish its full plugin list.",
        "gameTools": world.get_resource::<GameActions>().map_or_else(Vec::new, GameActions::describe_tools),
        "frame": frame(world),
    })
}

fn get_logs(params: SystemControlGetLogsParams) -> Value {
    let Some(ring) = log_ring() else {
        return json!({
            "lines": [],
            "cursor": 0,
            "capturing": false,
            "hint": "Log capture is not installed: add LogPlugin { custom_layer: bevy_mcp_bridge::capture_logs, .. } to the app.",
        });
    };
    let wanted = level_rank(match params.level {
        SystemControlGetLogsParamsLevel::Error => "error",
        SystemControlGetLogsParamsLevel::Warn => "warn",
        SystemControlGetLogsParamsLevel::Info => "info",
        SystemControlGetLogsParamsLevel::Debug => "debug",
        SystemControlGetLogsParamsLevel::Trace => "trace",
    });
    let needle = params.contains.as_ref().map(|text| text.to_lowercase());
    let since = params.since.unwrap_or(0);
    let lines = ring.snapshot();
    // Lines newer than the cursor that were pushed out of the ring before this read.
    let evicted = lines
        .first()
        .map_or(0, |oldest| oldest.seq.saturating_sub(since + 1));
    let matching: Vec<_> = lines
        .into_iter()
        .filter(|line| line.seq > since && level_rank(line.level) <= wanted)
        .filter(|line| {
            needle.as_ref().is_none_or(|needle| {
                line.message.to_lowercase().contains(needle.as_str())
                    || line.target.to_lowercase().contains(needle.as_str())
            })
        })
        .collect();
    let skip = matching.len().saturating_sub(params.limit as usize);
    let rows: Vec<Value> = matching
        .iter()
        .skip(skip)
        .map(|line| json!({"seq": line.seq, "time": line.time, "level": line.level, "target": line.target, "message": line.message}))
        .collect();
    json!({
        "lines": rows,
        "cursor": ring.cursor(),
        "dropped": skip as u64 + evicted,
        "capturing": true,
    })
}

fn diagnostics(world: &mut World) -> Value {
    let samples: Vec<f64> = world
        .get_resource::<FrameTimes>()
        .map(|times| times.0.iter().copied().collect())
        .unwrap_or_default();
    let average = if samples.is_empty() {
        0.0
    } else {
        samples.iter().sum::<f64>() / samples.len() as f64
    };
    let worst = samples.iter().copied().fold(0.0, f64::max);
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    // The nearest-rank 99th percentile of the recent frames.
    let p99 = sorted
        .get((sorted.len() * 99).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or(0.0);
    let fps = if average > 0.0 { 1000.0 / average } else { 0.0 };
    let mut reply = json!({
        "frame": frame(world),
        "fps": fps,
        "frameTimeMs": {"average": average, "p99": p99, "worst": worst, "samples": samples.len()},
        "entityCount": plain_entity_count(world),
        "bridge": bridge_counts(world),
        "frameBudget": world
            .get_resource::<FrameBudget>()
            .map_or(Value::Null, FrameBudget::to_json),
    });
    // The whole update of each recent frame, when the bridge's runner runs the app.
    if let Some(times) = world.get_resource::<UpdateTimes>() {
        reply["updateMs"] = times.to_json();
    }
    #[cfg(feature = "render")]
    if let Some(recoveries) =
        world.get_resource::<crate::history::render_backstop::RenderRecoveries>()
    {
        reply["renderRecoveries"] = recoveries_json(recoveries);
    }
    reply
}

/// What the render backstop did: each recovery with the journal entries it took back.
#[cfg(feature = "render")]
fn recoveries_json(recoveries: &crate::history::render_backstop::RenderRecoveries) -> Value {
    let rows: Vec<Value> = recoveries
        .recoveries
        .iter()
        .map(|recovery| {
            let entries: Vec<Value> = recovery
                .rolled_back
                .iter()
                .map(|(id, action)| json!({"entry": id, "action": action}))
                .collect();
            json!({"frame": recovery.frame, "error": recovery.error, "rolledBack": entries})
        })
        .collect();
    json!({"recovered": rows, "unexplained": recoveries.unexplained})
}

/// What the bridge itself holds right now: the leak check of the soak test reads it too.
fn bridge_counts(world: &World) -> Value {
    let mut counts = json!({
        "activeJobs": world.get_resource::<ActiveJobs>().map_or(0, ActiveJobs::len),
        "heldAssets": world.get_resource::<HeldAssets>().map_or(0, |held| held.0.len()),
        // Entities removed through the bridge and held out of sight for undo and restore.
        "heldEntities": world
            .get_resource::<crate::history::holding::HoldingArea>()
            .map_or(0, crate::history::holding::HoldingArea::held),
    });
    if let Some(TransportStats(stats)) = world.get_resource::<TransportStats>() {
        counts["sessions"] = json!(stats.sessions());
        counts["callsInFlight"] = json!(stats.calls_in_flight());
    }
    counts
}

fn audit_log(world: &World, params: SystemControlAuditLogParams) -> Value {
    let entries = world
        .get_resource::<SharedAuditLog>()
        .map(|log| log.0.snapshot())
        .unwrap_or_default();
    let effect = params.effect.map(|effect| match effect {
        SystemControlAuditLogParamsEffect::Read => "read",
        SystemControlAuditLogParamsEffect::Write => "write",
        SystemControlAuditLogParamsEffect::Destructive => "destructive",
    });
    let matching: Vec<Value> = entries
        .into_iter()
        .filter(|entry| effect.is_none_or(|effect| entry["effect"] == json!(effect)))
        .collect();
    let skip = matching.len().saturating_sub(params.limit as usize);
    json!({"entries": matching[skip..], "total": matching.len()})
}
