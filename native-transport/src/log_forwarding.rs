//! The task that forwards the app's log lines to the sessions that asked for them: each line at
//! or above a session's level becomes a `notifications/message` in its outbox. Lines the task
//! could not keep up with are counted and announced.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::broadcast;

use crate::jsonrpc;
use crate::logs::{LogLevel, LogRecord};
use crate::service::Shared;

/// Forwards the feed's lines to the sessions that asked for them, until the server stops.
pub(crate) async fn forward(shared: Arc<Shared>, mut lines: broadcast::Receiver<LogRecord>) {
    loop {
        let received = tokio::select! {
            () = shared.root.cancelled() => break,
            received = lines.recv() => received,
        };
        match received {
            Ok(record) => deliver(&shared, record.level, &record.logger, json!(record.message)),
            Err(broadcast::error::RecvError::Lagged(dropped)) => deliver(
                &shared,
                LogLevel::Warning,
                "transport",
                json!({
                    "message": format!("{dropped} log lines of the app were dropped: it logged faster than they could be forwarded"),
                    "droppedLines": dropped,
                }),
            ),
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
}

/// Sends one `notifications/message` to every session whose level lets it through.
fn deliver(shared: &Shared, level: LogLevel, logger: &str, data: serde_json::Value) {
    let mut message = None;
    shared.sessions.each(|session| {
        let wanted = session.log_level.lock().is_some_and(|least| level >= least);
        if wanted {
            let bytes = message.get_or_insert_with(|| {
                jsonrpc::to_bytes(&jsonrpc::notification(
                    "notifications/message",
                    json!({"level": level.as_str(), "logger": logger, "data": data}),
                ))
            });
            session.outbox.push(bytes);
        }
    });
}
