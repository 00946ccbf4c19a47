"""Drive the Bevy MCP bridge over HTTPS with the official MCP Python SDK and a capability token.

Usage: BEVY_MCP_TOKEN=... tls_client.py URL CA_FILE

Trusts only CA_FILE (the CA the app made for its certificate), sends the token as
X-MCP-Capability-Token, initializes, reads the Player entity, tries a destructive action and
prints `TLS OK {...}` with what came back. Any failure raises (non-zero exit).
"""

import json
import os
import ssl
import sys

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def payload(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def main(url, ca_file):
    context = ssl.create_default_context(cafile=ca_file)
    headers = {"X-MCP-Capability-Token": os.environ["BEVY_MCP_TOKEN"]}
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with httpx2.AsyncClient(verify=context, headers=headers, timeout=timeout) as client:
        async with streamable_http_client(url, http_client=client) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                player = await session.call_tool(
                    "bevy",
                    {"operation": "execute", "tool": "inspect", "action": "get_entity", "params": {"entity": "Player"}},
                )
                body = payload(player)
                assert not player.is_error, body
                despawn = await session.call_tool(
                    "bevy",
                    {"operation": "execute", "tool": "control_entity", "action": "despawn", "params": {"entity": "Crate"}},
                )
                refused = payload(despawn)
                assert despawn.is_error, refused
                print("TLS OK " + json.dumps({"player": body["entity"]["name"], "despawn": refused["error"]["code"]}), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
