//! Admitting a request: the router, CORS, tokens (slowed when wrong), the session it names.

use super::*;

/// A refusal, and the id of the request it answers when that could be read.
pub(super) struct Refused {
    pub(super) rejection: Rejection,
    pub(super) id: Option<RequestKey>,
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
    pub(super) fn answering(id: &RequestKey) -> impl FnOnce(Rejection) -> Refused + '_ {
        move |rejection| Refused {
            rejection,
            id: Some(id.clone()),
        }
    }
}

/// How long a refused POST's body is waited for, to answer with its id.
pub(super) const PEEK_WINDOW: Duration = Duration::from_secs(1);
/// The largest body of a refused POST that is read for its id: a request without the token must
/// not make the server parse what only an admitted one may send (4 MiB).
pub(super) const PEEK_MAX_BYTES: usize = 64 * 1024;

/// Refuses a POST before its body was read; a small body is still read (at most
/// [`PEEK_MAX_BYTES`] and [`PEEK_WINDOW`]) so the error can answer the request's id, as clients
/// match on it.
pub(super) async fn refuse_unread(
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
pub(super) fn cors_origin(shared: &Shared, headers: &HeaderMap) -> Option<HeaderValue> {
    if !shared.tokens.required() {
        return None;
    }
    let origin = http_guard::origin(headers)?;
    http_guard::origin_allowed(origin, &shared.config.allowed_origins)
        .then(|| HeaderValue::from_str(origin).ok())
        .flatten()
}

pub(super) fn add_cors_headers(headers: &mut HeaderMap, origin: &HeaderValue, preflight: bool) {
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

pub(super) async fn route(
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
pub(super) fn mark_request_read(parts: &Parts) {
    if let Some(connection) = parts.extensions.get::<Arc<Connection>>() {
        connection.request_read();
    }
}

/// What the checks of the request's head before the token let through.
pub(super) enum Admitted {
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
pub(super) async fn admit_token(
    shared: &Shared,
    parts: &Parts,
) -> Result<Option<Accepted>, Rejection> {
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
pub(super) const REVOKED: &str = "this session's token was removed from the tokens file or its scope changed, so the session ended; initialize a new session with a current token";

/// Ends a throttled wait that never reached its check (the client went away), so the address's
/// next request is not turned away as if one still waited.
pub(super) struct WaitingCheck<'a> {
    pub(super) throttle: &'a Throttle,
    pub(super) address: std::net::IpAddr,
    pub(super) pending: bool,
}

impl Drop for WaitingCheck<'_> {
    fn drop(&mut self) {
        if self.pending {
            self.throttle.abandon(self.address);
        }
    }
}

/// The checks that need only the request's head, in the order of DESIGN section 2.
pub(super) fn admit(shared: &Shared, parts: &Parts) -> Result<Admitted, Rejection> {
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
