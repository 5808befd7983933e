// A 2025-11-25 client and a multi-round tool: the official TypeScript
// SDK's stdio client, declaring elicitation, calls plugins/everything's
// test_input_required_result_multi_round through `mcphost serve`. The
// plugin asks in two rounds; the host must send both elicitations to the
// client and answer with the complete result, and none of 2026-07-28's
// fields (resultType, inputRequests, requestState) may reach this client.
// Run by scripts/run-conformance.sh with the suite's Node 22 and the
// TypeScript SDK the suite depends on.
//
// usage: node ts-stdio-mrtr.mjs SUITE_DIR MCPHOST_BINARY CONFIG
//   SUITE_DIR: the directory whose node_modules holds @modelcontextprotocol/sdk
//   CONFIG: a config loading plugins/everything (testdata/conformance.toml)
import { createRequire } from "node:module";
import path from "node:path";

const [suiteDir, binary, config] = process.argv.slice(2);
const require = createRequire(path.join(suiteDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema, CallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");

const transport = new StdioClientTransport({ command: binary, args: ["serve", "--config", config], stderr: "inherit" });
const client = new Client({ name: "ts-stdio-mrtr", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });

// The answers, by the message the plugin shows in each round.
const answers = {
	"Step 1: What is your name?": { name: "Ada" },
	"Step 2: What is your favorite color?": { color: "green" },
};
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
	asked.push(req.params.message);
	const content = answers[req.params.message];
	if (!content) return { action: "decline" };
	return { action: "accept", content };
});

await client.connect(transport);
const { LATEST_PROTOCOL_VERSION: version } = require("@modelcontextprotocol/sdk/types.js");

const res = await client.request(
	{ method: "tools/call", params: { name: "test_input_required_result_multi_round", arguments: {} } },
	CallToolResultSchema,
);
const problems = [];
const text = res.content?.[0]?.text;
if (res.isError || text !== "Multi-round complete: Ada likes green") problems.push(`result ${JSON.stringify(res)}`);
for (const field of ["resultType", "inputRequests", "requestState", "ttlMs"]) {
	if (field in res) problems.push(`the result carries 2026-07-28's ${field}: ${JSON.stringify(res)}`);
}
if (asked.length !== 2) problems.push(`asked ${asked.length} elicitations (${JSON.stringify(asked)}), want 2`);

await client.close();
if (problems.length > 0) {
	console.error(`ts-stdio-mrtr: FAILED (protocol ${version}):\n  ${problems.join("\n  ")}`);
	process.exit(1);
}
console.log(`ts-stdio-mrtr: ok (protocol ${version}, ${asked.length} elicitation rounds asked, "${text}")`);
