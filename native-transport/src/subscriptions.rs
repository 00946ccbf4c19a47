//! Subscribed live resources: read again every `subscription_poll`, each distinct resource once
//! whatever the number of subscribers; a change (its volatile fields aside) is announced with
//! `notifications/resources/updated` on every subscriber's GET stream.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use crate::dispatch::ProgressSink;
use crate::jsonrpc::{self, RequestKey};
use crate::methods::resources::{self, Read};
use crate::service::{Shared, dispatch_call, run_call};

/// Most distinct resources read again in one round: every read is a frame's work for the app.
pub(crate) const MAX_WATCHED: usize = 64;

/// Watches the subscribed resources until the server stops.
pub(crate) async fn watch(shared: Arc<Shared>) {
    let mut interval = tokio::time::interval(shared.config.limits.subscription_poll);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last: HashMap<String, u64> = HashMap::new();
    loop {
        tokio::select! {
            () = shared.root.cancelled() => break,
            _ = interval.tick() => {}
        }
        let mut wanted = BTreeSet::new();
        shared
            .sessions
            .each(|session| wanted.extend(session.subscriptions.lock().iter().cloned()));
        last.retain(|uri, _| wanted.contains(uri));
        for uri in wanted.into_iter().take(MAX_WATCHED) {
            let Some(digest) = digest_of(&shared, &uri).await else {
                continue;
            };
            if last
                .insert(uri.clone(), digest)
                .is_some_and(|before| before != digest)
            {
                announce(&shared, &uri);
            }
        }
    }
}

/// The digest of the resource's contents now (an error, such as an entity gone, counts as
/// contents: its appearance is a change too).
async fn digest_of(shared: &Shared, uri: &str) -> Option<u64> {
    let Ok(Read::Live { plan, volatile, .. }) =
        resources::read(&shared.gateway, &json!({ "uri": uri }))
    else {
        return None;
    };
    let mut plan = *plan;
    let cancel = shared.root.child_token();
    let request = RequestKey::Text(format!("subscription {uri}"));
    let call = dispatch_call(
        &mut plan,
        "subscriptions",
        &request,
        ProgressSink::disabled(),
        &cancel,
    );
    let deadline = Instant::now() + plan.timeout;
    let outcome = run_call(shared, call, &cancel, &plan, deadline).await?;
    let finished = shared
        .gateway
        .finish(&plan, outcome.map(|reply| reply.value));
    Some(resources::fingerprint(&volatile, &finished))
}

/// Tells every subscriber of `uri` it changed.
fn announce(shared: &Shared, uri: &str) {
    let message = jsonrpc::to_bytes(&jsonrpc::notification(
        "notifications/resources/updated",
        json!({ "uri": uri }),
    ));
    shared.sessions.each(|session| {
        if session.subscriptions.lock().contains(uri) {
            session.outbox.push(&message);
        }
    });
}
