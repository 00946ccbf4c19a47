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

mod admission;
mod calls;
mod get_and_delete;
mod post;

pub(crate) use admission::Peer;
use admission::*;
pub(crate) use calls::*;
use get_and_delete::*;
use post::*;

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
