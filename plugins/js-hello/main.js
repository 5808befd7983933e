// js-hello: mcphost's example plugin in JavaScript (sdk/js/README.md).
// Built by build.sh into js-hello.wasm: the shared engine with this module
// in its mcphost.js section.
import { McpServer, config } from "mcphost";

const server = new McpServer({ name: "js-hello", version: "1.0.0" });

server.registerTool("greet", {
  description: "Greets someone by name, with the greeting of the plugin's config",
  inputSchema: {
    type: "object",
    properties: { name: { type: "string", description: "who to greet" } },
    required: ["name"],
  },
}, async ({ name }, ctx) => {
  ctx.log("info", `greeting ${name}`);
  return `${config("greeting") ?? "Hello"}, ${name}!`;
});

server.registerTool("add", {
  description: "Adds two numbers",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
  outputSchema: {
    type: "object",
    properties: { sum: { type: "number" } },
    required: ["sum"],
  },
}, ({ a, b }) => ({ sum: a + b }));

server.registerTool("fail", {
  description: "Throws, to show how an error reaches the client",
  inputSchema: { type: "object" },
}, () => {
  throw new Error("it failed on purpose");
});
