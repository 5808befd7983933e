// js-hello: mcphost's example plugin in JavaScript (sdk/js/README.md).
// Built by build.sh into js-hello.wasm: the shared engine with this module
// in its mcphost.js section.
import { McpServer, ResourceTemplate, config } from "mcphost";

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

// A resource, a resource template with completion of its variable, and a
// prompt with completion of its argument.
const colors = ["amber", "azure", "crimson", "emerald", "indigo", "ivory"];

server.registerResource("about", "js-hello://about", {
  description: "What this plugin is",
  mimeType: "text/markdown",
}, () => "# js-hello\n\nmcphost's example plugin in JavaScript.");

server.registerResource("color", new ResourceTemplate("js-hello://colors/{name}", {
  complete: { name: (value) => colors.filter((c) => c.startsWith(value)) },
}), { description: "A color by name", mimeType: "application/json" }, (uri, { name }) => {
  const index = colors.indexOf(name);
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ name, index, known: index >= 0 }) }] };
});

server.registerPrompt("describe_color", {
  description: "Asks the model to describe a color",
  arguments: [{ name: "color", description: "the color", required: true, complete: (value) => colors.filter((c) => c.startsWith(value)) }],
}, ({ color }) => `Describe the color ${color} in one sentence.`);
