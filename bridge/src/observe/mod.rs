//! What the bridge observes of the app and of itself, for `system_control`: recent log lines,
//! frame times, the audit trail of execute calls, facts about the bridge, the terms `search`
//! may match of the running app, and where UI nodes are on screen. All bounded.

pub(crate) mod audit;
pub mod doctor;
pub(crate) mod facts;
pub(crate) mod frames;
pub(crate) mod logs;
pub(crate) mod search_terms;
#[cfg(feature = "render")]
pub(crate) mod ui_nodes;

use std::path::PathBuf;
use std::sync::Arc;

use bevy::app::{App, Plugin};
use bevy::ecs::schedule::IntoScheduleConfigs;
use serde_json::Value;

use crate::runtime::executor::process_mailbox;
use crate::runtime::schedule::{BridgeLast, BridgeSystems};
use crate::runtime::transport::{TransportAudit, TransportLogFeed};
use audit::{AuditLog, SharedAuditLog};
use facts::BridgeFacts;
use frames::{FrameTimes, record_frame_time};

/// What `system_control` reports: the audit trail (which the transport writes), frame times, log
/// lines, and facts about the bridge.
#[derive(Debug, Clone)]
pub struct BridgeObservePlugin {
    audit_file: Option<PathBuf>,
    audit_file_max_bytes: u64,
    token_required: bool,
    limits: Value,
    bridge: &'static str,
}

impl BridgeObservePlugin {
    /// An audit trail (also appended to `audit_file`, rotating at `audit_file_max_bytes`), and
    /// the facts `app_info` shows: whether a token is required, the limits in force, and the
    /// bridge's own plugin name among the app's plugins.
    pub fn new(
        audit_file: Option<PathBuf>,
        audit_file_max_bytes: u64,
        token_required: bool,
        limits: Value,
        bridge: &'static str,
    ) -> Self {
        BridgeObservePlugin {
            audit_file,
            audit_file_max_bytes,
            token_required,
            limits,
            bridge,
        }
    }
}

impl Plugin for BridgeObservePlugin {
    fn build(&self, app: &mut App) {
        let audit = Arc::new(AuditLog::new(
            self.audit_file.clone(),
            self.audit_file_max_bytes,
        ));
        let log_feed = mcp_native_transport::LogFeed::new();
        let attached = logs::attach_log_feed(log_feed.clone());
        app.insert_resource(TransportAudit(audit.clone()))
            .insert_resource(TransportLogFeed(log_feed, attached))
            .insert_resource(SharedAuditLog(audit))
            .insert_resource(BridgeFacts {
                token_required: self.token_required,
                limits: self.limits.clone(),
                plugins: Vec::new(),
            })
            .init_resource::<FrameTimes>()
            .add_systems(
                BridgeLast,
                record_frame_time
                    .in_set(BridgeSystems::Calls)
                    .before(process_mailbox),
            );
    }

    fn finish(&self, app: &mut App) {
        let plugins = facts::known_plugins(app, self.bridge);
        if let Some(mut facts) = app.world_mut().get_resource_mut::<BridgeFacts>() {
            facts.plugins = plugins;
        }
    }
}
