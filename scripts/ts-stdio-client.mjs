// A new user's client: the official TypeScript SDK's stdio client launches
// `mcphost serve` as a desktop client would, lists the tools and calls
// hello's echo. Run by scripts/run-conformance.sh with the suite's Node 22
// and the TypeScript SDK the suite depends on.
//
// usage: node ts-stdio-client.mjs SUITE_DIR MCPHOST_BINARY CONFIG
//   SUITE_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk
import { createRequire } from "node:module";
import path from "node:path";

const [suiteDir, binary, config] = process.argv.slice(2);
const require = createRequire(path.join(suiteDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const transport = new StdioClientTransport({ command: binary, args: ["serve", "--config", config], stderr: "ignore" });
const client = new Client({ name: "ts-stdio-check", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
if (!names.includes("echo")) throw new Error(`tools/list has no echo: ${names.join(", ")}`);

const res = await client.callTool({ name: "echo", arguments: { text: "hello from TypeScript" } });
const text = res.content?.[0]?.text;
if (res.isError || text !== "hello from TypeScript") throw new Error(`echo returned ${JSON.stringify(res)}`);

const bad = await client.callTool({ name: "echo", arguments: {} });
if (!bad.isError) throw new Error(`echo without text did not fail: ${JSON.stringify(bad)}`);

await client.close();
console.log(`ts-stdio-client: ok (server ${client.getServerVersion()?.name}, ${names.length} tools, echo answered)`);
