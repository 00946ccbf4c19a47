//! The HTTP checks every request passes before any JSON is read: Host, Origin, token, sizes and
//! media types. Each refusal is a typed [`Rejection`]; the status, the JSON-RPC code and the body
//! are built from it in exactly one place ([`Rejection::into_response`]).

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

use crate::jsonrpc::{self, RequestKey, codes};

/// The header carrying a capability token (the alternative is `Authorization: Bearer`).
pub const TOKEN_HEADER: &str = "x-mcp-capability-token";
/// How a token is shown in messages (a placeholder, never a value).
const TOKEN_EXAMPLE: &str = "X-MCP-Capability-Token: <token>";
/// The session header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";

/// A refused request. Its status, JSON-RPC code and message come from one place each
/// ([`Rejection::status`], [`Rejection::code`], [`Rejection::message`]); `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// Any path but `/mcp`.
    NotFound,
    /// A method other than POST, GET, DELETE or OPTIONS.
    MethodNotAllowed,
    /// `Host` is not a loopback name while bound to loopback (DNS rebinding).
    ForbiddenHost,
    /// More than one `Host` header (RFC 9112 section 3.2 asks for 400).
    DuplicateHost,
    /// The body did not arrive within the body read timeout.
    BodyTimeout,
    /// A batch with more messages than the limit.
    BatchTooLarge(usize),
    /// `Origin` is present and not allowed.
    ForbiddenOrigin,
    /// A CORS preflight the server does not grant.
    ForbiddenPreflight,
    /// No capability token on a server that needs one. Answered 403, not 401: a 401 sends
    /// OAuth-capable clients (Claude Code, `mcp-remote`) into an OAuth sign-in this server does
    /// not offer, and they report a registration failure instead of the missing token.
    TokenMissing,
    /// A capability token that is not one of the server's (403, for the same reason).
    TokenWrong,
    /// A token other than the one the session started with, or one taken away (401).
    Unauthorized(&'static str),
    /// The address sent wrong tokens and one of its requests waits for its check (429): its
    /// token was not looked at. Retry after the duration.
    TokenChecksThrottled(std::time::Duration),
    /// An OAuth discovery or registration path: this server has no OAuth, and says so in the
    /// shape OAuth clients read (`error`, `error_description`).
    NoOAuth {
        /// Whether the server needs a capability token.
        token_required: bool,
    },
    /// The body is larger than the limit.
    PayloadTooLarge(usize),
    /// A POST whose `Content-Type` is not JSON.
    UnsupportedMediaType,
    /// A request whose `Accept` lacks what the reply needs.
    NotAcceptable(&'static str),
    /// The body is not JSON.
    ParseError(String),
    /// Not a valid JSON-RPC request (or a batch where batches are not allowed).
    InvalidRequest(Option<RequestKey>, String),
    /// A request without `Mcp-Session-Id`.
    MissingSession,
    /// An unknown, expired or deleted session.
    UnknownSession,
    /// An unsupported `MCP-Protocol-Version` header.
    UnsupportedVersion(String),
    /// A second GET stream for one session.
    StreamConflict,
    /// Every session slot is busy and none can be evicted.
    TooManySessions,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Rejection {}

impl Rejection {
    /// The HTTP status of this refusal.
    pub fn status(&self) -> StatusCode {
        match self {
            Rejection::NotFound | Rejection::UnknownSession | Rejection::NoOAuth { .. } => {
                StatusCode::NOT_FOUND
            }
            Rejection::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Rejection::ForbiddenHost
            | Rejection::ForbiddenOrigin
            | Rejection::ForbiddenPreflight
            | Rejection::TokenMissing
            | Rejection::TokenWrong => StatusCode::FORBIDDEN,
            Rejection::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Rejection::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Rejection::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Rejection::NotAcceptable(_) => StatusCode::NOT_ACCEPTABLE,
            Rejection::ParseError(_)
            | Rejection::InvalidRequest(..)
            | Rejection::MissingSession
            | Rejection::UnsupportedVersion(_)
            | Rejection::DuplicateHost
            | Rejection::BatchTooLarge(_) => StatusCode::BAD_REQUEST,
            Rejection::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            Rejection::StreamConflict => StatusCode::CONFLICT,
            Rejection::TooManySessions => StatusCode::SERVICE_UNAVAILABLE,
            Rejection::TokenChecksThrottled(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// The JSON-RPC error code of the body.
    pub fn code(&self) -> i64 {
        match self {
            Rejection::ParseError(_) => codes::PARSE_ERROR,
            Rejection::InvalidRequest(..) | Rejection::BatchTooLarge(_) => codes::INVALID_REQUEST,
            Rejection::Unauthorized(_)
            | Rejection::TokenMissing
            | Rejection::TokenWrong
            | Rejection::TokenChecksThrottled(_) => codes::UNAUTHORIZED,
            _ => codes::TRANSPORT_REFUSED,
        }
    }

    /// What went wrong and what to do; never echoes a secret.
    pub fn message(&self) -> String {
        match self {
            Rejection::NotFound => "not found: the MCP endpoint is /mcp".to_owned(),
            Rejection::MethodNotAllowed => "method not allowed: use POST, GET, DELETE or OPTIONS on /mcp".to_owned(),
            Rejection::ForbiddenHost => "forbidden: the Host header must be localhost, 127.0.0.1 or [::1]".to_owned(),
            Rejection::DuplicateHost => "bad request: send exactly one Host header".to_owned(),
            Rejection::BodyTimeout => "request timeout: the body did not arrive in time; send it whole, then retry".to_owned(),
            Rejection::BatchTooLarge(max) => format!("invalid request: a batch holds at most {max} messages; split it"),
            Rejection::ForbiddenOrigin => "forbidden: this Origin may not call the server".to_owned(),
            Rejection::ForbiddenPreflight => {
                "forbidden: cross-origin requests are only allowed on a token-protected server from an allowed origin".to_owned()
            }
            Rejection::TokenMissing => format!(
                "this server needs its capability token: send it as the header {TOKEN_EXAMPLE} \
                 (or as a Bearer token); with Claude Code: claude mcp add --transport http NAME URL --header \"{TOKEN_EXAMPLE}\""
            ),
            Rejection::TokenWrong => format!(
                "the capability token is not one this server accepts: send a token of the app's tokens (its token file or \
                 BEVY_MCP_TOKEN) as {TOKEN_EXAMPLE}; a token removed from the tokens file stops working at once"
            ),
            Rejection::TokenChecksThrottled(retry) => format!(
                "too many wrong capability tokens from this address: this request's token was not checked; \
                 retry in {} s with the right token as {TOKEN_EXAMPLE}",
                retry.as_secs().max(1)
            ),
            Rejection::NoOAuth { token_required: true } => format!(
                "this server does not use OAuth: it needs its capability token as the header {TOKEN_EXAMPLE}; \
                 with Claude Code: claude mcp add --transport http NAME URL --header \"{TOKEN_EXAMPLE}\""
            ),
            Rejection::NoOAuth { token_required: false } => {
                "this server does not use OAuth and needs no sign-in: connect to /mcp directly".to_owned()
            }
            Rejection::Unauthorized(why) => format!(
                "unauthorized: {why}; send the token as X-MCP-Capability-Token or Authorization: Bearer"
            ),
            Rejection::PayloadTooLarge(limit) => format!("payload too large: the limit is {limit} bytes"),
            Rejection::UnsupportedMediaType => "unsupported media type: POST bodies must be Content-Type: application/json".to_owned(),
            Rejection::NotAcceptable(what) => format!("not acceptable: the Accept header must include {what}"),
            Rejection::ParseError(detail) => format!("parse error: the body is not JSON ({detail})"),
            Rejection::InvalidRequest(_, reason) => format!("invalid request: {reason}"),
            Rejection::MissingSession => {
                "bad request: missing Mcp-Session-Id header; call initialize first and send the id it returns".to_owned()
            }
            Rejection::UnknownSession => {
                "session not found (unknown, expired or deleted): initialize a new session".to_owned()
            }
            Rejection::UnsupportedVersion(version) => format!(
                "bad request: unsupported MCP-Protocol-Version {version:?}; supported: {}",
                jsonrpc::SUPPORTED_VERSIONS.join(", ")
            ),
            Rejection::StreamConflict => "conflict: this session already has an open GET stream".to_owned(),
            Rejection::TooManySessions => {
                "too many sessions and none is idle: DELETE a session you no longer use, then retry".to_owned()
            }
        }
    }

    /// Whether this refuses a request's token (missing, wrong, throttled): the throttle logs
    /// those, once per address and interval.
    pub fn is_token_refusal(&self) -> bool {
        matches!(
            self,
            Rejection::TokenMissing | Rejection::TokenWrong | Rejection::TokenChecksThrottled(_)
        )
    }

    /// Whether this is a security refusal worth a warning in the logs.
    pub fn is_security(&self) -> bool {
        matches!(
            self,
            Rejection::ForbiddenHost
                | Rejection::ForbiddenOrigin
                | Rejection::ForbiddenPreflight
                | Rejection::Unauthorized(_)
                | Rejection::TokenMissing
                | Rejection::TokenWrong
        )
    }

    /// The HTTP response: the status and a JSON-RPC error body answering `id` (the request's,
    /// when it could be read).
    pub fn into_response(self, id: Option<RequestKey>) -> Response<Full<Bytes>> {
        if let Rejection::NoOAuth { .. } = self {
            let body = serde_json::json!({
                "error": "invalid_request",
                "error_description": self.message(),
            });
            return json_response(self.status(), &body);
        }
        let id = match &self {
            Rejection::InvalidRequest(Some(own), _) => Some(own.clone()),
            _ => id,
        };
        let body = jsonrpc::error(id.as_ref(), self.code(), &self.message(), None);
        let mut response = json_response(self.status(), &body);
        if self == Rejection::MethodNotAllowed {
            response.headers_mut().insert(
                header::ALLOW,
                HeaderValue::from_static("POST, GET, DELETE, OPTIONS"),
            );
        }
        if matches!(self, Rejection::BodyTimeout) {
            // What is left of the body is still on the wire: the connection cannot be reused.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Rejection::TokenChecksThrottled(retry) = self
            && let Ok(seconds) = HeaderValue::from_str(&retry.as_secs().max(1).to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, seconds);
        }
        if matches!(self, Rejection::Unauthorized(_)) {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
        }
        response
    }
}

/// Whether a path is one an OAuth client probes (discovery, registration, sign-in).
pub fn is_oauth_path(path: &str) -> bool {
    path.starts_with("/.well-known/oauth-")
        || path.starts_with("/.well-known/openid-configuration")
        || matches!(path, "/register" | "/authorize" | "/token")
}

/// A JSON response with the given status.
pub fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response<Full<Bytes>> {
    let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
    let mut response = Response::new(Full::new(bytes));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Exactly one `Host` header: two could be read differently by a proxy and by this server.
pub fn check_single_host(headers: &HeaderMap) -> Result<(), Rejection> {
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return Err(Rejection::DuplicateHost);
    }
    Ok(())
}

/// `Host` must name loopback (any port) when the server is bound to loopback.
pub fn check_host(headers: &HeaderMap) -> Result<(), Rejection> {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .ok_or(Rejection::ForbiddenHost)?;
    if is_loopback_authority(host) {
        Ok(())
    } else {
        Err(Rejection::ForbiddenHost)
    }
}

/// `localhost`, `127.0.0.1` or `[::1]`, with an optional numeric port.
fn is_loopback_authority(authority: &str) -> bool {
    let lower = authority.to_ascii_lowercase();
    let host = if let Some(rest) = lower.strip_prefix("[::1]") {
        if !is_port_suffix(rest) {
            return false;
        }
        "[::1]"
    } else {
        let (host, port) = match lower.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (lower.as_str(), None),
        };
        if port.is_some_and(|port| port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit())) {
            return false;
        }
        return host == "localhost" || host == "127.0.0.1";
    };
    host == "[::1]"
}

fn is_port_suffix(rest: &str) -> bool {
    rest.is_empty()
        || rest
            .strip_prefix(':')
            .is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
}

/// The request's `Origin`, when present, as text (`None` when absent).
pub fn origin(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::ORIGIN)
        .map(|value| value.to_str().unwrap_or("\u{0}invalid"))
}

/// Whether an origin may call the server: a loopback origin (`http(s)://localhost`,
/// `127.0.0.1` or `[::1]`, optional port, no path) or one of the allowlist (exact,
/// case-insensitive). Never `null`, never anything with control characters.
pub fn origin_allowed(origin: &str, allowlist: &[String]) -> bool {
    if origin.chars().any(char::is_control) || origin.eq_ignore_ascii_case("null") {
        return false;
    }
    if allowlist
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let lower = origin.to_ascii_lowercase();
    let Some(authority) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    !authority.contains('/') && is_loopback_authority(authority)
}

/// The token a request presents, from `X-MCP-Capability-Token` or `Authorization: Bearer`.
pub fn presented_token(headers: &HeaderMap) -> Option<&str> {
    if let Some(value) = headers.get(TOKEN_HEADER) {
        return value.to_str().ok();
    }
    let authorization = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = authorization.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// `Content-Type` must be JSON (`application/json`, any parameters).
pub fn check_content_type(headers: &HeaderMap) -> Result<(), Rejection> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(Rejection::UnsupportedMediaType)
    }
}

/// Whether `Accept` contains `wanted` (matched by substring, as clients send lists).
pub fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains(wanted))
}

/// The declared `Content-Length`, when present and numeric.
pub fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            if let (Ok(name), Ok(value)) = (
                header::HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                map.append(name, value);
            }
        }
        map
    }

    #[test]
    fn host_must_be_loopback() {
        for good in [
            "localhost",
            "localhost:15720",
            "127.0.0.1",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:8080",
            "LOCALHOST",
        ] {
            assert_eq!(check_host(&headers(&[("host", good)])), Ok(()), "{good}");
        }
        for bad in [
            "evil.example.com",
            "127.0.0.1.evil.com",
            "localhost:",
            "localhost:80x",
            "[::1]x",
            "10.0.0.1",
            "0.0.0.0",
        ] {
            assert_eq!(
                check_host(&headers(&[("host", bad)])),
                Err(Rejection::ForbiddenHost),
                "{bad}"
            );
        }
        assert_eq!(check_host(&HeaderMap::new()), Err(Rejection::ForbiddenHost));
    }

    #[test]
    fn loopback_origins_and_the_allowlist_are_allowed() {
        let allow = vec!["https://tools.example.com".to_owned()];
        for good in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:1",
            "https://TOOLS.example.com",
        ] {
            assert!(origin_allowed(good, &allow), "{good}");
        }
        for bad in [
            "null",
            "http://evil.example.com",
            "http://localhost.evil.com",
            "http://localhost:3000/path",
            "file://localhost",
            "http://localhost\r\nx: y",
            "localhost",
            "https://tools.example.com:444",
        ] {
            assert!(!origin_allowed(bad, &allow), "{bad}");
        }
    }

    #[test]
    fn token_from_either_header() {
        let token = "a-very-long-token-1234";
        for presented in [
            headers(&[(TOKEN_HEADER, token)]),
            headers(&[("authorization", "Bearer a-very-long-token-1234")]),
            headers(&[("authorization", "bearer a-very-long-token-1234")]),
        ] {
            assert_eq!(presented_token(&presented), Some(token));
        }
        for bad in [
            headers(&[]),
            headers(&[("authorization", "Basic a-very-long-token-1234")]),
        ] {
            assert_eq!(presented_token(&bad), None);
        }
    }

    #[test]
    fn media_types() {
        assert!(
            check_content_type(&headers(&[(
                "content-type",
                "application/json; charset=utf-8"
            )]))
            .is_ok()
        );
        assert!(check_content_type(&headers(&[("content-type", "text/plain")])).is_err());
        assert!(check_content_type(&headers(&[])).is_err());
        assert!(accepts(
            &headers(&[("accept", "application/json, text/event-stream")]),
            "text/event-stream"
        ));
        assert!(!accepts(
            &headers(&[("accept", "text/html")]),
            "application/json"
        ));
    }

    #[test]
    fn rejections_map_to_status_and_code() {
        assert_eq!(Rejection::UnknownSession.status(), StatusCode::NOT_FOUND);
        assert_eq!(Rejection::MissingSession.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            Rejection::ParseError(String::new()).code(),
            codes::PARSE_ERROR
        );
        assert_eq!(
            Rejection::InvalidRequest(None, String::new()).code(),
            codes::INVALID_REQUEST
        );
        let message = Rejection::Unauthorized("the capability token is wrong").message();
        assert!(message.contains("X-MCP-Capability-Token"));
        for token in [Rejection::TokenMissing, Rejection::TokenWrong] {
            assert_eq!(token.status(), StatusCode::FORBIDDEN, "{token:?}");
            assert!(token.message().contains("X-MCP-Capability-Token: <token>"));
        }
    }

    #[test]
    fn oauth_probes_get_an_oauth_shaped_answer() {
        for path in [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
            "/register",
        ] {
            assert!(is_oauth_path(path), "{path}");
        }
        assert!(!is_oauth_path("/mcp") && !is_oauth_path("/.well-known/other"));
        let response = Rejection::NoOAuth {
            token_required: true,
        }
        .into_response(None);
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }
}
