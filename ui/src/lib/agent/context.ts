// Keeping the conversation inside the model's context window: a
// tokenizer-free estimate of a request's size (calibrated against the
// usage the server reports), trimming of large old tool results, and the
// compaction boundary: the older part of the transcript becomes a summary
// the model writes, never cut between a tool call and its result.
import type { LlmRequest, Message, TextBlock, ToolResultBlock } from "../types";
import type { Compaction } from "./state";
import { FOLDER_INSTRUCTIONS_PREFIX } from "./instructions";

/** Compaction starts when the next request would use this share of the window. */
export const COMPACT_AT = 0.8;
/** A window to assume when the server does not say and the model is unknown. */
export const DEFAULT_CONTEXT_WINDOW = 32_768;
/** Tool results larger than this, outside the recent part, are trimmed first. */
export const TRIM_OVER_CHARS = 2_000;
/** Messages at the end of the transcript that are never trimmed or summarized. */
export const KEEP_RECENT = 6;

/**
 * Characters per token, learned from what the server reports: starts at 4
 * (English and code average about 3.5-4.5) and moves to the ratio of the last
 * request's characters to its reported input tokens.
 */
export class TokenEstimate {
  private charsPerToken = 4;
  /**
   * Whether the model's chat template writes each tool's JSON indented,
   * one key per line (Llama 3's Hugging Face template): the server says
   * (`ModelInfo.indents_tools`), and each line then costs about two tokens.
   */
  indentedTools = false;

  /**
   * The estimated tokens of a request: its JSON, as sent, and what the
   * chat template wraps around it (see `templateTokens`).
   */
  tokens(request: LlmRequest): number {
    return Math.ceil(requestChars(request) / this.charsPerToken) + templateTokens(request, this.indentedTools);
  }

  /**
   * Learns from a request that the server counted as `inputTokens`. With
   * `mayRaise` false (a count of the fixed prefix alone, mostly tool JSON
   * and the template's own words, which says little of the text to come)
   * it may only make the estimate larger: a short estimate overflows the
   * window, a long one only leaves some room unused.
   */
  calibrate(request: LlmRequest, inputTokens: number, mayRaise = true): void {
    if (inputTokens < 50) return;
    const ratio = requestChars(request) / Math.max(1, inputTokens - templateTokens(request, this.indentedTools));
    // Clamped: one odd report (a cached prefix counted apart) must not derail it.
    const clamped = Math.min(6, Math.max(2, ratio));
    this.charsPerToken = mayRaise ? clamped : Math.min(this.charsPerToken, clamped);
  }

  get ratio(): number {
    return this.charsPerToken;
  }
}

/**
 * What a tool-calling chat template adds to a request's JSON, as measured
 * with the models' own templates and tokenizers (docs/benchmarks.md):
 * - most templates (Qwen's, Mistral's, Ollama's) print each tool's JSON on
 *   one line: a preamble of about 100 tokens (how to call tools) and about
 *   12 per tool;
 * - Llama 3's prints it indented by 4 (`tojson(indent=4)`): about 45 and
 *   two tokens per line of that JSON (the indent and the line's punctuation).
 */
// Each tool is `{type, function: {description, name, parameters}}`: 7 lines around its schema's.
export function templateTokens(request: LlmRequest, indentedTools = false): number {
  if (request.tools.length === 0) return 0;
  if (!indentedTools) return TEMPLATE_PREAMBLE_TOKENS + TEMPLATE_TOOL_TOKENS * request.tools.length;
  const lines = request.tools.reduce((sum, tool) => sum + 7 + jsonLines(tool.input_schema), 0);
  return INDENTED_PREAMBLE_TOKENS + INDENTED_LINE_TOKENS * lines;
}

export const TEMPLATE_PREAMBLE_TOKENS = 100;
export const TEMPLATE_TOOL_TOKENS = 12;
export const INDENTED_PREAMBLE_TOKENS = 45;
export const INDENTED_LINE_TOKENS = 2;

/** The lines `JSON.stringify(value, null, 4)` would write, without writing them. */
export function jsonLines(value: unknown): number {
  const children = Array.isArray(value) ? value : typeof value === "object" && value !== null ? Object.values(value) : [];
  return children.length === 0 ? 1 : 2 + children.reduce((sum: number, child) => sum + jsonLines(child), 0);
}

export function requestChars(request: LlmRequest): number {
  return request.system.length + messagesChars(request.messages) + JSON.stringify(request.tools).length;
}

/**
 * Each message's JSON length, measured once: a message is never changed in
 * place (a change makes a new one), and a conversation opened whole holds
 * tens of MB that would otherwise be serialized again at every estimate.
 */
const measuredChars = new WeakMap<Message, number>();

/**
 * What an image counts for in the estimate, in characters: about what a
 * provider charges for a screenshot-sized image (Anthropic about 1,600
 * tokens, OpenAI's high detail about 1,100), not its base64's length.
 */
export const IMAGE_CHARS = 6_000;

/** A JSON replacer that counts an image block as `IMAGE_CHARS` characters, whatever its data. */
function withoutImageData(this: unknown, key: string, value: unknown): unknown {
  if (key === "data" && typeof value === "string" && (this as { type?: unknown }).type === "image") return "x".repeat(IMAGE_CHARS);
  return value;
}

/** `JSON.stringify(messages).length`, from each message's length (an image counted as `IMAGE_CHARS`). */
function messagesChars(messages: readonly Message[]): number {
  let chars = 2 + Math.max(0, messages.length - 1);
  for (const message of messages) {
    let size = measuredChars.get(message);
    if (size === undefined) {
      size = JSON.stringify(message, withoutImageData).length;
      measuredChars.set(message, size);
    }
    chars += size;
  }
  return chars;
}

/**
 * The fewest tokens a reply is given (1,024, or an eighth of a small
 * window): when the request leaves less, the older part is compacted first.
 */
export function replyFloor(window: number): number {
  return Math.min(1_024, Math.floor(window / 8));
}

/**
 * How much a request may be larger than estimated: the estimate holds
 * within 10 % of a real tokenizer's count (docs/benchmarks.md), so the
 * reply's room is what is left after the request grown by that much.
 */
export const ESTIMATE_MARGIN = 1.1;

/** A request's estimated tokens with the estimate's margin. */
export function withMargin(requestTokens: number): number {
  return Math.ceil(requestTokens * ESTIMATE_MARGIN);
}

/**
 * The reply's token limit for a request of `requestTokens`: what the window
 * has left after it (with the estimate's margin), never below the floor
 * (Rust lowers it further to the settings' max tokens, never raises it).
 */
export function replyLimit(window: number, requestTokens: number): number {
  return Math.max(replyFloor(window), Math.floor(window - withMargin(requestTokens)));
}

/** The tokens a reply may use so that request + reply fit the window. */
export function fitMaxTokens(maxTokens: number, window: number): number {
  return Math.max(256, Math.min(maxTokens, Math.floor(window / 4)));
}

/**
 * Trims tool results larger than `overChars` in all but the last `keepRecent`
 * messages: head and tail kept, the middle replaced by a note telling the
 * model how to see it again. Returns the same array when nothing changed.
 */
export function trimOldToolResults(messages: Message[], keepRecent = KEEP_RECENT, overChars = TRIM_OVER_CHARS): Message[] {
  const end = Math.max(0, messages.length - keepRecent);
  let changed = false;
  const out = messages.map((message, index) => {
    if (index >= end || message.role !== "user") return message;
    const content = message.content.map((block) => {
      if (block.type !== "tool_result" || block.content.length <= overChars || block.content.includes(TRIM_NOTE)) return block;
      changed = true;
      return trimmed(block, overChars);
    });
    return { ...message, content };
  });
  return changed ? out : messages;
}

const TRIM_NOTE = "characters trimmed to save context";

function trimmed(block: ToolResultBlock, keep: number): ToolResultBlock {
  const half = Math.floor(keep / 2);
  const cut = block.content.length - 2 * half;
  const note = `\n[... ${cut} ${TRIM_NOTE}; call the tool again to see them ...]\n`;
  return { ...block, content: block.content.slice(0, half) + note + block.content.slice(-half) };
}

/**
 * Where the kept part of the transcript starts when the part before it is
 * summarized: the earliest index from which the last `keepRecent` messages
 * (at least) are kept and that does not start with tool results (their calls
 * would be summarized away). 0 when there is nothing to summarize.
 */
export function compactionBoundary(messages: Message[], keepRecent = KEEP_RECENT): number {
  for (let i = Math.min(messages.length - 1, Math.max(1, messages.length - keepRecent)); i >= 1; i--) {
    if (!startsWithResults(messages[i])) return i;
  }
  return 0;
}

function startsWithResults(message: Message): boolean {
  return message.content.some((b) => b.type === "tool_result");
}

/** The older part as plain text for the summarizer, each tool result clipped. */
export function transcriptText(messages: Message[], clipChars = 1_500): string {
  const clip = (text: string) =>
    text.length <= clipChars ? text : `${text.slice(0, clipChars / 2)} [...] ${text.slice(-clipChars / 2)}`;
  return messages
    .map((message) => {
      const parts = message.content.map((block) => {
        switch (block.type) {
          case "text":
            return block.text;
          case "tool_use":
            return `[tool call ${block.name} ${clip(JSON.stringify(block.input))}]`;
          case "tool_result":
            return `[tool result${block.is_error ? " (error)" : ""}: ${clip(block.content)}]`;
          case "image":
            return `[an image, ${block.media_type}]`;
        }
      });
      return `${message.role.toUpperCase()}: ${parts.join("\n")}`;
    })
    .join("\n\n");
}

export const SUMMARY_SYSTEM = `You compact a coding agent's conversation so the agent can continue the task with less context. Write a summary in Markdown with these sections:
- Task: what the user asked for, in their words where it matters.
- Files: every file read and every file changed, with what changed.
- Commands: commands run and their outcomes (exit codes, failing tests).
- Decisions: what was decided and why.
- Open: what is left to do, and the next step.
Be complete about facts and brief in words. Do not add anything that did not happen.`;

/** The request that asks the model for the summary of `older`, sized to fit `window`. */
export function summaryRequest(older: Message[], window: number, charsPerToken: number): LlmRequest {
  const budget = Math.floor(window * 0.6 * charsPerToken);
  let text = transcriptText(older);
  if (text.length > budget) {
    const half = Math.floor(budget / 2);
    text = `${text.slice(0, half)}\n[... middle of the conversation left out ...]\n${text.slice(-half)}`;
  }
  return {
    system: SUMMARY_SYSTEM,
    messages: [{ role: "user", content: [{ type: "text", text: `Summarize this conversation:\n\n${text}` }] }],
    tools: [],
  };
}

export const SUMMARY_HEADER = "[Summary of the earlier part of this conversation, written when it was compacted]";

/** Whether `message` is a summary a compaction left (with what was carried over after it). */
export function isSummaryMessage(message: Message): boolean {
  const first = message.content[0];
  return message.role === "user" && first?.type === "text" && first.text.startsWith(SUMMARY_HEADER);
}

/**
 * The transcript with `messages[0..boundary)` replaced by the summary. The
 * folders' instructions sent in that part are carried over word for word
 * after the summary: a folder's file is read once per conversation, so a
 * summary that paraphrased it (or left it out) would lose it for good.
 */
export function withSummary(messages: Message[], boundary: number, summary: string): Message[] {
  const note: TextBlock = { type: "text", text: `${SUMMARY_HEADER}\n\n${summary}` };
  const carried = folderInstructionBlocks(messages.slice(0, boundary));
  const kept = messages.slice(boundary);
  const first = kept[0];
  if (first?.role === "user") return [{ role: "user", content: [note, ...carried, ...first.content] }, ...kept.slice(1)];
  return [{ role: "user", content: [note, ...carried] }, ...kept];
}

/**
 * The transcript of a conversation opened again: from its last compaction's
 * summary on, instead of from its start (its older part is not summarized a
 * second time); the whole transcript when it has none, or when the stored
 * count no longer fits it. `shift`: how far the transcript's indices are
 * behind the conversation's (a later compaction counts from it).
 */
export function resumeFrom(messages: Message[], compaction: Compaction | undefined): { messages: Message[]; shift: number } {
  const covered = compaction?.covered;
  const fits =
    typeof compaction?.summary === "string" &&
    compaction.summary.trim() !== "" &&
    Number.isInteger(covered) &&
    covered! >= 1 &&
    covered! < messages.length &&
    !startsWithResults(messages[covered!]);
  if (!fits) return { messages, shift: 0 };
  const first = messages[covered!];
  return { messages: withSummary(messages, covered!, compaction!.summary), shift: first.role === "user" ? covered! : covered! - 1 };
}

/** The folders' instruction blocks in `messages`, each once, in order. */
export function folderInstructionBlocks(messages: Message[]): TextBlock[] {
  const blocks = new Map<string, TextBlock>();
  for (const message of messages) {
    if (message.role !== "user") continue;
    for (const block of message.content) {
      if (block.type === "text" && block.text.startsWith(FOLDER_INSTRUCTIONS_PREFIX)) blocks.set(block.text, block);
    }
  }
  return [...blocks.values()];
}

/** Whether a server error says the request did not fit the context window. */
export function isContextOverflow(error: { code: string } | null): boolean {
  return error?.code === "llm_context_overflow";
}
