"""Log lines and resource updates of the Bevy MCP bridge, through the official MCP Python SDK.

Usage: notify_client.py URL HEARTBEAT

Sets the log level to info and waits for a log line of the app starting with HEARTBEAT; then
subscribes to the world summary, spawns entities until the SDK surfaces a resources/updated
notification for it, and prints `NOTIFY OK {...}`. Any failure (or a wait past its bound) raises.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ResourceUpdatedNotification

SUMMARY = "bevy://world/summary"


async def main(url, heartbeat):
    logs = []
    updates = []

    async def on_log(params):
        logs.append(params)

    async def on_message(message):
        if isinstance(message, ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
            await session.initialize()
            await session.set_logging_level("info")
            line = None
            with anyio.fail_after(30):
                while line is None:
                    line = next(
                        (log for log in logs if isinstance(log.data, str) and log.data.startswith(heartbeat)),
                        None,
                    )
                    await anyio.sleep(0.05)
            await session.subscribe_resource(SUMMARY)
            with anyio.fail_after(30):
                index = 0
                while SUMMARY not in updates:
                    await session.call_tool(
                        "bevy",
                        {"operation": "execute", "tool": "control_entity", "action": "spawn", "params": {"name": f"Notify {index}"}},
                    )
                    index += 1
                    await anyio.sleep(0.5)
            print("NOTIFY OK " + json.dumps({"level": line.level, "logger": line.logger, "updated": SUMMARY}), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
