// ts-hello: mcphost's example plugin in TypeScript (docs/typescript.md).
// Two files, bundled by `mcphost plugin build`, on mcphost's JavaScript
// engine inside the sandbox.
import { McpServer, McpError, type CallToolResult } from "mcphost";
import { wordStats, type WordStats } from "./words";

const server = new McpServer({ name: "ts-hello", version: "1.0.0" });

interface CountArgs {
  text: string;
  top?: number;
}

server.registerTool<CountArgs>("count_words", {
  title: "Count words",
  description: "Counts the words of a text and lists the most frequent ones.",
  inputSchema: {
    type: "object",
    properties: {
      text: { type: "string", description: "the text" },
      top: { type: "integer", minimum: 1, maximum: 50, description: "how many of the most frequent words (default 3)" },
    },
    required: ["text"],
  },
  outputSchema: {
    type: "object",
    properties: {
      words: { type: "integer" },
      distinct: { type: "integer" },
      top: { type: "array", items: { type: "object" } },
    },
    required: ["words", "distinct", "top"],
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
}, ({ text, top = 3 }): CallToolResult => {
  if (text.length > 1_000_000) {
    throw new McpError(-32602, "text: at most 1,000,000 characters");
  }
  const stats: WordStats = wordStats(text, top);
  return { content: [{ type: "text", text: JSON.stringify(stats) }], structuredContent: stats };
});

server.registerTool("divide", {
  description: "Divides a by b; dividing by zero fails, naming the line of words.ts that refused it.",
  inputSchema: {
    type: "object",
    properties: { a: { type: "number" }, b: { type: "number" } },
    required: ["a", "b"],
  },
}, ({ a, b }: { a: number; b: number }) => String(divide(a, b)));

function divide(a: number, b: number): number {
  return checkedDivide(a, b);
}

import { checkedDivide } from "./words";
