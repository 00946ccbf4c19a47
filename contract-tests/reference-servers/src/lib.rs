//! Reference servers for the benchmarks (`mcp-bench`): the same load against a minimal server on
//! the official Rust MCP SDK and against a raw hyper JSON echo shows what our transport costs.
//! Built for the benchmark only: no product crate depends on this one.

use std::net::SocketAddr;

use tokio::net::TcpListener;

/// Binds `127.0.0.1:port` (0 picks a free port) and prints `listening on http://ADDR/mcp`, the
/// line `mcp-bench` waits for.
pub async fn bind_and_announce(port: u16) -> std::io::Result<TcpListener> {
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    Ok(listener)
}

/// The port from the first argument, or 0.
pub fn port_from_args() -> Result<u16, String> {
    match std::env::args().nth(1) {
        None => Ok(0),
        Some(port) => port
            .parse()
            .map_err(|error| format!("usage: PROGRAM [PORT]: {port:?}: {error}")),
    }
}
