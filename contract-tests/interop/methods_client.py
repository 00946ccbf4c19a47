"""Prompts, resources and completions of the Bevy MCP bridge, through the official MCP Python SDK.

Usage: methods_client.py URL

Lists and gets a prompt, lists and reads resources (the action reference, the Player entity),
completes an entity name prefix, and prints `METHODS OK {...}`. Any failure raises.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import PromptReference, ResourceTemplateReference


async def main(url):
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            assert initialized.capabilities.prompts is not None, initialized.capabilities
            assert initialized.capabilities.resources is not None, initialized.capabilities
            prompts = await session.list_prompts()
            got = await session.get_prompt("inspect_entity", {"entity": "Player"})
            text = got.messages[0].content.text
            resources = await session.list_resources()
            uris = [str(resource.uri) for resource in resources.resources]
            assert "bevy://reference/inspect" in uris, uris
            reference = await session.read_resource("bevy://reference/inspect")
            assert "inspect.get_entity" in reference.contents[0].text
            player = await session.read_resource("bevy://entity/Player")
            body = json.loads(player.contents[0].text)
            completions = []
            for _ in range(100):
                done = await session.complete(
                    ResourceTemplateReference(type="ref/resource", uri="bevy://entity/{entity}"),
                    {"name": "entity", "value": "Pl"},
                )
                completions = done.completion.values
                if completions:
                    break
                await anyio.sleep(0.05)
            prompt_completion = await session.complete(
                PromptReference(type="ref/prompt", name="inspect_entity"), {"name": "entity", "value": "Cra"}
            )
            assert "Crate" in prompt_completion.completion.values, prompt_completion
            print(
                "METHODS OK "
                + json.dumps(
                    {
                        "prompts": [prompt.name for prompt in prompts.prompts],
                        "promptStartsWith": text[: len("Inspect Player")],
                        "player": body["entity"]["name"],
                        "completions": completions,
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
