// js-hello: mcphost's example plugin in JavaScript (sdk/js/README.md).
// Built by build.sh into js-hello.wasm: the shared engine with this module
// in its mcphost.js section.
import { McpError, McpServer, ResourceTemplate, config } from "mcphost";

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

server.registerResource("about", "hello://about", {
  title: "About js-hello",
  description: "What this plugin is",
  mimeType: "text/plain",
}, (uri) => `${uri.href}: mcphost's example plugin in JavaScript`);

const greetings = { en: "Hello", fr: "Bonjour", de: "Hallo", es: "Hola" };

server.registerResource("greeting", new ResourceTemplate("hello://greeting/{lang}", {
  complete: { lang: (value) => Object.keys(greetings).filter((l) => l.startsWith(value)) },
}), { description: "The greeting in a language (en, fr, de, es)", mimeType: "text/plain" }, (uri, { lang }) => {
  if (!(lang in greetings)) throw new McpError(-32002, "resource not found", { uri: uri.href });
  return greetings[lang];
});

server.registerPrompt("introduce", {
  description: "Asks the model to introduce someone",
  argsSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "who to introduce" },
      lang: { type: "string", description: "the language (en, fr, de, es)" },
    },
    required: ["name"],
  },
  complete: { lang: (value) => Object.keys(greetings).filter((l) => l.startsWith(value)) },
}, ({ name, lang }) => `Introduce ${name} in one sentence, starting with "${greetings[lang] ?? greetings.en}".`);
