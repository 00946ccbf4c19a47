//! A raw Streamable HTTP client: every header is the test's choice, every status code and SSE
//! frame is visible. One TCP connection per request keeps tests independent.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

/// How long any single read in a test may take before the test fails instead of hanging.
pub const READ_LIMIT: Duration = Duration::from_secs(20);

/// The protocol versions the server speaks.
pub const VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// A request under construction.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// Method.
    pub method: Method,
    /// Path, e.g. `/mcp`.
    pub path: String,
    /// Headers, in order; a `None` value removes a default header.
    pub headers: Vec<(String, Option<String>)>,
    /// Body bytes.
    pub body: Bytes,
}

impl RawRequest {
    /// A request with the defaults a well-behaved client sends to `/mcp`.
    pub fn new(method: Method) -> Self {
        RawRequest {
            method,
            path: "/mcp".to_owned(),
            headers: vec![
                (
                    "content-type".to_owned(),
                    Some("application/json".to_owned()),
                ),
                (
                    "accept".to_owned(),
                    Some("application/json, text/event-stream".to_owned()),
                ),
            ],
            body: Bytes::new(),
        }
    }

    /// A POST of a JSON body.
    pub fn post(body: &Value) -> Self {
        let mut request = RawRequest::new(Method::POST);
        request.body = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        request
    }

    /// Sets (or replaces) a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        self.headers
            .push((name.to_ascii_lowercase(), Some(value.to_owned())));
        self
    }

    /// Removes a header (including a default one).
    #[must_use]
    pub fn without(mut self, name: &str) -> Self {
        self.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        self.headers.push((name.to_ascii_lowercase(), None));
        self
    }

    /// Sets the path.
    #[must_use]
    pub fn path(mut self, path: &str) -> Self {
        self.path = path.to_owned();
        self
    }

    /// Sets a raw body.
    #[must_use]
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }
}

/// Sends `request` to `address` on a fresh connection. `Host` defaults to the address.
pub async fn send(address: SocketAddr, request: RawRequest) -> Response<Incoming> {
    let stream = connect(address).await;
    send_on(TokioIo::new(stream), address, request).await
}

async fn connect(address: SocketAddr) -> TcpStream {
    let stream = tokio::time::timeout(READ_LIMIT, TcpStream::connect(address))
        .await
        .expect("connect in time")
        .expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

/// A TLS client that trusts only the certificates of the PEM file `ca_file` (what a client
/// given `NODE_EXTRA_CA_CERTS` or `SSL_CERT_FILE` does).
pub fn tls_client(ca_file: &std::path::Path) -> tokio_rustls::TlsConnector {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(ca_file).expect("read the CA file") {
        roots
            .add(certificate.expect("a PEM certificate"))
            .expect("a usable CA");
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
}

/// Sends `request` over TLS with `client`, checking that the certificate covers `server_name`
/// (a name or an IP address); `Err` with the reason when the handshake fails.
pub async fn send_tls(
    address: SocketAddr,
    client: &tokio_rustls::TlsConnector,
    server_name: &str,
    request: RawRequest,
) -> Result<Response<Incoming>, String> {
    let name = rustls_pki_types::ServerName::try_from(server_name.to_owned())
        .map_err(|error| error.to_string())?;
    let stream = connect(address).await;
    let tls = tokio::time::timeout(READ_LIMIT, client.connect(name, stream))
        .await
        .expect("handshake in time")
        .map_err(|error| error.to_string())?;
    Ok(send_on(TokioIo::new(tls), address, request).await)
}

/// Sends `request` on an open connection (plain or TLS).
async fn send_on<I>(io: I, address: SocketAddr, request: RawRequest) -> Response<Incoming>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .expect("handshake");
    tokio::spawn(async move {
        // The connection ends when the response body is dropped or the server closes it.
        let _ = connection.await;
    });
    let mut builder = Request::builder()
        .method(request.method.clone())
        .uri(&request.path);
    // hyper's connection-level client sends exactly the headers given: add Host unless the test
    // set it or removed it on purpose.
    let host_mentioned = request.headers.iter().any(|(name, _)| name == "host");
    if !host_mentioned {
        builder = builder.header("host", address.to_string());
    }
    for (name, value) in &request.headers {
        if let Some(value) = value {
            builder = builder.header(name.as_str(), value.as_str());
        }
    }
    let http_request = builder.body(Full::new(request.body)).expect("request");
    tokio::time::timeout(READ_LIMIT, sender.send_request(http_request))
        .await
        .expect("response in time")
        .expect("response")
}

/// The whole body as bytes.
pub async fn body_bytes(response: Response<Incoming>) -> Bytes {
    tokio::time::timeout(READ_LIMIT, response.into_body().collect())
        .await
        .expect("body in time")
        .expect("body")
        .to_bytes()
}

/// The whole body as JSON (`Null` when it is not JSON).
pub async fn body_json(response: Response<Incoming>) -> Value {
    serde_json::from_slice(&body_bytes(response).await).unwrap_or(Value::Null)
}

/// The status and JSON body of a response.
pub async fn status_json(response: Response<Incoming>) -> (StatusCode, Value) {
    let status = response.status();
    (status, body_json(response).await)
}

/// A response header as text.
pub fn header<'a>(response: &'a Response<Incoming>, name: &str) -> Option<&'a str> {
    response
        .headers()
        .get(name)
        .and_then(|value: &HeaderValue| value.to_str().ok())
}

/// Reads an SSE stream frame by frame.
#[derive(Debug)]
pub struct SseReader {
    body: Incoming,
    buffer: String,
}

/// One SSE event or comment.
#[derive(Debug, Clone, PartialEq)]
pub enum SseEvent {
    /// A `data:` message parsed as JSON (with its `event:` name, if any).
    Message(Option<String>, Value),
    /// A message with an `id:` (the GET stream's, which a client may resume after).
    Numbered(u64, Value),
    /// A `:` comment (keep-alive).
    Comment(String),
    /// Any other field block, as text (e.g. an `id:` the server should never send).
    Other(String),
}

impl SseReader {
    /// Starts reading a streaming response.
    pub fn new(response: Response<Incoming>) -> Self {
        SseReader {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when the stream ended. Fails the test after [`READ_LIMIT`].
    pub async fn next(&mut self) -> Option<SseEvent> {
        self.next_within(READ_LIMIT)
            .await
            .expect("an SSE event in time")
    }

    /// The next event, `Ok(None)` when the stream ended, `Err(())` when nothing came in time.
    pub async fn next_within(&mut self, limit: Duration) -> Result<Option<SseEvent>, ()> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                return Ok(Some(parse_block(block.trim_end())));
            }
            let frame = match tokio::time::timeout_at(deadline, self.body.frame()).await {
                Err(_) => return Err(()),
                Ok(None) => return Ok(None),
                Ok(Some(Err(_))) => return Ok(None),
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// Every remaining event until the stream ends.
    pub async fn rest(&mut self) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

fn parse_block(block: &str) -> SseEvent {
    if let Some(comment) = block.strip_prefix(':') {
        return SseEvent::Comment(comment.trim().to_owned());
    }
    let mut event = None;
    let mut id = None;
    let mut data = String::new();
    let mut other = false;
    for line in block.lines() {
        if let Some(number) = line.strip_prefix("id: ") {
            id = number.parse::<u64>().ok();
            other |= id.is_none();
        } else if let Some(name) = line.strip_prefix("event: ") {
            event = Some(name.to_owned());
        } else if let Some(text) = line.strip_prefix("data: ") {
            data.push_str(text);
        } else {
            other = true;
        }
    }
    match (serde_json::from_str(&data), id) {
        (Ok(value), Some(id)) if !other => SseEvent::Numbered(id, value),
        (Ok(value), None) if !other => SseEvent::Message(event, value),
        _ => SseEvent::Other(block.to_owned()),
    }
}
