"""Drive the Bevy MCP bridge with the official MCP Python SDK as a real client.

Usage: sdk_client.py URL

Connects over Streamable HTTP, initializes, lists tools, describes, executes, cancels a
long-running call from the client side, and shows the session still works. Prints one line
`INTEROP OK {...}` on success; any failure raises (non-zero exit).
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def payload(result):
    """The tool result's JSON payload (structuredContent when present, else the text)."""
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def execute(session, tool, action, params, **kwargs):
    result = await session.call_tool(
        "bevy",
        {"operation": "execute", "tool": tool, "action": action, "params": params},
        **kwargs,
    )
    body = payload(result)
    assert not result.is_error, f"{tool}.{action} failed: {body}"
    return body


async def main(url):
    summary = {}
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            summary["protocolVersion"] = init.protocol_version
            assert init.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26"), init.protocol_version

            tools = await session.list_tools()
            names = [tool.name for tool in tools.tools]
            assert names == ["bevy"], names
            summary["tools"] = names

            catalog = payload(await session.call_tool("bevy", {"operation": "describe"}))
            assert catalog["scope"] == "catalog", catalog
            summary["catalogTools"] = len(catalog["tools"])

            player = await execute(session, "inspect", "get_entity", {"entity": "Player"})
            assert player["entity"]["name"] == "Player", player

            await execute(session, "control_app", "pause", {})

            # Cancel a long step from the client side once progress shows it is running.
            progressed = anyio.Event()

            async def on_progress(progress, total, message):
                progressed.set()

            async def long_step():
                await execute(
                    session,
                    "control_app",
                    "step_frames",
                    {"frames": 100000},
                    progress_callback=on_progress,
                )

            async with anyio.create_task_group() as group:
                group.start_soon(long_step)
                with anyio.fail_after(30):
                    await progressed.wait()
                group.cancel_scope.cancel()
            summary["cancelledAfterProgress"] = True

            # The step restores the pause when it stops: wait (bounded) until the cancel landed.
            paused_again = False
            for _ in range(100):
                state = await execute(session, "control_app", "get_state", {})
                if state["paused"]:
                    paused_again = True
                    break
                await anyio.sleep(0.05)
            assert paused_again, "the cancelled step kept running"

            stepped = await execute(session, "control_app", "step_frames", {"frames": 3})
            assert stepped["stepped"] == 3, stepped
            summary["sessionUsableAfterCancel"] = True

            wrong = await session.call_tool("bevy", {"operation": "execute", "tool": "control_entty", "action": "spawn"})
            assert wrong.is_error and payload(wrong)["error"]["code"] == "UNKNOWN_TOOL", payload(wrong)

            # An action the game registered itself, found by intent and run like any other.
            found = payload(await session.call_tool("bevy", {"operation": "search", "query": "send a wave of enemies"}))
            assert (found["results"][0]["tool"], found["results"][0]["action"]) == ("game", "spawn_wave"), found
            wave = await execute(session, "game", "spawn_wave", {"count": 2})
            assert len(wave["spawned"]) == 2, wave
            summary["gameAction"] = "game.spawn_wave"
    print("INTEROP OK " + json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
