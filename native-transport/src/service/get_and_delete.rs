//! GET opens the session's own event stream (resumable); DELETE ends the session.

use super::*;

pub(super) fn get(
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

pub(super) fn delete(
    shared: &Arc<Shared>,
    parts: &Parts,
    token: Option<&Accepted>,
) -> Result<HttpResponse, Rejection> {
    let (session, _version) = session_for(shared, &parts.headers, token)?;
    shared.sessions.remove(&session.id);
    tracing::info!(session = %short(&session.id), "session deleted by the client");
    Ok(empty(StatusCode::OK))
}
