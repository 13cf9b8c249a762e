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
