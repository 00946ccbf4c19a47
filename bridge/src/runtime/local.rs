//! Calls made from inside the app — a test, a replayed playtest, the app's own start-up — through
//! the same pipeline as a client's: the gateway's checks ([`Gateway::plan`]), the mailbox, and
//! the executor with its hooks (journal, recording) and frame budget. Only what belongs to a
//! client's session is left out: its tool visibility and consent grants.
//!
//! Nothing here waits: [`LocalCalls::start`] queues the call, and the caller runs frames until
//! [`PendingCall::try_answer`] has the answer.

use std::sync::Arc;

use bevy::prelude::Resource;
use mcp_native_transport::gateway::ExecutePlan;
use mcp_native_transport::jsonrpc::RequestKey;
use mcp_native_transport::{ActionReply, DispatchCall, Gateway, ProgressSink};
use mcp_vocabulary::ToolError;
use serde_json::Value;
use tokio::sync::oneshot::error::TryRecvError;
use tokio_util::sync::CancellationToken;

use crate::runtime::mailbox::{Answer, BridgeDispatch};

/// The gateway the server uses and the mailbox, for calls made in-process. Inserted when the
/// app's first frame has built the catalog.
#[derive(Resource, Clone)]
pub struct LocalCalls {
    gateway: Arc<Gateway>,
    dispatch: BridgeDispatch,
}

impl std::fmt::Debug for LocalCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCalls").finish_non_exhaustive()
    }
}

impl LocalCalls {
    /// In-process calls through `gateway` into the mailbox of `dispatch`.
    pub(crate) fn new(gateway: Arc<Gateway>, dispatch: BridgeDispatch) -> LocalCalls {
        LocalCalls { gateway, dispatch }
    }

    /// The gateway (shared with the server).
    pub fn gateway(&self) -> &Gateway {
        &self.gateway
    }

    /// The gateway, for the server to share.
    pub(crate) fn shared_gateway(&self) -> Arc<Gateway> {
        Arc::clone(&self.gateway)
    }

    /// Checks the call as the gateway checks a client's `execute` and queues it for the game
    /// thread as `session`; a refused call answers at once. Progress goes to `progress`.
    pub fn start(
        &self,
        session: &str,
        tool: &str,
        action: &str,
        params: Value,
        progress: ProgressSink,
    ) -> PendingCall {
        match self.gateway.plan(tool, action, params) {
            Ok(plan) => self.submit(session, plan, progress),
            Err(error) => PendingCall::answered(Err(error)),
        }
    }

    /// Queues a planned call (see [`Gateway::plan`]) for the game thread as `session`.
    pub fn submit(
        &self,
        session: &str,
        mut plan: ExecutePlan,
        progress: ProgressSink,
    ) -> PendingCall {
        let cancel = CancellationToken::new();
        let call = DispatchCall {
            tool: plan.tool,
            action: plan.action,
            params: std::mem::take(&mut plan.params),
            session_id: session.to_owned(),
            request: RequestKey::Number(0),
            progress,
            cancel: cancel.clone(),
        };
        match self.dispatch.submit(call) {
            Ok(answer) => PendingCall {
                answer: Waiting::Queued(answer),
                cancel,
            },
            Err(error) => PendingCall::answered(Err(error)),
        }
    }
}

/// A call made in-process, until its answer is taken.
#[derive(Debug)]
pub struct PendingCall {
    answer: Waiting,
    cancel: CancellationToken,
}

#[derive(Debug)]
enum Waiting {
    /// In the mailbox or running.
    Queued(Answer),
    /// Answered before it was queued (refused by the gateway or the mailbox).
    Answered(Option<Result<ActionReply, ToolError>>),
}

impl PendingCall {
    fn answered(result: Result<ActionReply, ToolError>) -> PendingCall {
        PendingCall {
            answer: Waiting::Answered(Some(result)),
            cancel: CancellationToken::new(),
        }
    }

    /// The answer, once the call has one (taken: later calls return `None`). A call the app
    /// dropped (it is shutting down) answers `APP_GONE`.
    pub fn try_answer(&mut self) -> Option<Result<ActionReply, ToolError>> {
        match &mut self.answer {
            Waiting::Answered(answer) => answer.take(),
            Waiting::Queued(answer) => match answer.try_recv() {
                Ok(result) => {
                    self.answer = Waiting::Answered(None);
                    Some(result)
                }
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Closed) => {
                    self.answer = Waiting::Answered(None);
                    Some(Err(ToolError::new(
                        mcp_vocabulary::codes::APP_GONE,
                        "the app dropped the call (it is shutting down)",
                    )))
                }
            },
        }
    }

    /// Cancels the call: a queued call never runs, a long-running one stops at its next frame.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The call's cancellation token, to cancel it from elsewhere.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }
}
