// Drive the Bevy MCP bridge with the official MCP TypeScript SDK across a restart of the app.
//
// Usage: node restart_client.mjs URL
//
// Connects over Streamable HTTP, initializes, makes a call, prints `READY <session id>`, waits
// for a line on stdin (the test restarts the app meanwhile), makes the next call on the same
// client and prints `RESTART OK {...}`. Any failure exits non-zero.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);

async function player(client) {
  const result = await client.callTool({
    name: "bevy",
    arguments: { operation: "execute", tool: "inspect", action: "get_entity", params: { entity: "Player" } },
  });
  if (result.isError) {
    throw new Error(`get_entity failed: ${JSON.stringify(result.content)}`);
  }
  const body = result.structuredContent ?? JSON.parse(result.content[0].text);
  if (body.entity?.name !== "Player") {
    throw new Error(`unexpected answer: ${JSON.stringify(body)}`);
  }
  return body.entity.id ?? body.entity.name;
}

const lines = createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));

const transport = new StreamableHTTPClientTransport(url);
// The GET stream breaks while the app restarts; the SDK reports it here and reconnects.
let streamErrors = 0;
const client = new Client({ name: "restart-client-ts", version: "1" });
await client.connect(transport);
transport.onerror = () => {
  streamErrors += 1;
};
const before = await player(client);
console.log(`READY ${transport.sessionId}`);
await nextLine();
const after = await player(client);
console.log(
  `RESTART OK ${JSON.stringify({ sessionId: transport.sessionId, before, after, streamErrors })}`,
);
await client.close();
process.exit(0);
