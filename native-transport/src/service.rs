//! One HTTP request, from the first check to the response.
//!
//! The checks run in the order of DESIGN section 2: path and method, Host, Origin (and CORS
//! preflight), token, body size, media types, JSON, session, protocol version. Each refusal is a
//! [`Rejection`]; everything after them is JSON-RPC.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::audit::{self, AuditEntry, AuditSink};
use crate::catalog::{Effect, Scope};
use crate::config::ServerConfig;
use crate::connections::Connection;
use crate::dispatch::{ActionReply, Dispatch, DispatchCall, ProgressSink, ToolError};
use crate::gateway::guidance::{MAX_NAME_CHARS, clip};
use crate::gateway::{ExecutePlan, Gateway, Prepared, ToolResult};
use crate::http_guard::{self, Rejection, SESSION_HEADER, VERSION_HEADER};
use crate::jsonrpc::{self, Message, RequestKey, codes};
use crate::logs::LogLevel;
use crate::methods::resources::{self, Read};
use crate::methods::{MethodError, completion, prompts};
use crate::outbox::OpenError;
use crate::session::{BeginError, CallGuard, Session, SessionStore, short};
use crate::sse::SseBody;
use crate::tokens::{self, Accepted, Throttle, ThrottleVerdict, TokenTable};
use subtle::ConstantTimeEq;

/// Frames buffered per call stream before progress updates are dropped.
const CALL_STREAM_CAPACITY: usize = 64;

/// State shared by every connection.
pub(crate) struct Shared {
    pub config: ServerConfig,
    /// The tokens accepted now (the tokens file's are read again when it changes).
    pub tokens: TokenTable,
    /// Wrong tokens per address, slowed down.
    pub throttle: Throttle,
    pub loopback: bool,
    pub sessions: SessionStore,
    pub gateway: Arc<Gateway>,
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
        if self.audit.is_some() {
            let params = audit::summarize(params);
            self.audit_summarized(session, action, effect, outcome, started, params);
        }
    }

    /// [`Shared::audit`] with the params already summarized.
    /// Records a finished call of `plan` (its params summarized before they moved on to the
    /// app): ok, the error's code, or cancelled.
    fn audit_call(
        &self,
        session: &Session,
        plan: &ExecutePlan,
        started: Instant,
        params: Option<Value>,
        outcome: &Option<Result<ActionReply, ToolError>>,
    ) {
        let Some(params) = params else {
            return;
        };
        let audited = match outcome {
            Some(Ok(_)) => "ok".to_owned(),
            Some(Err(error)) => error.code.to_string(),
            None => mcp_vocabulary::codes::CANCELLED.to_string(),
        };
        self.audit_summarized(
            session,
            format!("{}.{}", plan.tool.name, plan.action.name),
            plan.action.effect.as_str(),
            audited,
            started,
            params,
        );
    }

    fn audit_summarized(
        &self,
        session: &Session,
        action: String,
        effect: &str,
        outcome: String,
        started: Instant,
        params: Value,
    ) {
        if let Some(sink) = &self.audit {
            sink.record(AuditEntry {
                at: SystemTime::now(),
                session: short(&session.id).to_owned(),
                token: session.token.as_ref().map(|token| token.id.to_string()),
                action,
                effect: effect.to_owned(),
                outcome,
                duration: started.elapsed(),
                params,
            });
        }
    }
}

/// A response body: a complete JSON body (or nothing), or an SSE stream.
type ResponseBody = Either<Full<Bytes>, SseBody>;

type HttpResponse = Response<ResponseBody>;

fn full(response: Response<Full<Bytes>>) -> HttpResponse {
    response.map(Either::Left)
}

fn empty(status: StatusCode) -> HttpResponse {
    let mut response = Response::new(Either::Left(Full::new(Bytes::new())));
    *response.status_mut() = status;
    response
}

fn json_rpc(body: &impl serde::Serialize) -> HttpResponse {
    full(http_guard::json_response(StatusCode::OK, body))
}

/// What one JSON-RPC request produced, before it is framed for the wire: framing (a JSON body,
/// an SSE stream, an entry of a batch) is decided once, at the edge.
enum Reply {
    /// One complete JSON-RPC message, serialized.
    Message(Bytes),
    /// A call running on the app.
    Call(CallStream),
}

impl Reply {
    fn message(body: &impl serde::Serialize) -> Reply {
        Reply::Message(jsonrpc::to_bytes(body))
    }

    /// The HTTP response for a single request: JSON, or an SSE stream. A call whose answer comes
    /// within `json_window`, before any progress, is answered as JSON too: one write, and no
    /// stream for the client to read.
    async fn into_http(self, json_window: Duration) -> HttpResponse {
        match self {
            Reply::Message(bytes) => json_body(bytes),
            Reply::Call(call) => match call.answer_within(json_window).await {
                Early::Answer(bytes) => json_body(bytes),
                Early::Stream(body) => sse_response(body),
            },
        }
    }

    /// The reply as one entry of a batch: the response itself, or none (a cancelled call).
    async fn into_batch_entry(self) -> Option<Bytes> {
        match self {
            Reply::Message(bytes) => Some(bytes),
            // Progress has no place in a batch reply.
            Reply::Call(call) => call.answer.await.ok(),
        }
    }
}

fn json_body(bytes: Bytes) -> HttpResponse {
    let mut response = Response::new(Either::Left(Full::new(bytes)));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// What a running call sends back: progress notifications (when the caller asked for them),
/// then at most one response (none when the call was cancelled).
struct CallStream {
    progress: Option<mpsc::Receiver<Bytes>>,
    answer: oneshot::Receiver<Bytes>,
}

/// How a call's reply starts.
enum Early {
    /// The response came first and in time: a JSON body.
    Answer(Bytes),
    /// Progress came first, the window passed, or the call ended without a response: a stream.
    Stream(SseBody),
}

impl CallStream {
    async fn answer_within(mut self, window: Duration) -> Early {
        let window = tokio::time::sleep(window);
        tokio::pin!(window);
        loop {
            tokio::select! {
                biased;
                first = next_progress(&mut self.progress) => match first {
                    Some(first) => {
                        return Early::Stream(SseBody::call(Some(first), self.progress, self.answer));
                    }
                    // Progress is over: the answer (or the end of a cancelled call) is next.
                    None => self.progress = None,
                },
                answer = &mut self.answer => {
                    return match answer {
                        Ok(bytes) => Early::Answer(bytes),
                        // Cancelled: a stream that ends without a response.
                        Err(_) => Early::Stream(SseBody::ended()),
                    };
                }
                () = &mut window => {
                    return Early::Stream(SseBody::call(None, self.progress, self.answer));
                }
            }
        }
    }
}

/// The next progress message; pending forever when there is no progress channel.
async fn next_progress(progress: &mut Option<mpsc::Receiver<Bytes>>) -> Option<Bytes> {
    match progress {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

fn sse_response(body: SseBody) -> HttpResponse {
    let mut response = Response::new(Either::Right(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
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
        Err(Refused { rejection, id }) => {
            // Token refusals are logged by the throttle, once per address and interval.
            if rejection.is_security() && !rejection.is_token_refusal() {
                tracing::warn!(
                    method = %parts.method,
                    status = rejection.status().as_u16(),
                    reason = %rejection.message(),
                    "refused a request"
                );
            }
            full(rejection.into_response(id))
        }
    };
    if let Some(origin) = cors_origin {
        add_cors_headers(response.headers_mut(), &origin, false);
    }
    Ok(response)
}

/// A refusal, and the id of the request it answers when that could be read.
struct Refused {
    rejection: Rejection,
    id: Option<RequestKey>,
}

impl From<Rejection> for Refused {
    fn from(rejection: Rejection) -> Self {
        Refused {
            rejection,
            id: None,
        }
    }
}

impl Refused {
    fn answering(id: &RequestKey) -> impl FnOnce(Rejection) -> Refused + '_ {
        move |rejection| Refused {
            rejection,
            id: Some(id.clone()),
        }
    }
}

/// How long a refused POST's body is waited for, to answer with its id.
const PEEK_WINDOW: Duration = Duration::from_secs(1);
/// The largest body of a refused POST that is read for its id: a request without the token must
/// not make the server parse what only an admitted one may send (4 MiB).
const PEEK_MAX_BYTES: usize = 64 * 1024;

/// Refuses a POST before its body was read; a small body is still read (at most
/// [`PEEK_MAX_BYTES`] and [`PEEK_WINDOW`]) so the error can answer the request's id, as clients
/// match on it.
async fn refuse_unread(
    shared: &Shared,
    parts: &Parts,
    body: Incoming,
    rejection: Rejection,
) -> Refused {
    let limit = shared.config.limits.max_body_bytes.min(PEEK_MAX_BYTES);
    let readable = parts.method == Method::POST
        && http_guard::content_length(&parts.headers).is_none_or(|length| length <= limit as u64);
    let id = if readable {
        let window = PEEK_WINDOW.min(shared.config.limits.body_read_timeout);
        match tokio::time::timeout(window, Limited::new(body, limit).collect()).await {
            Ok(Ok(collected)) => serde_json::from_slice::<Value>(&collected.to_bytes())
                .ok()
                .and_then(|value| value.get("id").and_then(RequestKey::from_value)),
            _ => None,
        }
    } else {
        None
    };
    Refused { rejection, id }
}

/// CORS is only for token-protected servers, and only for allowed origins: a page in a browser
/// on this machine can never drive an open server.
fn cors_origin(shared: &Shared, headers: &HeaderMap) -> Option<HeaderValue> {
    if !shared.tokens.required() {
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
) -> Result<HttpResponse, Refused> {
    if parts.method != Method::POST {
        // Nothing more of the request is to come.
        mark_request_read(parts);
    }
    match admit(shared, parts) {
        Ok(Admitted::Preflight(response)) => return Ok(*response),
        Ok(Admitted::Request) => {}
        Err(rejection) => return Err(refuse_unread(shared, parts, body, rejection).await),
    }
    let token = match admit_token(shared, parts).await {
        Ok(token) => token,
        Err(rejection) => return Err(refuse_unread(shared, parts, body, rejection).await),
    };
    match parts.method {
        Method::POST => post(shared, parts, body, token).await,
        Method::GET => Ok(get(shared, parts, token.as_ref())?),
        _ => Ok(delete(shared, parts, token.as_ref())?),
    }
}

/// Tells the connection its request is whole (it no longer gives way at the connection cap).
fn mark_request_read(parts: &Parts) {
    if let Some(connection) = parts.extensions.get::<Arc<Connection>>() {
        connection.request_read();
    }
}

/// What the checks of the request's head before the token let through.
enum Admitted {
    /// A CORS preflight, answered.
    Preflight(Box<HttpResponse>),
    /// A request, for the token check.
    Request,
}

/// The address a request came from (set by the accept loop), for the wrong-token throttle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peer(pub std::net::IpAddr);

/// Step 4, the token: compared in constant time with every accepted one, once the wrong-token
/// throttle of the request's address agrees. A live session presenting its own token skips the
/// throttle (its id and token together prove it).
async fn admit_token(shared: &Shared, parts: &Parts) -> Result<Option<Accepted>, Rejection> {
    if !shared.tokens.required() {
        return Ok(None);
    }
    let address = parts.extensions.get::<Peer>().map(|peer| peer.0);
    let Some(presented) =
        http_guard::presented_token(&parts.headers).filter(|token| !token.is_empty())
    else {
        if let Some(address) = address
            && let Some(line) = shared.throttle.log_refusal(address, Instant::now())
        {
            tracing::warn!(%address, also_refused = line.also_refused, "refused a request without a capability token");
        }
        return Err(Rejection::TokenMissing);
    };
    let presented = tokens::digest(presented);
    let proven = session_header(&parts.headers)
        .and_then(|id| shared.sessions.get(id))
        .and_then(|session| session.fingerprint())
        .is_some_and(|fingerprint| bool::from(fingerprint.ct_eq(&presented)));
    let throttled = address.filter(|_| !proven);
    if let Some(address) = throttled {
        match shared.throttle.before_check(address, Instant::now()) {
            ThrottleVerdict::CheckNow => {}
            ThrottleVerdict::CheckAfter(wait) => {
                let mut waiting = WaitingCheck {
                    throttle: &shared.throttle,
                    address,
                    pending: true,
                };
                tokio::time::sleep(wait).await;
                waiting.pending = false;
            }
            ThrottleVerdict::Busy(retry) => {
                if let Some(line) = shared.throttle.log_refusal(address, Instant::now()) {
                    tracing::warn!(%address, also_refused = line.also_refused, "refused capability tokens sent while one of the address waits for its check");
                }
                return Err(Rejection::TokenChecksThrottled(retry));
            }
        }
    }
    let accepted = shared.tokens.check_digest(&presented);
    if let Some(address) = throttled
        && let Some(line) = shared
            .throttle
            .after_check(address, accepted.is_some(), Instant::now())
    {
        tracing::warn!(%address, also_refused = line.also_refused, "refused a wrong capability token");
    }
    match accepted {
        Some(accepted) => Ok(Some(accepted)),
        None if session_header(&parts.headers)
            .is_some_and(|id| shared.sessions.was_revoked(id)) =>
        {
            Err(Rejection::Unauthorized(REVOKED))
        }
        None => Err(Rejection::TokenWrong),
    }
}

/// Why a session whose token was taken away is refused.
const REVOKED: &str = "this session's token was removed from the tokens file or its scope changed, so the session ended; initialize a new session with a current token";

/// Ends a throttled wait that never reached its check (the client went away), so the address's
/// next request is not turned away as if one still waited.
struct WaitingCheck<'a> {
    throttle: &'a Throttle,
    address: std::net::IpAddr,
    pending: bool,
}

impl Drop for WaitingCheck<'_> {
    fn drop(&mut self) {
        if self.pending {
            self.throttle.abandon(self.address);
        }
    }
}

/// The checks that need only the request's head, in the order of DESIGN section 2.
fn admit(shared: &Shared, parts: &Parts) -> Result<Admitted, Rejection> {
    // 1. Path and method; OAuth probes get an answer OAuth clients can show.
    let path = parts.uri.path();
    if path != "/mcp" {
        return Err(if http_guard::is_oauth_path(path) {
            Rejection::NoOAuth {
                token_required: shared.tokens.required(),
            }
        } else {
            Rejection::NotFound
        });
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
        return match (origin, shared.tokens.required()) {
            (Some(origin), true) => {
                let mut response = empty(StatusCode::NO_CONTENT);
                if let Ok(origin) = HeaderValue::from_str(origin) {
                    add_cors_headers(response.headers_mut(), &origin, true);
                }
                Ok(Admitted::Preflight(Box::new(response)))
            }
            _ => Err(Rejection::ForbiddenPreflight),
        };
    }
    Ok(Admitted::Request)
}

async fn post(
    shared: &Arc<Shared>,
    parts: &Parts,
    body: Incoming,
    token: Option<Accepted>,
) -> Result<HttpResponse, Refused> {
    // 5. Size, media types.
    let limit = shared.config.limits.max_body_bytes;
    if http_guard::content_length(&parts.headers).is_some_and(|length| length > limit as u64) {
        return Err(Rejection::PayloadTooLarge(limit).into());
    }
    let media = http_guard::check_content_type(&parts.headers).and_then(|()| {
        if http_guard::accepts(&parts.headers, "application/json")
            && http_guard::accepts(&parts.headers, "text/event-stream")
        {
            Ok(())
        } else {
            Err(Rejection::NotAcceptable(
                "application/json and text/event-stream",
            ))
        }
    });
    if let Err(rejection) = media {
        return Err(refuse_unread(shared, parts, body, rejection).await);
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
            return Err(Rejection::PayloadTooLarge(limit).into());
        }
        Err(error) => {
            return Err(
                Rejection::ParseError(format!("the body could not be read: {error}")).into(),
            );
        }
    };
    mark_request_read(parts);
    // 6. JSON and JSON-RPC.
    let value: Value =
        serde_json::from_slice(&bytes).map_err(|error| Rejection::ParseError(error.to_string()))?;
    if let Value::Array(batch) = value {
        return Ok(post_batch(shared, parts, token.as_ref(), batch).await?);
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
            ).into());
        }
        return initialize(shared, id, params, token).map_err(Refused::answering(id));
    }
    // 7, 8. Session and version.
    let request_id = match &message {
        Message::Request { id, .. } => Some(id.clone()),
        _ => None,
    };
    let (session, version) =
        session_for(shared, &parts.headers, token.as_ref()).map_err(|rejection| Refused {
            rejection,
            id: request_id,
        })?;
    match message {
        Message::Request { id, method, params } => {
            let reply = request(shared, &session, &version, id, &method, params);
            Ok(reply
                .into_http(shared.config.limits.json_reply_window)
                .await)
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
    token: Option<&Accepted>,
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
    let (session, version) = session_for(shared, &parts.headers, token)?;
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
    let mut responses: Vec<Bytes> = Vec::new();
    for value in batch {
        match Message::parse(&value) {
            Ok(Message::Request { id, method, params }) => {
                let reply = request(shared, &session, &version, id, &method, params);
                responses.extend(reply.into_batch_entry().await);
            }
            Ok(Message::Notification { method, params }) => {
                notification(&session, &method, &params)
            }
            Ok(Message::Response) => {}
            Err(invalid) => responses.push(jsonrpc::to_bytes(&jsonrpc::error(
                invalid.id.as_ref(),
                codes::INVALID_REQUEST,
                &format!("invalid request: {}", invalid.reason),
                None,
            ))),
        }
    }
    if responses.is_empty() {
        return Ok(empty(StatusCode::ACCEPTED));
    }
    // The entries are serialized JSON already: the array is joined, never re-parsed.
    let mut array =
        Vec::with_capacity(responses.iter().map(Bytes::len).sum::<usize>() + responses.len() + 1);
    array.push(b'[');
    for (index, response) in responses.iter().enumerate() {
        if index > 0 {
            array.push(b',');
        }
        array.extend_from_slice(response);
    }
    array.push(b']');
    Ok(json_body(Bytes::from(array)))
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
    token: Option<&Accepted>,
) -> Result<(Arc<Session>, String), Rejection> {
    let id = session_header(headers).ok_or(Rejection::MissingSession)?;
    let Some(session) = shared.sessions.get(id) else {
        return Err(if shared.sessions.was_revoked(id) {
            Rejection::Unauthorized(REVOKED)
        } else {
            Rejection::UnknownSession
        });
    };
    if session.fingerprint() != token.map(|token| token.fingerprint) {
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
    token: Option<Accepted>,
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
    let scope = token.as_ref().map_or(Scope::Admin, |token| token.scope);
    let token_id = token.as_ref().map(|token| Arc::clone(&token.id));
    let session =
        shared
            .sessions
            .create(version, token, shared.gateway.new_session_state(scope))?;
    match token_id {
        Some(token) => {
            tracing::info!(session = %short(&session.id), version, %token, %scope, "session started");
        }
        None => tracing::info!(session = %short(&session.id), version, "session started"),
    }
    let result = json!({
        "protocolVersion": version,
        "capabilities": {"tools": {}, "prompts": {}, "resources": {"subscribe": true}, "completions": {}, "logging": {}},
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

fn request(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    version: &str,
    id: RequestKey,
    method: &str,
    params: Value,
) -> Reply {
    match method {
        "ping" => Reply::message(&jsonrpc::result(&id, json!({}))),
        "tools/list" => Reply::message(&jsonrpc::result(&id, shared.gateway.tools_list().clone())),
        "tools/call" => tools_call(shared, session, version, id, params),
        "prompts/list" => Reply::message(&jsonrpc::result(
            &id,
            prompts::list(shared.gateway.catalog(), jsonrpc::has_titles(version)),
        )),
        "prompts/get" => answered(&id, prompts::get(shared.gateway.catalog(), &params)),
        "resources/list" => Reply::message(&jsonrpc::result(
            &id,
            resources::list(&shared.gateway, jsonrpc::has_titles(version)),
        )),
        "resources/templates/list" => Reply::message(&jsonrpc::result(
            &id,
            resources::templates(shared.gateway.identity(), jsonrpc::has_titles(version)),
        )),
        "resources/read" => resources_read(shared, session, id, &params),
        "completion/complete" => answered(&id, completion::complete(&shared.gateway, &params)),
        "logging/setLevel" => answered(&id, set_log_level(session, &params)),
        "resources/subscribe" => answered(&id, subscribe(shared, session, &params)),
        "resources/unsubscribe" => {
            let uri = params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            session.subscriptions.lock().remove(uri);
            Reply::message(&jsonrpc::result(&id, json!({})))
        }
        "initialize" => Reply::message(&jsonrpc::error(
            Some(&id),
            codes::INVALID_REQUEST,
            "this session is already initialized",
            None,
        )),
        other => Reply::message(&jsonrpc::error(
            Some(&id),
            codes::METHOD_NOT_FOUND,
            &format!(
                "method not found: {other}; this server implements initialize, ping, tools/list, tools/call, prompts/list, prompts/get, resources/list, resources/templates/list, resources/read, resources/subscribe, resources/unsubscribe, completion/complete and logging/setLevel"
            ),
            None,
        )),
    }
}

/// `logging/setLevel {level}`: the session's app log lines at or above `level` come on its GET
/// stream from now on.
fn set_log_level(session: &Session, params: &Value) -> Result<Value, MethodError> {
    let asked = params
        .get("level")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let level = LogLevel::parse(asked).ok_or_else(|| {
        MethodError::invalid(format!(
            "\"{}\" is not a log level; use one of {}",
            clip(asked, MAX_NAME_CHARS),
            LogLevel::ALL.map(LogLevel::as_str).join(", ")
        ))
    })?;
    *session.log_level.lock() = Some(level);
    Ok(json!({}))
}

/// `resources/subscribe {uri}`: the session gets `notifications/resources/updated` on its GET
/// stream when the live resource changes (checked at most every `subscription_poll`).
fn subscribe(shared: &Shared, session: &Session, params: &Value) -> Result<Value, MethodError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .unwrap_or_default();
    resources::subscribable(&shared.gateway, &session.gateway.lock(), uri)?;
    let mut subscriptions = session.subscriptions.lock();
    let max = shared.config.limits.max_subscriptions_per_session;
    if !subscriptions.contains(uri) && subscriptions.len() >= max {
        return Err(MethodError::invalid(format!(
            "this session already follows {max} resources; resources/unsubscribe one first"
        )));
    }
    subscriptions.insert(uri.to_owned());
    Ok(json!({}))
}

/// A method's answer as a JSON-RPC message: its result, or its error.
fn answered(id: &RequestKey, answer: Result<Value, MethodError>) -> Reply {
    match answer {
        Ok(result) => Reply::message(&jsonrpc::result(id, result)),
        Err(error) => Reply::message(&jsonrpc::error(
            Some(id),
            error.code,
            &error.message,
            error.data,
        )),
    }
}

/// `resources/read`: a reference page at once; a live resource runs its read action through
/// the dispatcher like a call (counted in flight, cancellable, with the call deadline).
fn resources_read(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    id: RequestKey,
    params: &Value,
) -> Reply {
    let (plan, uri) = match resources::read(&shared.gateway, params) {
        Err(error) => return answered(&id, Err(error)),
        Ok(Read::Ready(contents)) => return answered(&id, Ok(contents)),
        Ok(Read::Live { plan, uri, .. }) => (*plan, uri),
    };
    // A resource runs an action: the session's scope holds here as it does for execute.
    let allowed = crate::gateway::check_scope(&session.gateway.lock(), plan.tool, plan.action);
    if let Err(refused) = allowed {
        return answered(&id, Err(MethodError::from_tool_error(&refused)));
    }
    let call = match session.begin_call(id.clone()) {
        Ok(call) => call,
        Err(BeginError::TooManyInFlight(max)) => {
            return answered(
                &id,
                Err(MethodError {
                    code: codes::INTERNAL_ERROR,
                    message: format!(
                        "this session already runs {max} calls; wait for one to finish, then read again"
                    ),
                    data: None,
                }),
            );
        }
        Err(BeginError::DuplicateId) => {
            return answered(
                &id,
                Err(MethodError {
                    code: codes::INVALID_REQUEST,
                    message: format!(
                        "request id {id} is already in flight in this session; use a new id"
                    ),
                    data: None,
                }),
            );
        }
    };
    let (answer_sender, answer) = oneshot::channel();
    let shared = Arc::clone(shared);
    let session = Arc::clone(session);
    let calls = shared.calls.clone();
    let started = Instant::now();
    calls.spawn(async move {
        let mut plan = plan;
        let cancel = call.cancel.clone();
        let deadline = Instant::now() + plan.timeout;
        // Audited like an execute: every action a client makes run leaves an entry.
        let audited_params = shared
            .audit
            .as_ref()
            .map(|_| audit::summarize(&plan.params));
        let dispatch_call = dispatch_call(
            &mut plan,
            &session.id,
            &id,
            ProgressSink::disabled(),
            &cancel,
        );
        let outcome = run_call(&shared, dispatch_call, &cancel, &plan, deadline).await;
        shared.audit_call(&session, &plan, started, audited_params, &outcome);
        let cancelled = session.was_cancelled(&id) || session.cancel.is_cancelled();
        if let Some(outcome) = outcome
            && !cancelled
        {
            let finished = shared
                .gateway
                .finish(&plan, outcome.map(|reply| reply.value));
            let message = match resources::contents(&uri, &finished) {
                Ok(contents) => jsonrpc::result(&id, contents),
                Err(error) => jsonrpc::error(Some(&id), error.code, &error.message, error.data),
            };
            let _ = answer_sender.send(jsonrpc::to_bytes(&message));
        }
        drop(call);
    });
    Reply::Call(CallStream {
        progress: None,
        answer,
    })
}

/// `tools/call`: the gateway decides (a reply of its own, or a plan), and a plan runs as a call
/// streamed back on its own SSE channel.
fn tools_call(
    shared: &Arc<Shared>,
    session: &Arc<Session>,
    version: &str,
    id: RequestKey,
    mut params: Value,
) -> Reply {
    let structured = jsonrpc::has_structured_content(version);
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let tool_name = &shared.config.identity.tool_name;
    if name != tool_name {
        return Reply::message(&jsonrpc::error(
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
        .get_mut("arguments")
        .map_or_else(|| json!({}), Value::take);
    let started = Instant::now();
    let plan = match shared.gateway.prepare(&session.gateway, arguments) {
        Prepared::Reply {
            value,
            text,
            error,
            execute,
        } => {
            if let Some(attempt) = execute {
                let outcome = error.map_or_else(|| "ok".to_owned(), |code| code.to_string());
                let effect = attempt.effect.map_or("unknown", Effect::as_str);
                shared.audit(
                    session,
                    attempt.action,
                    effect,
                    outcome,
                    started,
                    &attempt.params,
                );
            }
            let result = match &text {
                Some(text) => ToolResult::with_text(&value, text, error.is_some(), structured),
                None => ToolResult::new(&value, error.is_some(), structured),
            };
            return Reply::message(&jsonrpc::Success::new(&id, result));
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
            return Reply::message(&jsonrpc::Success::new(
                &id,
                ToolResult::new(&error.to_json(), true, structured),
            ));
        }
        Err(BeginError::DuplicateId) => {
            return Reply::message(&jsonrpc::error(
                Some(&id),
                codes::INVALID_REQUEST,
                &format!("request id {id} is already in flight in this session; use a new id"),
                None,
            ));
        }
    };
    let progress_token = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .filter(|token| token.is_string() || token.is_i64() || token.is_u64())
        .cloned();
    let running = RunningCall {
        shared: Arc::clone(shared),
        session: Arc::clone(session),
        id,
        plan,
        structured,
        started,
    };
    Reply::Call(running.spawn(call, progress_token))
}

/// A planned call on its way through the dispatcher.
struct RunningCall {
    shared: Arc<Shared>,
    session: Arc<Session>,
    id: RequestKey,
    plan: ExecutePlan,
    structured: bool,
    started: Instant,
}

impl RunningCall {
    /// Spawns the call; its progress and its response come on the returned stream.
    fn spawn(self, call: CallGuard, progress_token: Option<Value>) -> CallStream {
        let (answer_sender, answer) = oneshot::channel();
        let (progress, progress_receiver) = match progress_token {
            Some(token) => {
                let (messages, receiver) = mpsc::channel(CALL_STREAM_CAPACITY);
                let refresh = Arc::clone(&self.session);
                let sink = ProgressSink::new(
                    token,
                    messages,
                    call.cancel.clone(),
                    Box::new(move || refresh.refresh()),
                );
                (sink, Some(receiver))
            }
            None => (ProgressSink::disabled(), None),
        };
        let calls = self.shared.calls.clone();
        calls.spawn(async move {
            self.run(&call, progress, answer_sender).await;
            drop(call);
        });
        CallStream {
            progress: progress_receiver,
            answer,
        }
    }

    async fn run(self, call: &CallGuard, progress: ProgressSink, answer: oneshot::Sender<Bytes>) {
        let RunningCall {
            shared,
            session,
            id,
            plan,
            structured,
            started,
        } = self;
        let mut plan = plan;
        let cancel = call.cancel.clone();
        let deadline = Instant::now() + plan.timeout;
        // The audit keeps a bounded summary; the params themselves move on to the app.
        let audited_params = shared
            .audit
            .as_ref()
            .map(|_| audit::summarize(&plan.params));
        let dispatch_call = dispatch_call(&mut plan, &session.id, &id, progress.clone(), &cancel);
        let outcome = run_call(&shared, dispatch_call, &cancel, &plan, deadline).await;
        shared.audit_call(&session, &plan, started, audited_params, &outcome);
        // No progress after this point, whatever happens below; the progress stream ends here,
        // so a reader sees every progress message before the response.
        drop(progress.close());
        let cancelled = session.was_cancelled(&id) || session.cancel.is_cancelled();
        if let Some(outcome) = outcome
            && !cancelled
        {
            let (outcome, images) = match outcome {
                Ok(reply) => (Ok(reply.value), reply.images),
                Err(error) => (Err(error), Vec::new()),
            };
            let finished = shared.gateway.finish(&plan, outcome);
            let mut result = finished.tool_result(structured);
            if !finished.is_error {
                result = result.with_images(&images);
            }
            let message = jsonrpc::to_bytes(&jsonrpc::Success::new(&id, result));
            // A dropped receiver means the client went away; the result is dropped (not a cancel).
            let _ = answer.send(message);
        }
    }
}

/// The call the dispatcher runs for `plan`, whose params move into it.
pub(crate) fn dispatch_call(
    plan: &mut ExecutePlan,
    session_id: &str,
    request: &RequestKey,
    progress: ProgressSink,
    cancel: &CancellationToken,
) -> DispatchCall {
    DispatchCall {
        tool: plan.tool,
        action: plan.action,
        params: std::mem::take(&mut plan.params),
        session_id: session_id.to_owned(),
        request: request.clone(),
        progress,
        cancel: cancel.clone(),
    }
}

/// How long a job may take to wind down after its deadline cancelled it.
const WIND_DOWN: Duration = Duration::from_secs(1);

/// Runs the dispatch until it finishes, is cancelled, or reaches its deadline.
///
/// A cancelled call returns `None` (nothing is sent) but the job is still awaited, up to its
/// deadline, so it can stop at its next frame boundary and the session's in-flight count stays
/// true. At the deadline the job is cancelled (so a retry does not duplicate work), given a
/// moment to wind down, and `TIMEOUT` is returned.
pub(crate) async fn run_call(
    shared: &Shared,
    call: DispatchCall,
    cancel: &CancellationToken,
    plan: &ExecutePlan,
    deadline: Instant,
) -> Option<Result<ActionReply, ToolError>> {
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
                    "{}.{} did not finish within {} ms and was cancelled (a call that had begun changing the world, such as a restore, a clear or an undo, still completes its change rather than leave it half-done: history.list shows it)",
                    plan.tool.name,
                    plan.action.name,
                    plan.timeout.as_millis()
                ),
            )
            .hint("Raise options.timeoutMs (up to 600000; a whole-world call in a world of 100,000 entities takes tens of seconds), or narrow the call.")))
        }
    }
}

fn get(
    shared: &Arc<Shared>,
    parts: &Parts,
    token: Option<&Accepted>,
) -> Result<HttpResponse, Rejection> {
    if !http_guard::accepts(&parts.headers, "text/event-stream") {
        return Err(Rejection::NotAcceptable("text/event-stream"));
    }
    let (session, _version) = session_for(shared, &parts.headers, token)?;
    let last_seen = match parts.headers.get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|text| text.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    Rejection::InvalidRequest(
                        None,
                        "Last-Event-ID must be the id of an event this stream sent (a number); reconnect without it to start afresh".to_owned(),
                    )
                })?,
        ),
    };
    let opened = session.outbox.open(last_seen).map_err(|error| match error {
        OpenError::Conflict => Rejection::StreamConflict,
        OpenError::UnknownEvent(id) => Rejection::InvalidRequest(
            None,
            format!("Last-Event-ID {id} is not an event this session sent; reconnect without it to start afresh"),
        ),
    })?;
    let body = SseBody::resumed(
        opened.replayed,
        opened.live,
        shared.config.limits.keep_alive_interval,
    );
    Ok(sse_response(body))
}

fn delete(
    shared: &Arc<Shared>,
    parts: &Parts,
    token: Option<&Accepted>,
) -> Result<HttpResponse, Rejection> {
    let (session, _version) = session_for(shared, &parts.headers, token)?;
    shared.sessions.remove(&session.id);
    tracing::info!(session = %short(&session.id), "session deleted by the client");
    Ok(empty(StatusCode::OK))
}
