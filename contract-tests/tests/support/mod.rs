//! A test `Dispatch` with instant, slow, gated and failing actions, and a server around it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bevy_mcp_generated::CATALOG;
use mcp_native_transport::{
    ActionReply, Dispatch, DispatchCall, DispatchFuture, ImageContent, ServerBuilder, ServerConfig,
    ServerHandle,
};
use mcp_native_transport::{ErrorCode, ToolError};
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// What the test dispatcher saw.
#[derive(Debug)]
pub struct Observed {
    /// Gated jobs that started running.
    pub started: AtomicUsize,
    /// Jobs that observed their cancellation token.
    pub cancelled: AtomicUsize,
    /// Every dispatched call, as `tool.action`.
    pub calls: parking_lot::Mutex<Vec<String>>,
    /// Gated jobs wait for a permit here.
    pub gate: Semaphore,
}

/// The test dispatcher:
/// - `control_app.step_frames {frames}`: slow, 5 ms per frame, progress each frame, cancellable;
/// - `control_app.resume`: gated ("queued") until a permit is added, unless cancelled first;
/// - `control_app.wait_until`: never finishes on its own; observes cancellation;
/// - `inspect.get_entity`: fails with `ENTITY_NOT_FOUND` for `"Missing"`, else echoes;
/// - `inspect.list_entities`: returns 120 rows;
/// - `inspect.describe_type`: returns an 800-character string;
/// - anything else: echoes its params.
#[derive(Debug, Clone)]
pub struct TestDispatch(pub Arc<Observed>);

impl TestDispatch {
    pub fn new() -> Self {
        TestDispatch(Arc::new(Observed {
            started: AtomicUsize::new(0),
            cancelled: AtomicUsize::new(0),
            calls: parking_lot::Mutex::new(Vec::new()),
            gate: Semaphore::new(0),
        }))
    }
}

impl Dispatch for TestDispatch {
    fn dispatch(&self, call: DispatchCall) -> DispatchFuture {
        let observed = Arc::clone(&self.0);
        observed
            .calls
            .lock()
            .push(format!("{}.{}", call.tool.name, call.action.name));
        Box::pin(async move { answer(&observed, call).await })
    }
}

/// The test double's answers: echoes, slow and gated actions, errors, and one image.
async fn answer(observed: &Observed, call: DispatchCall) -> Result<ActionReply, ToolError> {
    let value = match (call.tool.name, call.action.name) {
        ("control_app", "step_frames") => {
            let frames = call.params["frames"].as_u64().unwrap_or(1);
            for frame in 1..=frames {
                tokio::select! {
                    () = call.cancel.cancelled() => {
                        observed.cancelled.fetch_add(1, Ordering::SeqCst);
                        return Err(ToolError::new(ErrorCode::new("CANCELLED"), "cancelled"));
                    }
                    () = tokio::time::sleep(Duration::from_millis(5)) => {}
                }
                call.progress
                    .report(frame as f64, Some(frames as f64), None);
            }
            Ok(json!({"stepped": frames, "frame": frames, "paused": false}))
        }
        ("control_app", "resume") => {
            tokio::select! {
                biased;
                () = call.cancel.cancelled() => {
                    observed.cancelled.fetch_add(1, Ordering::SeqCst);
                    Err(ToolError::new(ErrorCode::new("CANCELLED"), "cancelled before it started"))
                }
                permit = observed.gate.acquire() => {
                    drop(permit);
                    observed.started.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({"paused": false, "wasPaused": true, "frame": 1}))
                }
            }
        }
        ("control_app", "wait_until") => {
            call.cancel.cancelled().await;
            observed.cancelled.fetch_add(1, Ordering::SeqCst);
            Err(ToolError::new(ErrorCode::new("CANCELLED"), "cancelled"))
        }
        ("inspect", "get_entity") if call.params["entity"] == json!("Missing") => {
            Err(ToolError::new(
                ErrorCode::new("ENTITY_NOT_FOUND"),
                "no entity is named \"Missing\"",
            ))
        }
        ("inspect", "list_entities") => {
            let rows: Vec<Value> = (0..120)
                .map(|index| json!({"entity": format!("{index}v0"), "bits": index}))
                .collect();
            Ok(json!({"entities": rows, "total": 120, "offset": 0}))
        }
        ("inspect", "describe_type") => Ok(json!({"typePath": "x".repeat(800), "kind": "Struct"})),
        ("view", "screenshot") => {
            // Bytes of no real image: this double tests how content blocks travel.
            return Ok(ActionReply {
                value: json!({"width": 1, "height": 1}),
                images: vec![ImageContent {
                    mime_type: "image/png".to_owned(),
                    data: TEST_IMAGE_BYTES.to_vec(),
                }],
            });
        }
        _ => Ok(json!({"echo": call.params})),
    };
    value.map(ActionReply::from)
}

/// What the test double's `view.screenshot` attaches as its image.
pub const TEST_IMAGE_BYTES: &[u8] = &[0x89, b'P', b'N', b'G', 0, 1, 2, 254, 255];

/// A server on an ephemeral loopback port with the real generated catalog.
pub struct TestServer {
    pub handle: ServerHandle,
    pub address: SocketAddr,
    pub dispatch: TestDispatch,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    pub async fn start_with(configure: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let mut config = ServerConfig {
            identity: bevy_mcp_bridge::bevy_identity(),
            ..ServerConfig::default()
        };
        config.port(0);
        // The test double echoes its params: its results are not the records' shapes.
        config.check_output_schemas = false;
        configure(&mut config);
        let dispatch = TestDispatch::new();
        let handle = ServerBuilder::new(config, &CATALOG)
            .start(Arc::new(dispatch.clone()))
            .await
            .expect("server starts");
        TestServer {
            address: handle.local_addr(),
            handle,
            dispatch,
        }
    }
}

/// Polls `condition` every 20 ms, at most `tries` times; returns whether it became true.
pub async fn eventually(tries: usize, mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..tries {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}
