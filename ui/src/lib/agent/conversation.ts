// The saved form of a conversation (one per project, via save_conversation),
// and its repair when loaded: a run cut by a crash or a quit must not leave
// a transcript the provider refuses, nor cards spinning forever.
import { wireError } from "../errors";
import type { Message } from "../types";
import { type Item, isTerminal } from "./state";
import { closeDanglingToolUses } from "./transcript";

export type SavedConversation = { version: 1; messages: Message[]; items: Item[] };

export function toSaved(messages: Message[], items: Item[]): SavedConversation {
  return { version: 1, messages, items };
}

export function fromSaved(value: unknown): { messages: Message[]; items: Item[] } | null {
  if (typeof value !== "object" || value === null) return null;
  const saved = value as Partial<SavedConversation>;
  if (saved.version !== 1 || !Array.isArray(saved.messages)) return null;
  const messages = closeDanglingToolUses(saved.messages);
  const items = Array.isArray(saved.items) ? saved.items.map(settle) : itemsFrom(messages);
  return { messages, items };
}

function settle(item: Item): Item {
  if (item.kind === "assistant") return { ...item, streaming: false };
  if (item.kind === "tool" && !isTerminal(item.status)) {
    return { ...item, status: "failed", error: wireError("cancelled", "Interrupted before it finished.") };
  }
  return item;
}

function itemsFrom(messages: Message[]): Item[] {
  return messages.flatMap((message, m) =>
    message.content.flatMap((block, b): Item[] =>
      block.type === "text"
        ? [{ kind: message.role, id: `m${m}b${b}`, text: block.text, streaming: false } as Item]
        : [],
    ),
  );
}
