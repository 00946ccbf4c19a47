//! `mcp-load`: drive any Streamable HTTP MCP server on loopback and print req/s and latency
//! percentiles as JSON.
//!
//! ```text
//! cargo run --release -p bevy_mcp_contract_tests --bin mcp-load -- \
//!     --url http://127.0.0.1:15720/mcp --concurrency 16 --requests 20000 --operation ping
//! ```

use std::process::ExitCode;
use std::time::Duration;

use bevy_mcp_contract_tests::load::{LoadConfig, Operation, run};
use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    /// JSON-RPC `ping`.
    Ping,
    /// `tools/call` with `--tool` and `--arguments`.
    Call,
    /// A plain JSON-RPC request, `--method` with `--arguments` as its params, without an MCP
    /// session (the Bevy Remote Protocol: `--method world.get_components`).
    Jsonrpc,
}

/// Load an MCP server and report throughput and latency.
#[derive(Debug, Parser)]
#[command(name = "mcp-load")]
struct Args {
    /// The endpoint, on loopback (e.g. http://127.0.0.1:15720/mcp).
    #[arg(long)]
    url: String,
    /// Concurrent clients, each with its own connection and session.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Requests in all.
    #[arg(long, default_value_t = 10_000)]
    requests: u64,
    /// Longest run, in seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// What to send.
    #[arg(long, value_enum, default_value_t = Kind::Ping)]
    operation: Kind,
    /// Tool name for `call`.
    #[arg(long, default_value = "bevy")]
    tool: String,
    /// Tool arguments (JSON) for `call`; params for `jsonrpc`.
    #[arg(long, default_value = r#"{"operation":"describe"}"#)]
    arguments: String,
    /// The method for `jsonrpc`.
    #[arg(long, default_value = "rpc.discover")]
    method: String,
    /// Protocol version to initialize with.
    #[arg(long, default_value = "2025-11-25")]
    version: String,
    /// Capability token, sent as Authorization: Bearer.
    #[arg(long)]
    token: Option<String>,
    /// Run every request in a new session.
    #[arg(long)]
    fresh_sessions: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let Some(rest) = args.url.strip_prefix("http://") else {
        eprintln!("error: --url must be http://HOST:PORT/PATH");
        return ExitCode::FAILURE;
    };
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(authority, path)| {
            (authority, format!("/{path}"))
        });
    let address = match authority.parse::<std::net::SocketAddr>() {
        Ok(address) if address.ip().is_loopback() => address,
        Ok(address) => {
            eprintln!(
                "error: {address} is not a loopback address; this tool only loads local servers"
            );
            return ExitCode::FAILURE;
        }
        Err(error) => {
            eprintln!("error: --url needs an IP and port ({error})");
            return ExitCode::FAILURE;
        }
    };
    let arguments = || {
        serde_json::from_str(&args.arguments)
            .map_err(|error| eprintln!("error: --arguments is not JSON: {error}"))
    };
    let operation = match args.operation {
        Kind::Ping => Operation::Ping,
        Kind::Call => match arguments() {
            Ok(arguments) => Operation::ToolsCall {
                tool: args.tool.clone(),
                arguments,
            },
            Err(()) => return ExitCode::FAILURE,
        },
        Kind::Jsonrpc => match arguments() {
            Ok(params) => Operation::JsonRpc {
                method: args.method.clone(),
                params,
            },
            Err(()) => return ExitCode::FAILURE,
        },
    };
    let config = LoadConfig {
        address,
        path,
        concurrency: args.concurrency,
        requests: args.requests,
        duration: Duration::from_secs(args.seconds),
        operation,
        version: args.version,
        token: args.token,
        fresh_sessions: args.fresh_sessions,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(report) => {
            println!("{}", report.to_json());
            if report.errors > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
