"""Drive the Bevy MCP bridge with the official MCP Python SDK across a restart of the app.

Usage: restart_client.py URL

Connects over Streamable HTTP, initializes, makes a call, prints `READY <session id>`, waits
for a line on stdin (the test restarts the app meanwhile), makes the next call in the same
session and prints `RESTART OK {...}`. Any failure raises (non-zero exit).
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def player(session):
    result = await session.call_tool(
        "bevy",
        {"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"entity": "Player"}},
    )
    body = result.structured_content if result.structured_content is not None else json.loads(result.content[0].text)
    assert not result.is_error, f"get_entity failed: {body}"
    assert body["entity"]["name"] == "Player", body
    return body["entity"].get("id", body["entity"]["name"])


async def main(url):
    async with streamable_http_client(url) as (read, write, *rest):
        async with ClientSession(read, write) as session:
            await session.initialize()
            before = await player(session)
            session_id = rest[0]() if rest else None
            print(f"READY {session_id}", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            after = await player(session)
            print("RESTART OK " + json.dumps({"sessionId": session_id, "before": before, "after": after}), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
