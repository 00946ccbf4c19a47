//! Facts about the bridge that `system_control.app_info` reports: whether a token is required,
//! the limits in force, the plugins the app added.

use bevy::prelude::Resource;
use serde_json::Value;

/// Facts about the bridge for `system_control.app_info`.
#[derive(Resource, Debug, Clone)]
pub struct BridgeFacts {
    /// Whether a capability token is required.
    pub token_required: bool,
    /// The server limits, as JSON.
    pub limits: Value,
    /// The well-known plugins the app added (filled in when the app finishes building).
    pub plugins: Vec<&'static str>,
}
