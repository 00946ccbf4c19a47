//! One HTTP request, from the first check to the response.
//!
//! The checks run in the order of DESIGN section 2: path and method, Host, Origin (and CORS
//! preflight), token, body size, media types, JSON, session, protocol version. Each refusal is a
//! [`Rejection`]; everything after them is JSON-RPC.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::audit::{self, AuditEntry, AuditSink};
use crate::config::ServerConfig;
use crate::dispatch::{Dispatch, DispatchCall, ProgressSink, ToolError};
use crate::gateway::guidance::{MAX_NAME_CHARS, clip};
use crate::gateway::{ExecutePlan, Gateway, Prepared, ToolResult};
use crate::http_guard::{self, Rejection, SESSION_HEADER, VERSION_HEADER};
use crate::jsonrpc::{self, Message, RequestKey, codes};
use crate::session::{BeginError, Session, SessionStore, short};
use crate::sse::{self, SseBody};

/// Frames buffered per call stream before progress updates are dropped.
const CALL_STREAM_CAPACITY: usize = 64;
/// Frames buffered on the GET stream.
const GET_STREAM_CAPACITY: usize = 16;

/// State shared by every connection.
pub(crate) struct Shared {
    pub config: ServerConfig,
    pub loopback: bool,
    pub sessions: SessionStore,
    pub gateway: Gateway,
    pub dispatch: Arc<dyn Dispatch>,
    pub calls: TaskTracker,
    pub root: CancellationToken,
    pub audit: Option<Arc<dyn AuditSink>>,
}

impl Shared {
    /// Records an execute in the audit trail, when one is kept.
    fn audit(
        &self,
        session: &Session,
        action: String,
        effect: &str,
        outcome: String,
        started: Instant,
        params: &Value,
    ) {
        if let Some(sink) = &self.audit {
            sink.record(AuditEntry {
                at: SystemTime::now(),
                session: short(&session.id).to_owned(),
                action,
                effect: effect.to_owned(),
                outcome,
                duration: started.elapsed(),
                params: audit::summarize(params),
            });
        }
    }
}

/// A response body: a complete JSON body, an SSE stream, or nothing.
#[derive(Debug)]
pub enum ResponseBody {
    /// A complete body.
    Full(Full<Bytes>),
    /// A stream of SSE frames.
    Sse(SseBody),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ResponseBody::Full(body) => Pin::new(body).poll_frame(cx),
            ResponseBody::Sse(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Full(body) => body.is_end_stream(),
            ResponseBody::Sse(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Full(body) => body.size_hint(),
            ResponseBody::Sse(_) => SizeHint::default(),
        }
    }
}

type HttpResponse = Response<ResponseBody>;

fn full(response: Response<Full<Bytes>>) -> HttpResponse {
    response.map(ResponseBody::Full)
}

fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(ResponseBody::Full(Full::new(Bytes::new())));
    *response.status_mut() = status;
    response
}

fn json_rpc(body: &impl serde::Serialize) -> HttpResponse {
    full(http_guard::json_response(StatusCode::OK, body))
}

/// Handles one request; never fails (every problem is a response).
pub(crate) async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    let (parts, body) = request.into_parts();
    let cors_origin = cors_origin(&shared, &parts.headers);
    let mut response = match route(&shared, &parts, body).await {
        Ok(response) => response,
        Err(rejection) => {
            if rejection.is_security() {
                tracing::warn!(
                    method = %parts.method,
                    status = rejection.status().as_u16(),
                    reason = %rejection.message(),
                    "refused a request"
                );
            }
            full(rejection.into_response())
        }
    };
    if let Some(origin) = cors_origin {
        add_cors_headers(response.headers_mut(), &origin, false);
    }
    Ok(response)
}

/// CORS is only for token-protected servers, and only for allowed origins: a page in a browser
/// on this machine can never drive an open server.
fn cors_origin(shared: &Shared, headers: &HeaderMap) -> Option<HeaderValue> {
    if shared.config.tokens.is_empty() {
        return None;
    }
    let origin = http_guard::origin(headers)?;
    http_guard::origin_allowed(origin, &shared.config.allowed_origins)
        .then(|| HeaderValue::from_str(origin).ok())
        .flatten()
}

fn add_cors_headers(headers: &mut HeaderMap, origin: &HeaderValue, preflight: bool) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("mcp-session-id, mcp-protocol-version"),
    );
    if preflight {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("POST, GET, DELETE, OPTIONS"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(
                "content-type, accept, authorization, x-mcp-capability-token, mcp-session-id, mcp-protocol-version, last-event-id",
            ),
        );
        headers.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
    }
}

async fn route(
    shared: &Arc<Shared>,
    parts: &Parts,
    body: Incoming,
) -> Result<HttpResponse, Rejection> {
    // 1. Path and method.
    if parts.uri.path() != "/mcp" {
        return Err(Rejection::NotFound);
    }
    if ![Method::POST, Method::GET, Method::DELETE, Method::OPTIONS].contains(&parts.method) {
        return Err(Rejection::MethodNotAllowed);
    }
    // 2. One Host, and a loopback one when bound to loopback (DNS rebinding).
    http_guard::check_single_host(&parts.headers)?;
    if shared.loopback {
        http_guard::check_host(&parts.headers)?;
    }
    // 3. Origin, and CORS preflight.
    let origin = http_guard::origin(&parts.headers);
    if let Some(origin) = origin
        && !http_guard::origin_allowed(origin, &shared.config.allowed_origins)
    {
        return Err(Rejection::ForbiddenOrigin);
    }
    if parts.method == Method::OPTIONS {
        return match (origin, shared.config.tokens.is_empty()) {
            (Some(origin), false) => {
                let mut response = empty(StatusCode::NO_CONTENT);
                if let Ok(origin) = HeaderValue::from_str(origin) {
                    add_cors_headers(response.headers_mut(), &origin, true);
                }
                Ok(response)
            }
            _ => Err(Rejection::ForbiddenPreflight),
        };
    }
    // 4. Token.
    let fingerprint = if shared.config.tokens.is_empty() {
        None
    } else {
        Some(http_guard::check_token(
            &parts.headers,
            &shared.config.tokens,
        )?)
    };
    match parts.method {
        Method::POST => post(shared, parts, body, fingerprint).await,
        Method::GET => get(shared, parts, fingerprint),
        _ => delete(shared, parts, fingerprint),
    }
}

async fn post(
    shared: &Arc<Shared>,
    parts: &Parts,
    body: Incoming,
    fingerprint: Option<[u8; 32]>,
) -> Result<HttpResponse, Rejection> {
    // 5. Size, media types.
    let limit = shared.config.limits.max_body_bytes;
    if http_guard::content_length(&parts.headers).is_some_and(|length| length > limit as u64) {
        return Err(Rejection::PayloadTooLarge(limit));
    }
    http_guard::check_content_type(&parts.headers)?;
    if !http_guard::accepts(&parts.headers, "application/json")
        || !http_guard::accepts(&parts.headers, "text/event-stream")
    {
        return Err(Rejection::NotAcceptable(
            "application/json and text/event-stream",
        ));
    }
    let read = tokio::time::timeout(
        shared.config.limits.body_read_timeout,
        Limited::new(body, limit).collect(),
    )
    .await
    .map_err(|_| Rejection::BodyTimeout)?;
    let bytes = match read {
        Ok(collected) => collected.to_bytes(),
        Err(error)
            if error
                .downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            return Err(Rejection::PayloadTooLarge(limit));
        }
        Err(error) => {
            return Err(Rejection::ParseError(format!(
                "the body could not be read: {error}"
            )));
        }
    };
    // 6. JSON and JSON-RPC.
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|error| Rejection::ParseError(error.to_string()))?;
    if let Value::Array(batch) = value {
        return post_batch(shared, parts, fingerprint, batch).await;
    }
    let message = Message::parse(&value)
        .map_err(|invalid| Rejection::InvalidRequest(invalid.id, invalid.reason))?;
    if let Message::Request { id, method, params } = &message
        && method == "initialize"
    {
        if let Some(existing) = session_header(&parts.headers)
            && shared.sessions.get(existing).is_some()
        {
            return Err(Rejection::InvalidRequest(
                Some(id.clone()),
                "this session is already initialized; send initialize without Mcp-Session-Id to start another".to_owned(),
            ));
        }
        return initialize(shared, id, params, fingerprint);
    }
    // 7, 8. Session and version.
    let (session, version) = session_for(shared, &parts.headers, fingerprint)?;
    match message {
        Message::Request { id, method, params } => {
            Ok(request(shared, &session, &version, id, &method, params).await)
        }
        Message::Notification { method, params } => {
            notification(&session, &method, &params);
            Ok(empty(StatusCode::ACCEPTED))
        }
        Message::Response => Ok(empty(StatusCode::ACCEPTED)),
    }
}

/// Batches are a 2025-03-26 feature: accepted only on sessions negotiated at that version,
/// never containing `initialize`. Every response comes back in one JSON array.
async fn post_batch(
    shared: &Arc<Shared>,
    parts: &Parts,
    fingerprint: Option<[u8; 32]>,
    batch: Vec<Value>,
) -> Result<HttpResponse, Rejection> {
    let is_initialize =
        |value: &Value| value.get("method").and_then(Value::as_str) == Some("initialize");
    if batch.is_empty() {
        return Err(Rejection::InvalidRequest(
            None,
            "an empty batch is not a request".to_owned(),
        ));
    }
    let max_entries = shared.config.limits.max_batch_entries;
    if batch.len() > max_entries {
        return Err(Rejection::BatchTooLarge(max_entries));
    }
    if batch.iter().any(is_initialize) {
        return Err(Rejection::InvalidRequest(
            None,
            "initialize cannot be part of a batch".to_owned(),
        ));
    }
    let (session, version) = session_for(shared, &parts.headers, fingerprint)?;
    if session.version != jsonrpc::BATCH_VERSION {
        return Err(Rejection::InvalidRequest(
            None,
            format!(
                "batches are only accepted on sessions negotiated at {}; this one uses {}: send one message per request",
                jsonrpc::BATCH_VERSION,
                session.version
            ),
        ));
    }
    let mut responses = Vec::new();
    for value in batch {
        match Message::parse(&value) {
            Ok(Message::Request { id, method, params }) => {
                let response = request(shared, &session, &version, id, &method, params).await;
                responses.push(response_json(response).await);
            }
            Ok(Message::Notification { method, params }) => {
                notification(&session, &method, &params)
            }
            Ok(Message::Response) => {}
            Err(invalid) => responses.push(jsonrpc::error(
                invalid.id.as_ref(),
                codes::INVALID_REQUEST,
                &format!("invalid request: {}", invalid.reason),
                None,
            )),
        }
    }
    if responses.is_empty() {
        return Ok(empty(StatusCode::ACCEPTED));
    }
    Ok(json_rpc(&Value::Array(responses)))
}

/// Reads a single response back into JSON (for batches): a JSON body as is, an SSE stream as
/// its last message.
async fn response_json(response: HttpResponse) -> Value {
    let bytes = match response.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(never) => match never {},
    };
    if let Ok(value) = serde_json::from_slice::<Value>(&bytes) {
        return value;
    }
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .rfind(|message| message.get("id").is_some())
        .unwrap_or(Value::Null)
}

fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
}

/// The request's session (7) and effective protocol version (8).
fn session_for(
    shared: &Shared,
    headers: &HeaderMap,
    fingerprint: Option<[u8; 32]>,
) -> Result<(Arc<Session>, String), Rejection> {
    let id = session_header(headers).ok_or(Rejection::MissingSession)?;
    let session = shared.sessions.get(id).ok_or(Rejection::UnknownSession)?;
    if session.token_fingerprint != fingerprint {
        return Err(Rejection::Unauthorized(
            "this session was started with another token",
        ));
    }
    let version = match headers.get(VERSION_HEADER) {
        None => session.version.clone(),
        Some(value) => {
            let text = value.to_str().unwrap_or_default();
            if !jsonrpc::is_supported(text) {
                return Err(Rejection::UnsupportedVersion(text.to_owned()));
            }
            text.to_owned()
        }
    };
    session.touch();
    Ok((session, version))
}

fn initialize(
    shared: &Shared,
    id: &RequestKey,
    params: &Value,
    fingerprint: Option<[u8; 32]>,
) -> Result<HttpResponse, Rejection> {
    let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
        let data = json!({
            "supported": jsonrpc::SUPPORTED_VERSIONS,
            "requested": params.get("protocolVersion").cloned().unwrap_or(Value::Null),
        });
        return Ok(json_rpc(&jsonrpc::error(
            Some(id),
            codes::INVALID_PARAMS,
            "initialize needs params.protocolVersion, a string such as \"2025-11-25\"",
            Some(data),
        )));
    };
    let version = if jsonrpc::is_supported(requested) {
        requested
    } else {
        jsonrpc::LATEST_VERSION
    };
    let session =
        shared
            .sessions
            .create(version, fingerprint, shared.gateway.new_session_state())?;
    tracing::info!(session = %short(&session.id), version, "session started");
    let result = json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": shared.config.identity.server_name, "version": shared.config.identity.server_version},
        "instructions": shared.config.identity.instructions,
    });
    let mut response = json_rpc(&jsonrpc::result(id, result));
    if let Ok(value) = HeaderValue::from_str(&session.id) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    Ok(response)
}

fn notification(session: &Session, method: &str, params: &Value) {
    if method == "notifications/cancelled"
        && let Some(key) = params.get("requestId").and_then(RequestKey::from_value)
        && session.cancel_call(&key)
    {
        tracing::debug!(session = %short(&session.id), request = %key, "call cancelled by the client");
    }
    // Unknown notifications are ignored, as JSON-RPC asks.
}

async fn request(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    version: &str,
    id: RequestKey,
    method: &str,
    params: Value,
) -> HttpResponse {
    match method {
        "ping" => json_rpc(&jsonrpc::result(&id, json!({}))),
        "tools/list" => json_rpc(&jsonrpc::result(&id, shared.gateway.tools_list().clone())),
        "tools/call" => tools_call(shared, session, version, id, params),
        "initialize" => json_rpc(&jsonrpc::error(
            Some(&id),
            codes::INVALID_REQUEST,
            "this session is already initialized",
            None,
        )),
        other => json_rpc(&jsonrpc::error(
            Some(&id),
            codes::METHOD_NOT_FOUND,
            &format!(
                "method not found: {other}; this server implements initialize, ping, tools/list and tools/call"
            ),
            None,
        )),
    }
}

fn tools_call(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    version: &str,
    id: RequestKey,
    params: Value,
) -> HttpResponse {
    let structured = jsonrpc::has_structured_content(version);
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let tool_name = &shared.config.identity.tool_name;
    if name != tool_name {
        return json_rpc(&jsonrpc::error(
            Some(&id),
            codes::INVALID_PARAMS,
            &format!(
                "unknown tool \"{}\": this server has one tool, \"{tool_name}\"",
                clip(name, MAX_NAME_CHARS)
            ),
            Some(shared.gateway.unknown_tool_data(name)),
        ));
    }
    let arguments = params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let started = Instant::now();
    let prepared = shared.gateway.prepare(&session.gateway, &arguments);
    let plan = match prepared {
        Prepared::Reply { value, is_error } => {
            if arguments["operation"] == json!("execute") {
                // Names as the caller sent them, clipped: a refused call may carry huge ones.
                let named = |key: &str| {
                    clip(arguments[key].as_str().unwrap_or("?"), MAX_NAME_CHARS).into_owned()
                };
                let outcome = if is_error {
                    value["error"]["code"]
                        .as_str()
                        .unwrap_or("ERROR")
                        .to_owned()
                } else {
                    "ok".to_owned()
                };
                let action = format!("{}.{}", named("tool"), named("action"));
                let params = arguments.get("params").unwrap_or(&Value::Null);
                shared.audit(session, action, "unknown", outcome, started, params);
            }
            return json_rpc(&jsonrpc::Success::new(
                &id,
                ToolResult::new(&value, is_error, structured),
            ));
        }
        Prepared::Execute(plan) => plan,
    };
    let call = match session.begin_call(id.clone()) {
        Ok(call) => call,
        Err(BeginError::TooManyInFlight(max)) => {
            let error = ToolError::new(
                mcp_vocabulary::codes::TOO_MANY_IN_FLIGHT,
                format!(
                    "this session already runs {max} calls; wait for one to finish or cancel one"
                ),
            );
            return json_rpc(&jsonrpc::Success::new(
                &id,
                ToolResult::new(&error.to_json(), true, structured),
            ));
        }
        Err(BeginError::DuplicateId) => {
            return json_rpc(&jsonrpc::error(
                Some(&id),
                codes::INVALID_REQUEST,
                &format!("request id {id} is already in flight in this session; use a new id"),
                None,
            ));
        }
    };
    let (frames, receiver) = mpsc::channel(CALL_STREAM_CAPACITY);
    let progress = match params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
    {
        Some(token) if token.is_string() || token.is_i64() || token.is_u64() => {
            let refresh = Arc::clone(session);
            ProgressSink::new(
                token.clone(),
                frames.clone(),
                call.cancel.clone(),
                Box::new(move || refresh.refresh()),
            )
        }
        _ => ProgressSink::disabled(),
    };
    let shared_for_task = Arc::clone(shared);
    let session_for_task = Arc::clone(session);
    shared.calls.spawn(async move {
        let cancel = call.cancel.clone();
        let deadline = Instant::now() + plan.timeout;
        let dispatch_call = DispatchCall {
            tool: plan.tool.name,
            action: plan.action.name,
            params: plan.params.clone(),
            session_id: session_for_task.id.clone(),
            request: id.clone(),
            progress: progress.clone(),
            cancel: cancel.clone(),
            deadline,
        };
        let outcome = run_call(&shared_for_task, dispatch_call, &cancel, &plan, deadline).await;
        let audited = match &outcome {
            Some(Ok(_)) => "ok".to_owned(),
            Some(Err(error)) => error.code.to_string(),
            None => "CANCELLED".to_owned(),
        };
        shared_for_task.audit(
            &session_for_task,
            format!("{}.{}", plan.tool.name, plan.action.name),
            plan.action.effect.as_str(),
            audited,
            started,
            &plan.params,
        );
        // No progress after this point, whatever happens below.
        let stream = progress.close().unwrap_or(frames);
        let cancelled =
            session_for_task.was_cancelled(&id) || session_for_task.cancel.is_cancelled();
        if let Some(outcome) = outcome
            && !cancelled
        {
            let (payload, is_error) = shared_for_task.gateway.finish(&plan, outcome);
            let result = ToolResult::new(&payload, is_error, structured);
            let frame = sse::message_frame(&jsonrpc::Success::new(&id, result));
            // A closed stream means the client went away; the result is dropped (not a cancel).
            let _ = stream.send(frame).await;
        }
        drop(call);
    });
    let mut response = Response::new(ResponseBody::Sse(SseBody::new(receiver)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// How long a job may take to wind down after its deadline cancelled it.
const WIND_DOWN: Duration = Duration::from_secs(1);

/// Runs the dispatch until it finishes, is cancelled, or reaches its deadline.
///
/// A cancelled call returns `None` (nothing is sent) but the job is still awaited, up to its
/// deadline, so it can stop at its next frame boundary and the session's in-flight count stays
/// true. At the deadline the job is cancelled (so a retry does not duplicate work), given a
/// moment to wind down, and `TIMEOUT` is returned.
async fn run_call(
    shared: &Shared,
    call: DispatchCall,
    cancel: &CancellationToken,
    plan: &ExecutePlan,
    deadline: Instant,
) -> Option<Result<Value, ToolError>> {
    let mut job = shared.dispatch.dispatch(call);
    let deadline = tokio::time::Instant::from_std(deadline);
    tokio::select! {
        biased;
        outcome = &mut job => Some(outcome),
        () = cancel.cancelled() => {
            let _ = tokio::time::timeout_at(deadline, job).await;
            None
        }
        () = tokio::time::sleep_until(deadline) => {
            cancel.cancel();
            let _ = tokio::time::timeout(WIND_DOWN, job).await;
            Some(Err(ToolError::new(
                mcp_vocabulary::codes::TIMEOUT,
                format!(
                    "{}.{} did not finish within {} ms and was cancelled; nothing more will run for this call",
                    plan.tool.name,
                    plan.action.name,
                    plan.timeout.as_millis()
                ),
            )
            .hint("Raise options.timeoutMs (up to 600000), or narrow the call.")))
        }
    }
}

fn get(
    shared: &Arc<Shared>,
    parts: &Parts,
    fingerprint: Option<[u8; 32]>,
) -> Result<HttpResponse, Rejection> {
    if !http_guard::accepts(&parts.headers, "text/event-stream") {
        return Err(Rejection::NotAcceptable("text/event-stream"));
    }
    let (session, _version) = session_for(shared, &parts.headers, fingerprint)?;
    let receiver = session
        .open_stream(GET_STREAM_CAPACITY)
        .ok_or(Rejection::StreamConflict)?;
    let body = SseBody::with_keep_alive(receiver, shared.config.limits.keep_alive_interval);
    let mut response = Response::new(ResponseBody::Sse(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(response)
}

fn delete(
    shared: &Arc<Shared>,
    parts: &Parts,
    fingerprint: Option<[u8; 32]>,
) -> Result<HttpResponse, Rejection> {
    let (session, _version) = session_for(shared, &parts.headers, fingerprint)?;
    shared.sessions.remove(&session.id);
    tracing::info!(session = %short(&session.id), "session deleted by the client");
    Ok(empty(StatusCode::OK))
}
