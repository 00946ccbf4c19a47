//! Reference servers for the benchmarks (`mcp-bench`): the same load against a minimal server on
//! the official Rust MCP SDK and against a raw hyper JSON echo shows what our transport costs.
//! Built for the benchmark only: no product crate depends on this one.

use std::net::SocketAddr;

use tokio::net::TcpListener;

/// Binds `127.0.0.1:PORT` (the first argument; 0 or none picks a free port) and prints
/// `listening on http://ADDR/mcp`, the line `mcp-bench` waits for.
pub async fn listen_from_args() -> Result<TcpListener, String> {
    let port: u16 = match std::env::args().nth(1) {
        None => 0,
        Some(port) => port
            .parse()
            .map_err(|error| format!("usage: PROGRAM [PORT]: {port:?}: {error}"))?,
    };
    let bound = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await;
    let listener = bound.map_err(|error| format!("cannot bind port {port}: {error}"))?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    println!("listening on http://{address}/mcp");
    Ok(listener)
}
