//! Engine-agnostic MCP server: a hand-rolled Streamable HTTP/SSE transport on hyper and the one
//! gateway tool through which a model describes, searches, executes and configures a catalog.
//!
//! It owns HTTP, sessions, security, SSE, cancellation and progress, and the gateway (resolution,
//! validation, consent, shaping). It is handed a `&'static Catalog` (from `mcp_vocabulary`), an
//! [`Identity`] (tool name, texts, server name: product identity is configuration) and a
//! [`Dispatch`] that executes validated actions. It must never depend on an engine (Bevy) or on
//! a generated catalog.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use mcp_native_transport::{ServerBuilder, ServerConfig, Dispatch, DispatchCall, DispatchFuture};
//! # struct Echo;
//! # impl Dispatch for Echo {
//! #     fn dispatch(&self, call: DispatchCall) -> DispatchFuture { Box::pin(async move { Ok(call.params.into()) }) }
//! # }
//! # async fn run(catalog: &'static mcp_native_transport::catalog::Catalog) -> Result<(), mcp_native_transport::TransportError> {
//! let mut config = ServerConfig::default();
//! config.port(0);
//! let server = ServerBuilder::new(config, catalog).start(Arc::new(Echo)).await?;
//! println!("serving {}", server.url());
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Rules and the tests that pin them
//!
//! | rule (DESIGN section 2) | test (`contract-tests/tests/transport.rs`, over real HTTP, unless noted) |
//! |---|---|
//! | path 404, method 405 | `wrong_path_is_404_and_wrong_method_405` |
//! | Host 403 on loopback | `host_must_be_loopback` |
//! | Origin 403, loopback origins allowed | `origin_rules` |
//! | CORS preflight only with a token | `cors_preflight_rules` |
//! | token missing/wrong/empty/short 403 naming the header (no OAuth challenge), both headers | `token_rules` |
//! | OAuth discovery and registration paths answer an OAuth-shaped error naming the token | `oauth_probes_are_told_the_server_needs_its_token` |
//! | HTTP-layer errors answer the request's id when the body could be read | `http_errors_answer_the_request_id` |
//! | session bound to its token | `token_swap_on_a_live_session_is_401` |
//! | scoped tokens: `SCOPE_DENIED` beyond the scope, world unchanged; `describe`/`search` say `mayRun`; no widening mid-session; the audit names tokens by label | `lan_access.rs`: `each_scope_runs_what_it_allows_and_a_refusal_changes_nothing` |
//! | the tokens file is read again while running: new token works, removed token's session 401, malformed file keeps the tokens | `lan_access.rs`: `the_tokens_file_is_read_again_while_the_server_runs`, `tokens::tests`, `tokens::file::tests` |
//! | TLS with a made CA (Rust client, Python SDK), plain HTTP on the TLS port refused, untrusted CA refused | `lan_access.rs`: `tls_serves_a_client_that_trusts_the_made_ca_and_refuses_plain_http`, `the_official_python_sdk_works_over_tls_with_a_token`, `tls::tests` |
//! | wrong tokens slowed per address (bounded memory, 429 while one waits, logged once per interval), live sessions never, the right token gets in | `lan_access.rs`: `wrong_tokens_are_slowed_and_live_sessions_are_not`, `the_right_token_still_gets_in_after_wrong_ones`, `tokens::throttle::tests` |
//! | non-loopback bind refused without token | `config::tests::bind_policy`, `non_loopback_bind_without_token_is_refused` |
//! | 413 by Content-Length and by streamed size | `oversized_bodies_are_413` |
//! | 415 Content-Type, 406 Accept | `media_type_rules` |
//! | 400 -32700 / -32600 | `json_and_jsonrpc_validity` |
//! | batches only on 2025-03-26 | `batches_only_on_2025_03_26` |
//! | 400 without session, 404 unknown, DELETE then 404 | `session_lifecycle` |
//! | second initialize 400 | `second_initialize_is_refused` |
//! | version header rules | `version_header_rules` |
//! | negotiation incl. `id: 0`, unknown -> latest, -32602 | `initialize_negotiation` |
//! | notifications 202, ping, unknown method -32601 | `methods` |
//! | one GET stream, 409 for a second; DELETE ends it | `one_get_stream_per_session`, `delete_ends_the_get_stream` |
//! | session cap eviction, 503 when none can go | `session_cap_evicts` + `session::tests` |
//! | new sessions safe for the eviction grace: clients connecting together all get in | `restarts_and_crowds.rs`: `clients_connecting_together_at_the_cap_all_get_in`, `session::tests::new_sessions_are_safe_during_the_grace` |
//! | sessions kept across a restart (0600 file), deleted ones not, other tokens' not | `restarts_and_crowds.rs`: `sessions_survive_a_restart_of_the_server`, `a_kept_session_needs_its_token_still_configured`; with both SDKs: `restart_continuity.rs` |
//! | at the connection cap, connections without a whole request give way | `restarts_and_crowds.rs`: `stalled_connections_give_way_to_a_new_client`, `connections::tests` |
//! | idle expiry | `idle_sessions_expire` |
//! | in-flight cap | `in_flight_cap` |
//! | cancel a queued call: it never runs | `cancelling_a_queued_call_drops_it` |
//! | cancel a running call: no response, session usable | `cancelling_a_running_call_sends_nothing_more` |
//! | cancel from another session has no effect | `a_cancel_from_another_session_changes_nothing` |
//! | `"1"` and `1` are different requests | `string_and_number_ids_are_different_requests` |
//! | cancel markers bounded | `session::tests::cancel_is_per_key_and_markers_are_bounded` |
//! | progress strictly increasing, type-preserving, stops at completion | `progress_is_increasing_and_stops_at_completion` |
//! | deadline expiry cancels the job, `TIMEOUT` | `deadline_expiry_cancels_the_job` |
//! | the deadline is the transport's alone: `TIMEOUT` on the real bridge wherever the deadline falls | `bridge_e2e.rs`: `a_call_past_its_deadline_answers_timeout_every_time` |
//! | in-process callers get the same checks as `execute` but consent and visibility | `Gateway::plan`; `bridge/RULES.md` (one pipeline) |
//! | one `Host` header, else 400 | `bounds.rs`: `two_host_headers_are_400` |
//! | a stalled body is cut off with 408 | `bounds.rs`: `a_stalled_body_is_cut_off_with_408` |
//! | names, queries, ids bounded before any work; no suggestions, no echo over the cap | `bounds.rs`: `huge_names_and_queries_are_refused_without_work_or_echo`, `request_ids_are_bounded_in_length`, `guidance::tests` |
//! | batch entry limit | `bounds.rs`: `batches_hold_a_bounded_number_of_messages` |
//! | paging arithmetic saturates | `bounds.rs`: `paging_past_the_end_is_an_empty_page` |
//! | one token's sessions never evict another's | `session::tests::one_tokens_sessions_never_evict_anothers` |
//! | audit entries keep a bounded summary of params; errors never echo a huge value | `audit::tests::entries_keep_a_bounded_summary_of_the_params`, `bounds.rs`: `audit_entries_of_huge_calls_stay_small` |
//! | SSE framing, keep-alive; a call's stream: progress, then its answer | `sse::tests` |
//! | a call answered within `json_reply_window` before any progress is one JSON body; otherwise SSE | `quick_answers_are_json_and_the_rest_stream` |
//! | shutdown cancels calls and stops listening | `shutdown_ends_calls_and_sessions` |
//! | prompts from records, filled; unknown/missing arguments -32602; titles from 2025-06-18 | `mcp_methods.rs`: `prompts_are_listed_and_filled_at_every_version` |
//! | resources: the action reference, live reads, templates, -32002 for what is not there | `mcp_methods.rs`: `resources_give_the_action_reference_and_the_live_world`, `methods::resources::tests` |
//! | completions from the live app | `mcp_methods.rs`: `completions_come_from_the_live_app`, `methods::completion::tests` |
//! | subscriptions: updates on change only, none after unsubscribing | `mcp_methods.rs`: `subscribers_hear_when_a_live_resource_changes` |
//! | log lines at the session's level on its GET stream; ids; `Last-Event-ID` resumes exactly | `log_stream.rs`, `outbox::tests` |
//! | the same with the official Python SDK | `mcp_methods.rs`: `the_official_python_sdk_lists_gets_reads_and_completes` |
//! | audit redaction | `audit::tests` |

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// What the running app is made of, in words `search` can match (the search crate's).
pub use mcp_search::terms as app_terms;
pub mod audit;
pub mod config;
mod connections;
pub mod dispatch;
mod error;
pub mod gateway;
mod http_guard;
mod identity;
pub mod jsonrpc;
mod log_forwarding;
pub mod logs;
mod methods;
mod outbox;
mod private_file;
mod server;
mod service;
mod session;
mod session_file;
mod sse;
mod subscriptions;
pub mod tls;
pub mod tokens;

pub use app_terms::{AppTerms, AppTermsFeed, Term, TermField, TermKind};
pub use audit::{AuditEntry, AuditSink};
pub use config::{Limits, ServerConfig};
pub use dispatch::{
    ActionReply, Dispatch, DispatchCall, DispatchFuture, ImageContent, ProgressSink,
};
pub use error::TransportError;
pub use gateway::tool::{SurfaceReport, surface_report};
pub use gateway::{Gateway, StartVisibility};
pub use identity::{Identity, LiveResource, Lookup};
pub use logs::{LogFeed, LogLevel, LogRecord};
pub use mcp_vocabulary::{ErrorCode, ToolError, catalog, codes, next_call};
pub use server::{ServerBuilder, ServerHandle, ServerStats};
pub use tls::{TlsConfig, TlsTrust};
pub use tokens::{GeneratedToken, Token, generate_token};
