// The fixed prefix of each window class as the loop builds it from the
// registry's tool specs, and the prompt llama-server renders from it with
// Qwen3's tool-calling chat template: shared by the budget test (counted
// with Qwen3's tokenizer) and `scripts/prefix-tokens.ts` (counted by a
// running llama-server).
import type { LlmRequest, ToolSpec } from "../lib/types";
import { isSmallWindow, offeredTools } from "../lib/agent/promptBudget";
import { shortSystemPrompt, systemPrompt } from "../lib/agent/systemPrompt";
import specsJson from "./toolSpecs.json";

export const SPECS = specsJson as ToolSpec[];
export const WINDOW_CLASSES = [2_048, 4_096, 8_192, 32_768];
const ROOT = "/home/me/src/app";

/** The prefix a request sends in `window` (no project instructions, no tools asked for). */
export function prefix(window: number): LlmRequest {
  return {
    system: isSmallWindow(window) ? shortSystemPrompt(ROOT, window, null) : systemPrompt(ROOT, SPECS, null),
    messages: [],
    tools: offeredTools(SPECS, window, new Set()),
  };
}

/** The tools as the Rust bridge sends them in the OpenAI format. */
export function openaiTools(request: LlmRequest) {
  return request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
}

/** JSON as Jinja's `tojson` writes it (Python's separators), keys sorted as the Rust bridge sends them. */
function pyJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(", ")}}`;
  }
  return JSON.stringify(value);
}

/** The system turn of Qwen3's chat template with tools, as llama-server renders it. */
export function qwen3Rendered(request: LlmRequest): string {
  const tools = openaiTools(request).map(pyJson);
  return (
    `<|im_start|>system\n${request.system}\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n` +
    `You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n${tools.join("\n")}\n</tools>\n\n` +
    `For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n` +
    `<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n`
  );
}

/** JSON as Jinja's `tojson(indent=4)` writes it in llama-server (each key on its own line), keys sorted. */
function indentedJson(value: unknown, depth = 0): string {
  const pad = (n: number) => " ".repeat(4 * n);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => pad(depth + 1) + indentedJson(v, depth + 1)).join(",\n")}\n${pad(depth)}]`;
  }
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([k, v]) => `${pad(depth + 1)}${JSON.stringify(k)}: ${indentedJson(v, depth + 1)}`).join(",\n")}\n${pad(depth)}}`;
  }
  return JSON.stringify(value);
}

/**
 * The prompt Llama 3.1's chat template (Llama-3.1-8B-Instruct's, as
 * llama-server renders it) makes of the prefix and an empty user turn: the
 * system turn with its environment line, and the tools in the first user
 * turn, each indented by 4. With `bare`, the same prompt with no system
 * message and no tools, which `scripts/prefix-tokens.ts` subtracts on the
 * server.
 */
export function llama3Rendered(request: LlmRequest, bare = false): string {
  const head = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n";
  const dates = "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
  const user = "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n";
  if (bare) return `${head}${dates}${user}<|eot_id|>`;
  const tools = openaiTools(request).map((tool) => `${indentedJson(tool)}\n\n`);
  return (
    `${head}Environment: ipython\n${dates}${request.system.trim()}${user}` +
    `Given the following functions, please respond with a JSON for a function call ` +
    `with its proper arguments that best answers the given prompt.\n\n` +
    `Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n` +
    `${tools.join("")}<|eot_id|>`
  );
}
