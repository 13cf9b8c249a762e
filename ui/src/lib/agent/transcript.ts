// Keeps the provider transcript valid: roles alternate, and every tool_use
// has exactly one tool_result in the next user message.
import type { WireError } from "../types";
import type { Block, Message, ToolResultBlock, ToolUseBlock } from "../types";

export const CANCELLED_TEXT = "Cancelled by the user before this tool call finished; it may not have run.";
export const DENIED_TEXT = "The user denied this tool call. Do not retry it; ask the user how to proceed instead.";

export function resultBlock(use: ToolUseBlock, output: unknown): ToolResultBlock {
  return { type: "tool_result", tool_use_id: use.id, content: JSON.stringify(output) };
}

export function errorBlock(use: ToolUseBlock, error: WireError): ToolResultBlock {
  return { type: "tool_result", tool_use_id: use.id, content: JSON.stringify(error), is_error: true };
}

export function textBlock(use: ToolUseBlock, text: string): ToolResultBlock {
  return { type: "tool_result", tool_use_id: use.id, content: text, is_error: true };
}

/** Adds the user's text, merged into a trailing user message (of tool results). */
export function appendUserText(messages: Message[], text: string): Message[] {
  const last = messages.at(-1);
  if (last?.role === "user") {
    return [...messages.slice(0, -1), { role: "user", content: [...last.content, { type: "text", text }] }];
  }
  return [...messages, { role: "user", content: [{ type: "text", text }] }];
}

/** Adds the user's blocks (text, images), merged into a trailing user message (of tool results). */
export function appendUserContent(messages: Message[], content: Block[]): Message[] {
  const last = messages.at(-1);
  if (last?.role === "user") return [...messages.slice(0, -1), { role: "user", content: [...last.content, ...content] }];
  return [...messages, { role: "user", content }];
}

/**
 * Leaves out the tool results whose call is not in the last assistant
 * message before them (its entry damaged in the history and left out): no provider
 * takes a result without its call. A message left empty goes, and the
 * messages of one role then side by side are one.
 */
export function dropOrphanResults(messages: Message[]): Message[] {
  const out: Message[] = [];
  let calls = new Set<string>();
  for (const message of messages) {
    const prior = out.at(-1);
    if (message.role === "assistant") calls = new Set([...(prior?.role === "assistant" ? calls : []), ...message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))]);
    const content = message.role === "user" ? message.content.filter((b) => b.type !== "tool_result" || calls.has(b.tool_use_id)) : message.content;
    if (content.length === 0) continue;
    if (prior?.role === message.role) out[out.length - 1] = { role: prior.role, content: [...prior.content, ...content] };
    else out.push(content === message.content ? message : { ...message, content });
  }
  return out;
}

/**
 * Repairs a transcript loaded from disk or cut by a crash: tool_uses without
 * a result get a "cancelled" result, so the provider accepts the next turn.
 */
export function closeDanglingToolUses(messages: Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    out.push(message);
    if (message.role !== "assistant") continue;
    const uses = message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
    if (uses.length === 0) continue;
    const next = messages[i + 1];
    const answered = new Set(
      next?.role === "user"
        ? next.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))
        : [],
    );
    const missing = uses.filter((u) => !answered.has(u.id)).map((u) => textBlock(u, CANCELLED_TEXT));
    if (missing.length === 0) continue;
    if (next?.role === "user") {
      out.push({ role: "user", content: [...missing, ...next.content] });
      i++;
    } else {
      out.push({ role: "user", content: missing });
    }
  }
  return out;
}
