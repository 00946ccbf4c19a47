//! POST: one JSON-RPC message or a batch; initialize, notifications and requests.

use super::*;

pub(super) async fn post(
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
pub(super) async fn post_batch(
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

pub(super) fn session_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
}

/// The request's session (7) and effective protocol version (8).
pub(super) fn session_for(
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

pub(super) fn initialize(
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

pub(super) fn notification(session: &Session, method: &str, params: &Value) {
    if method == "notifications/cancelled"
        && let Some(key) = params.get("requestId").and_then(RequestKey::from_value)
        && session.cancel_call(&key)
    {
        tracing::debug!(session = %short(&session.id), request = %key, "call cancelled by the client");
    }
    // Unknown notifications are ignored, as JSON-RPC asks.
}

pub(super) fn request(
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
pub(super) fn set_log_level(session: &Session, params: &Value) -> Result<Value, MethodError> {
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
pub(super) fn subscribe(
    shared: &Shared,
    session: &Session,
    params: &Value,
) -> Result<Value, MethodError> {
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
pub(super) fn answered(id: &RequestKey, answer: Result<Value, MethodError>) -> Reply {
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
