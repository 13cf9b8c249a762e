// Appends a conversation to the history as it happens: each completed
// message (with the items that are new or changed since the last append)
// and each notice, one entry at a time, in order. The first append starts
// the conversation in the history; nothing is ever rewritten whole.
import { toWireError } from "../errors";
import type { Ipc } from "../ipc";
import type { Appended, Message, NewEntry, TokenUsage, WireError } from "../types";
import { entryItems } from "./conversation";
import type { Item } from "./state";
import { isUsed } from "./usage";

export type JournalOptions = {
  /** The conversation to append to; null starts a new one at the first append. */
  conversation: string | null;
  /** Items already stored (of a conversation opened), with their entries. */
  stored?: { items: Item[]; seqOf: Map<string, number> };
  onAppended?: (appended: Appended) => void;
  onError?: (error: WireError) => void;
};

export class Journal {
  private id: string | null;
  /** The version of each item last appended (items are replaced, never mutated). */
  private readonly appended = new Map<string, Item>();
  private readonly seqs: Map<string, number>;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly ipc: Pick<Ipc, "appendEntry">,
    private readonly options: JournalOptions,
  ) {
    this.id = options.conversation;
    for (const item of options.stored?.items ?? []) this.appended.set(item.id, item);
    this.seqs = new Map(options.stored?.seqOf ?? []);
  }

  /** The conversation's id in the history, once its first entry is stored. */
  get conversation(): string | null {
    return this.id;
  }

  /** The entry an item was first stored with, once stored. */
  seqOf(itemId: string): number | undefined {
    return this.seqs.get(itemId);
  }

  /**
   * Appends a completed message with every item that is new or changed
   * since the last append (a reply still streaming is left for later).
   */
  record(message: Message | null, items: Item[], usage?: TokenUsage): void {
    const changed = items.filter((item) => this.appended.get(item.id) !== item && !(item.kind === "assistant" && item.streaming));
    this.append(message, changed, usage);
  }

  /** Appends these items alone (a notice as it is shown). */
  recordItems(items: Item[], usage?: TokenUsage): void {
    this.append(null, items, usage);
  }

  /**
   * Takes these versions of items as stored (the same items, completed from
   * the history, or the earlier ones of a conversation opened in part),
   * with the entries they were first stored with.
   */
  markStored(items: Item[], seqOf?: Map<string, number>): void {
    for (const item of items) this.appended.set(item.id, item);
    for (const [id, seq] of seqOf ?? []) if (!this.seqs.has(id)) this.seqs.set(id, seq);
  }

  /** Resolves once every entry recorded so far has been stored or has failed. */
  flush(): Promise<void> {
    return this.queue;
  }

  /** Entries recorded but not stored yet (an append failed and waits to be sent again). */
  get unsaved(): number {
    return this.pending.length;
  }

  /** Why the entries not stored yet were not: the last append's error, while they wait. */
  get error(): WireError | null {
    return this.pending.length > 0 ? this.lastError : null;
  }

  /**
   * Sends the entries that failed again now, without waiting for a next
   * append (the conversation is being left); resolves once they are stored
   * or have failed once more (not said again).
   */
  retry(): Promise<void> {
    this.queue = this.queue.then(() => this.drain());
    return this.queue;
  }

  private append(message: Message | null, items: Item[], usage?: TokenUsage): void {
    if (message === null && items.length === 0) return;
    for (const item of items) this.appended.set(item.id, item);
    const entry: NewEntry = { items: entryItems(items, message) };
    if (message) entry.message = message;
    if (usage && isUsed(usage)) entry.usage = usage;
    this.pending.push({ entry, ids: items.map((item) => item.id) });
    this.queue = this.queue.then(() => this.drain());
  }

  /** Entries not stored yet, oldest first; one that failed is tried again with the next. */
  private readonly pending: { entry: NewEntry; ids: string[] }[] = [];
  private failing = false;
  private lastError: WireError | null = null;

  private async drain(): Promise<void> {
    // One at a time, in order: the first append names the conversation the next ones go to.
    while (this.pending.length > 0) {
      const next = this.pending[0];
      try {
        const appended = await this.ipc.appendEntry(this.id, next.entry);
        this.pending.shift();
        this.failing = false;
        this.lastError = null;
        this.id = appended.conversation;
        for (const id of next.ids) if (!this.seqs.has(id)) this.seqs.set(id, appended.seq);
        this.options.onAppended?.(appended);
      } catch (error) {
        // Said once until an append lands again; the entry waits for the next one.
        this.lastError = toWireError(error);
        if (!this.failing) this.options.onError?.(this.lastError);
        this.failing = true;
        return;
      }
    }
  }
}
