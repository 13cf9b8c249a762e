// A conversation as the history keeps it: entries appended one at a time
// (docs/ipc.md, Conversations), each the provider message it adds and the
// items that came with it; folded back into the transcript and the items
// on open. A run cut by a crash or a quit must not leave a transcript the
// provider refuses, nor cards spinning forever.
import { wireError } from "../errors";
import type { ImageBlock, Message, StoredEntry } from "../types";
import { type Item, isTerminal, type ToolItem, type UserItem } from "./state";
import { closeDanglingToolUses, dropOrphanResults } from "./transcript";

/** A tool card as stored when its entry's message already holds its result. */
type StoredToolItem = ToolItem & { resultInMessage?: true };
/** A user message as stored when its entry's message already holds its images. */
type StoredUserItem = UserItem & { imagesInMessage?: true };

export type OpenedConversation = {
  messages: Message[];
  items: Item[];
  /** The entry each item was first appended with (a fork cuts before one). */
  seqOf: Map<string, number>;
};

/**
 * The items of an entry as stored. A card's result is the very text of its
 * tool_result in the same message, so it is left out (a command's output
 * is kept once, not twice) and put back by `fromEntries`.
 */
export function entryItems(items: Item[], message: Message | null): unknown[] {
  const results = resultsOf(message);
  const images = imagesOf(message);
  return items.map((item): unknown => {
    if (item.kind === "user" && item.images && item.images.length > 0 && sameImages(item.images, images)) {
      const stored: StoredUserItem = { ...item, images: undefined, imagesInMessage: true };
      return stored;
    }
    if (item.kind !== "tool" || item.result === undefined) return item;
    const content = results.get(item.callId);
    if (content === undefined || JSON.stringify(item.result) !== content) return item;
    const stored: StoredToolItem = { ...item, result: undefined, resultInMessage: true };
    return stored;
  });
}

/** Folds stored entries into the transcript and the items the window shows. */
export function fromEntries(entries: StoredEntry[]): OpenedConversation {
  const messages: Message[] = [];
  const items = new Map<string, Item>();
  const seqOf = new Map<string, number>();
  // A message taken back (its user item stored again as withdrawn) is left out, with its item.
  const withdrawn = new Set(entries.flatMap((entry) => entry.items.flatMap((raw) => (isWithdrawn(asItem(raw)) ? [(raw as UserItem).id] : []))));
  for (const entry of entries) {
    const taken = entry.items.some((raw) => {
      const item = asItem(raw);
      return item?.kind === "user" && withdrawn.has(item.id) && !isWithdrawn(item);
    });
    const message = taken ? null : entry.message;
    if (message) {
      const last = messages.at(-1);
      // Consecutive entries of one role are one message (tool results, then
      // the user's text sent after a stop).
      if (last?.role === message.role) messages[messages.length - 1] = { role: last.role, content: [...last.content, ...message.content] };
      else messages.push(message);
    }
    const results = resultsOf(message);
    for (const raw of entry.items) {
      const item = asItem(raw);
      if (!item || withdrawn.has(item.id)) continue;
      if (!seqOf.has(item.id)) seqOf.set(item.id, entry.seq);
      // An item appended again replaces the earlier one where it stood.
      items.set(item.id, restoreImages(restoreResult(item, results), entry.message));
    }
  }
  return { messages: closeDanglingToolUses(dropOrphanResults(messages)), items: [...items.values()].map(settle), seqOf };
}

function resultsOf(message: Message | null): Map<string, string> {
  const results = new Map<string, string>();
  for (const block of message?.content ?? []) {
    if (block.type === "tool_result" && !block.is_error) results.set(block.tool_use_id, block.content);
  }
  return results;
}

function imagesOf(message: Message | null): ImageBlock[] {
  return (message?.content ?? []).filter((block): block is ImageBlock => block.type === "image");
}

function sameImages(a: ImageBlock[], b: ImageBlock[]): boolean {
  return a.length === b.length && a.every((image, i) => image.media_type === b[i].media_type && image.data === b[i].data);
}

const isWithdrawn = (item: Item | null): boolean => item?.kind === "user" && item.withdrawn === true;

function restoreImages(item: Item, message: Message | null): Item {
  if (item.kind !== "user") return item;
  const { imagesInMessage, ...user } = item as StoredUserItem;
  return imagesInMessage ? { ...user, images: imagesOf(message) } : user;
}

function restoreResult(item: Item, results: Map<string, string>): Item {
  if (item.kind !== "tool") return item;
  const { resultInMessage, ...card } = item as StoredToolItem;
  if (!resultInMessage) return card;
  const content = results.get(card.callId);
  try {
    return content === undefined ? card : { ...card, result: JSON.parse(content) as unknown };
  } catch {
    return card;
  }
}

const KINDS = new Set(["user", "assistant", "notice", "tool"]);

function asItem(value: unknown): Item | null {
  if (typeof value !== "object" || value === null) return null;
  const item = value as { kind?: unknown; id?: unknown };
  return typeof item.kind === "string" && KINDS.has(item.kind) && typeof item.id === "string" ? (value as Item) : null;
}

function settle(item: Item): Item {
  if (item.kind === "assistant") return { ...item, streaming: false };
  if (item.kind === "tool" && !isTerminal(item.status)) {
    return { ...item, status: "failed", error: wireError("cancelled", "Interrupted before it finished.") };
  }
  return item;
}
