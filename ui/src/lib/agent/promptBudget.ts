// The fixed prefix of every request (system prompt, the project's
// instructions, tool specs) sized to the model's window. A window of up to
// `SMALL_WINDOW` tokens gets the short system prompt, the core tools with
// their descriptions' first sentence and bare schemas, and one more tool,
// `more_tools`, whose description names every other tool in a few words:
// the model asks for some by name (or calls one by its name), and from
// then on they are offered whole. One tool standing for nine costs far
// less than nine stand-ins, above all in templates that print each tool's
// JSON indented (Llama 3's). A tiny window (2k, 3k) gets less again, to
// keep the prefix within a quarter of it: read, edit and run with only the
// fields they need, strings untyped, no `required` list, and `more_tools`
// naming the others without their gist. Larger windows get everything as
// the registry gives it.
import type { ToolSpec } from "../types";

/** The largest window that gets the short prefix. */
export const SMALL_WINDOW = 8_192;

/** The largest window that gets the tiny prefix. */
export const TINY_WINDOW = 3_072;

/** The tools offered whole in a small window: read, search, edit, run. */
export const CORE_TOOLS: readonly string[] = ["read_file", "search_files", "edit_file", "exec_shell"];

/**
 * The tools a tiny window offers, each with the fields it is offered with:
 * reading in parts, editing, running. Search is one `more_tools` call (or
 * a `grep` through `exec_shell`) away.
 */
export const TINY_TOOLS: Readonly<Record<string, readonly string[]>> = {
  read_file: ["path", "start_line", "end_line"],
  edit_file: ["path", "old_string", "new_string"],
  exec_shell: ["command", "args"],
};

/**
 * Tools a tiny window's `more_tools` does not name: they read and stop a
 * command run in the background, which its `exec_shell` does not offer.
 */
const TINY_UNNAMED: readonly string[] = ["command_output", "stop_command"];

/** The tools offered whole in a window this size (a large one offers all). */
export function coreTools(window: number): readonly string[] {
  return isTinyWindow(window) ? Object.keys(TINY_TOOLS) : CORE_TOOLS;
}

/** The most of the project's instructions a small window is sent, in characters (about 300 tokens). */
export const SMALL_INSTRUCTIONS_CHARS = 1_200;

/** A tool as the request sends it. */
export type OfferedTool = Pick<ToolSpec, "name" | "description" | "input_schema">;

/** Whether a window this size gets the short prefix. */
export function isSmallWindow(window: number): boolean {
  return window <= SMALL_WINDOW;
}

/** Whether a window this size gets the tiny prefix. */
export function isTinyWindow(window: number): boolean {
  return window <= TINY_WINDOW;
}

/** The tool that stands for every tool not offered whole in a small window. */
export const MORE_TOOLS = "more_tools";

/**
 * The tools a request offers: all of them whole in a large window; in a
 * small one, the core tools and those the model asked for (`requested`)
 * compact, and `more_tools` naming the others.
 */
export function offeredTools(specs: readonly OfferedTool[], window: number, requested: ReadonlySet<string>): OfferedTool[] {
  if (!isSmallWindow(window)) return specs.map(({ name, description, input_schema }) => ({ name, description, input_schema }));
  const core = coreTools(window);
  const whole = (spec: OfferedTool) => core.includes(spec.name) || requested.has(spec.name);
  const rest = specs.filter((spec) => !whole(spec));
  const tiny = isTinyWindow(window);
  const offer = (spec: OfferedTool) => (tiny && core.includes(spec.name) ? tinyTool(spec) : compactTool(spec));
  return [...specs.filter(whole).map(offer), ...(rest.length === 0 ? [] : [moreTools(rest, tiny)])];
}

/** A tool with its description's first sentence and its schema without prose. */
export function compactTool(spec: OfferedTool): OfferedTool {
  return { name: spec.name, description: firstSentence(spec.description), input_schema: bareSchema(spec.input_schema) };
}

/**
 * A core tool as a tiny window offers it: its description's first clause,
 * the fields `TINY_TOOLS` names, strings untyped (a field with no type is
 * written as a string) and no `required` list (a call missing a field is
 * told so by its error).
 */
export function tinyTool(spec: OfferedTool): OfferedTool {
  const fields = TINY_TOOLS[spec.name];
  const properties = bareSchema(spec.input_schema).properties;
  const kept = typeof properties === "object" && properties !== null ? Object.entries(properties).filter(([field]) => !fields || fields.includes(field)) : [];
  return {
    name: spec.name,
    description: firstClause(spec.description),
    input_schema: { type: "object", properties: Object.fromEntries(kept.map(([field, schema]) => [field, untypedStrings(schema)])) },
  };
}

/** A field's schema with `"type": "string"` left out, and an `items` left empty by it. */
function untypedStrings(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(schema)) {
    if (key === "type" && inner === "string") continue;
    const value = key === "items" ? untypedStrings(inner) : inner;
    if (key === "items" && typeof value === "object" && value !== null && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return out;
}

/**
 * `more_tools`, naming each of `rest` with the gist of what it does (in a
 * tiny window, by name only).
 */
export function moreTools(rest: readonly OfferedTool[], namesOnly = false): OfferedTool {
  if (namesOnly) {
    const named = rest.map((spec) => spec.name).filter((name) => !TINY_UNNAMED.includes(name));
    return { name: MORE_TOOLS, description: `Get other tools by name: ${named.join(", ")}.`, input_schema: { type: "object", properties: { names: { type: "array" } } } };
  }
  const named = rest.map((spec) => `${spec.name} (${gist(spec.description)})`).join(", ");
  return {
    name: MORE_TOOLS,
    description: `Get more tools, by name; they are offered from your next step: ${named}.`,
    input_schema: { type: "object", properties: { names: { type: "array", items: { type: "string" } } }, required: ["names"] },
  };
}

/**
 * The tool names a `more_tools` call asks for. Lenient, as small models
 * write it: `names` as a list or a string, or `name`.
 */
export function namesAskedFor(input: Record<string, unknown>): string[] {
  const given = input.names ?? input.name ?? input.tools;
  const list = Array.isArray(given) ? given : typeof given === "string" ? given.split(/[\s,]+/) : [];
  return [...new Set(list.filter((name): name is string => typeof name === "string" && name.trim() !== "").map((name) => name.trim()))];
}

/** Whether `name` is offered as a stand-in, so that calling it asks for it. */
export function isOnRequest(name: string, window: number, specs: readonly OfferedTool[], requested: ReadonlySet<string>): boolean {
  return isSmallWindow(window) && !coreTools(window).includes(name) && !requested.has(name) && specs.some((s) => s.name === name);
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end < 0 ? text : text.slice(0, end + 1);
}

/**
 * A description's first sentence up to its first comma or colon outside
 * parentheses: "Run one allowlisted program (git cargo …) with an argument list".
 */
function firstClause(text: string): string {
  const sentence = firstSentence(text).replace(/\.$/, "");
  let depth = 0;
  for (let i = 0; i < sentence.length; i++) {
    const c = sentence[i];
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && (c === "," || c === ":")) return sentence.slice(0, i);
  }
  return sentence;
}

/** A description's first clause, without its examples: "Find files whose path matches a glob pattern". */
function gist(text: string): string {
  const sentence = firstSentence(text).replace(/\.$/, "");
  const end = sentence.search(/ \(|, | such as |: | like /);
  return end < 0 ? sentence : sentence.slice(0, end);
}

/** Keys of a JSON schema that only explain: the model gets the shape without them. */
const PROSE_KEYS = new Set(["description", "title", "format", "default", "examples", "$schema", "minimum", "maximum"]);

/**
 * A schema with its prose left out, and an optional field's `["T", "null"]`
 * written as `"T"` (leaving a field out is how it is left unset).
 */
export function bareSchema(schema: unknown): Record<string, unknown> {
  const bare = strip(schema);
  return typeof bare === "object" && bare !== null && !Array.isArray(bare) ? (bare as Record<string, unknown>) : { type: "object" };
}

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (PROSE_KEYS.has(key) || (key === "additionalProperties" && inner === false)) continue;
    if (key === "type" && Array.isArray(inner)) {
      const types = inner.filter((t) => t !== "null");
      out.type = types.length === 1 ? types[0] : types;
      continue;
    }
    // Property names are data, not prose: only their schemas are stripped.
    out[key] = key === "properties" ? mapValues(inner, strip) : strip(inner);
  }
  return out;
}

function mapValues(value: unknown, f: (v: unknown) => unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)]));
}

/** The project's instructions as a small window is sent them: cut, and saying so. */
export function instructionsFor(window: number, text: string): { text: string; cut: boolean } {
  if (!isSmallWindow(window) || text.length <= SMALL_INSTRUCTIONS_CHARS) return { text, cut: false };
  return { text: text.slice(0, SMALL_INSTRUCTIONS_CHARS), cut: true };
}

/**
 * What Test connection adds about a window this size: nothing for a large
 * one; for a small one, what Corral does about it and how to give the
 * model more room (Ollama's default window is 4,096 tokens).
 */
export function windowAdvice(window: number): string {
  if (!isSmallWindow(window)) return "";
  return " That is small: Corral sends a short prompt with the core tools only and reads long text in parts. For more room, start the server with a larger context: `llama-server -c 16384`, or for Ollama `OLLAMA_CONTEXT_LENGTH=16384 ollama serve` (or `num_ctx` in a Modelfile).";
}
