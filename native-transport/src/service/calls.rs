//! Calls that run an action (`tools/call`, live `resources/read`): one lifecycle, audited, cancellable, bounded by a deadline.

use super::*;

/// `resources/read`: a reference page at once; a live resource runs its read action through
/// the dispatcher like a call (counted in flight, cancellable, with the call deadline).
pub(super) fn resources_read(
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
    let running = RunningCall {
        shared: Arc::clone(shared),
        session: Arc::clone(session),
        id,
        plan,
        answer_as: AnswerAs::Resource { uri },
        started: Instant::now(),
    };
    Reply::Call(running.spawn(call, None))
}

/// `tools/call`: the gateway decides (a reply of its own, or a plan), and a plan runs as a call
/// streamed back on its own SSE channel.
pub(super) fn tools_call(
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
        answer_as: AnswerAs::ToolResult { structured },
        started,
    };
    Reply::Call(running.spawn(call, progress_token))
}

/// How a finished call is answered.
pub(super) enum AnswerAs {
    /// A `tools/call` result (with `structuredContent` from 2025-06-18 on).
    ToolResult { structured: bool },
    /// The contents of the live resource `uri` (`resources/read`).
    Resource { uri: String },
}

/// A planned call on its way through the dispatcher: every call a client makes run (an
/// `execute`, a live resource) goes this one way, audited, cancellable and bounded by its
/// deadline.
pub(super) struct RunningCall {
    pub(super) shared: Arc<Shared>,
    pub(super) session: Arc<Session>,
    pub(super) id: RequestKey,
    pub(super) plan: ExecutePlan,
    pub(super) answer_as: AnswerAs,
    pub(super) started: Instant,
}

impl RunningCall {
    /// Spawns the call; its progress and its response come on the returned stream.
    pub(super) fn spawn(self, call: CallGuard, progress_token: Option<Value>) -> CallStream {
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

    pub(super) async fn run(
        self,
        call: &CallGuard,
        progress: ProgressSink,
        answer: oneshot::Sender<Bytes>,
    ) {
        let RunningCall {
            shared,
            session,
            id,
            plan,
            answer_as,
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
            let message = match answer_as {
                AnswerAs::ToolResult { structured } => {
                    let (outcome, images) = match outcome {
                        Ok(reply) => (Ok(reply.value), reply.images),
                        Err(error) => (Err(error), Vec::new()),
                    };
                    let finished = shared.gateway.finish(&plan, outcome);
                    let mut result = finished.tool_result(structured);
                    if !finished.is_error {
                        result = result.with_images(&images);
                    }
                    jsonrpc::to_bytes(&jsonrpc::Success::new(&id, result))
                }
                AnswerAs::Resource { uri } => {
                    let finished = shared
                        .gateway
                        .finish(&plan, outcome.map(|reply| reply.value));
                    match resources::contents(&uri, &finished) {
                        Ok(contents) => jsonrpc::to_bytes(&jsonrpc::result(&id, contents)),
                        Err(error) => jsonrpc::to_bytes(&jsonrpc::error(
                            Some(&id),
                            error.code,
                            &error.message,
                            error.data,
                        )),
                    }
                }
            };
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
pub(super) const WIND_DOWN: Duration = Duration::from_secs(1);

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
