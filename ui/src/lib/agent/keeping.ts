// How the conversation shown is kept in the history: its journal (entries
// appended as they happen), the journals of conversations left with entries
// not stored yet (sent again until they are, never dropped), and a
// conversation opened brief or in part, completed from the history behind
// the page's back.
import { toWireError } from "../errors";
import type { Appended, ConversationData, Message, StoredEntry, WireError } from "../types";
import type { Board } from "./board";
import { fromEntries } from "./conversation";
import { Journal } from "./journal";
import type { AgentIpc } from "./ports";
import type { Item } from "./state";
import { noUsage, usageSince, type Usage } from "./usage";

/** How long a conversation opened brief is shown before its whole is fetched. */
const WHOLE_AFTER_MS = 1000;
/** How many entries each answer of the whole fetched behind holds (about 2 MB of a long run's). */
const WHOLE_PART = 500;

type Opened = ReturnType<typeof fromEntries>;

type Hooks = {
  /** Each entry stored in the history (the first one names a new conversation). */
  onAppended?: (appended: Appended) => void;
  /** The transcript of the conversation is `opened`'s now. */
  resume: (opened: Opened) => void;
  /** The whole of a conversation opened brief is in: its `entries`, all of them. */
  whole: (entries: StoredEntry[]) => void;
  /** After the whole is in and the page painted: the meter is sized by it. */
  estimate: (journal: Journal) => void;
};

export class Keeping {
  /** Appends the conversation to the history as it happens. */
  journal: Journal;
  /** Journals of conversations left with entries not stored: sent again until they are. */
  private retired: Journal[] = [];
  /**
   * The conversation opened brief (long tool results left out) or in part
   * (its last entries only), until it is whole.
   */
  private briefId: string | null = null;
  /** Its whole: fetched a moment after it is shown, or when the user goes on. */
  private whole: Promise<void> | null = null;
  private fetching = false;
  /** The conversation's usage its stored entries hold (with those recorded and not stored yet). */
  private counted: Usage = noUsage();

  constructor(
    private readonly ipc: AgentIpc,
    private readonly newId: () => string,
    private readonly board: Board,
    private readonly hooks: Hooks,
  ) {
    this.journal = this.newJournal(null);
  }

  /**
   * Appends a completed message to the history, with the items that came
   * with it and what was used since the last entry stored (its reply's
   * request, a round's subagents, a compaction's summary).
   */
  record(message: Message): void {
    this.journal.record(message, this.board.get().items, this.usedSinceStored());
  }

  /** Appends these items alone (a notice as it is shown), with what was used since the last entry. */
  recordItems(items: Item[]): void {
    this.journal.recordItems(items, this.usedSinceStored());
  }

  /** The conversation's usage beyond what its stored entries hold; taken as stored now. */
  private usedSinceStored(): Usage {
    const usage = this.board.get().usage;
    const since = usageSince(usage, this.counted);
    this.counted = usage;
    return since;
  }

  /** Waits until everything recorded is stored (failures were said as notices). */
  async save(): Promise<void> {
    await this.journal.flush();
    if (this.retired.length > 0) await this.retryRetired();
  }

  /**
   * Stores what is still unsaved, of this conversation and of those left,
   * before another is opened; resolves once each is stored or has failed
   * again (nothing is dropped: a failure is tried again later).
   */
  async saveAll(): Promise<void> {
    await this.journal.flush();
    if (this.journal.unsaved > 0) await this.journal.retry();
    await this.retryRetired();
  }

  /** Why the conversation shown has entries not stored, while it has. */
  get saveError(): WireError | null {
    return this.journal.error;
  }

  /** Entries recorded and not stored yet, in every conversation. */
  get unsaved(): number {
    return this.journal.unsaved + this.retired.reduce((sum, journal) => sum + journal.unsaved, 0);
  }

  /**
   * Where a fork from the user message `itemId` cuts: "edit" keeps what came
   * before the message, "here" also the message and the work it started (up
   * to the next message of the user). Null until the message is stored.
   */
  forkPoint(itemId: string, mode: "edit" | "here"): number | null {
    const seq = this.journal.seqOf(itemId);
    if (seq === undefined) return null;
    if (mode === "edit") return seq;
    const items = this.board.get().items;
    const at = items.findIndex((item) => item.id === itemId);
    const next = items.slice(at + 1).find((item) => item.kind === "user");
    return (next && this.journal.seqOf(next.id)) ?? Number.MAX_SAFE_INTEGER;
  }

  /** Leaves the conversation shown for a new one (awaited: what it could not store is tried again first). */
  async leaveForNew(): Promise<void> {
    await this.leave(this.journal);
  }

  /** The new conversation's journal, after `leaveForNew`. */
  startNew(): void {
    this.journal = this.newJournal(null);
    this.briefId = null;
    this.whole = null;
  }

  /**
   * Goes on with `conversation`, shown as `opened`: its journal takes over,
   * and when it came brief or in part its whole is fetched a moment later.
   * Returns whether it came in part (its transcript is not the whole yet).
   */
  open(conversation: ConversationData, opened: Opened): boolean {
    void this.leave(this.journal);
    this.journal = this.newJournal(conversation, opened);
    const partial = conversation.entries.length < conversation.summary.entries;
    const brief = partial || conversation.entries.some((entry) => (entry.elided?.length ?? 0) > 0);
    this.briefId = brief ? conversation.summary.id : null;
    // Fetched a moment after the brief one is on screen (or at once when the
    // user goes on): taking in tens of MB holds the page, never its first paint.
    const journal = this.journal;
    this.whole = brief ? later(WHOLE_AFTER_MS).then(() => this.fetchWhole(conversation.summary.id, journal)) : null;
    // A failure is said when the user goes on (and the fetch tried again), not now.
    this.whole?.catch(() => undefined);
    return partial;
  }

  /**
   * Resolves once the conversation shown is whole (at once when it was
   * opened whole); a failed fetch resolves it too (tried again on send).
   */
  async loaded(): Promise<void> {
    await this.whole?.catch(() => undefined);
  }

  /** Waits for the whole of a conversation opened brief; false (and the error shown) if it cannot be had. */
  async ready(): Promise<boolean> {
    if (this.briefId === null) return true;
    // Not fetching (the moment has not come, or the last try failed): now.
    if (!this.fetching) this.whole = this.fetchWhole(this.briefId, this.journal);
    try {
      await this.whole;
    } catch (error) {
      this.board.patch({ error: toWireError(error) });
    }
    return this.briefId === null;
  }

  private newJournal(conversation: ConversationData | null, stored?: Opened): Journal {
    // What the board shows now is stored already (a conversation opened: its totals).
    this.counted = this.board.get().usage;
    const journal: Journal = new Journal(this.ipc, {
      conversation: conversation?.summary.id ?? null,
      stored: stored && { items: stored.items, seqOf: stored.seqOf },
      onAppended: this.hooks.onAppended,
      onError: (e) => {
        const which = journal === this.journal ? "the conversation" : "the conversation left";
        this.board.addItem({ kind: "notice", id: this.newId(), text: `Could not save ${which} (${e.code}): ${e.message}` });
      },
    });
    return journal;
  }

  /**
   * Leaves the conversation of `journal`: what it could not store yet is
   * sent again now and, while that fails, again at each save of the next
   * conversations; it is never dropped.
   */
  private async leave(journal: Journal): Promise<void> {
    await journal.flush();
    if (journal.unsaved > 0) await journal.retry();
    if (journal.unsaved > 0 && !this.retired.includes(journal)) this.retired.push(journal);
  }

  /** Sends again what conversations left could not store. */
  private async retryRetired(): Promise<void> {
    for (const journal of [...this.retired]) await journal.retry();
    this.retired = this.retired.filter((journal) => journal.unsaved > 0);
  }

  /**
   * Completes a conversation opened brief or in part: the whole transcript
   * for the next request, the earlier entries' items and the results of
   * cards shown without them. Nothing is appended: it is all stored
   * already. It comes in parts of `WHOLE_PART` entries, newest first, each
   * its own IPC answer, so the page parses a few MB at a time and paints
   * between them.
   */
  private async fetchWhole(id: string, journal: Journal): Promise<void> {
    if (this.journal !== journal || this.briefId !== id) return;
    this.fetching = true;
    try {
      const parts: StoredEntry[][] = [];
      let before: number | undefined;
      for (;;) {
        const data = await this.ipc.openConversation(id, { ...(before === undefined ? {} : { beforeSeq: before }), last: WHOLE_PART });
        if (this.journal !== journal) return;
        const first = data.entries[0];
        // An answer that is not before the last (a part left out) ends it, too.
        if (!first || (before !== undefined && first.seq >= before)) break;
        parts.unshift(data.entries);
        if (data.entries.length < WHOLE_PART) break;
        before = first.seq;
        await nextTask();
      }
      await nextTask();
      if (this.journal !== journal) return;
      const whole = fromEntries(parts.flat());
      await nextTask();
      if (this.journal !== journal) return;
      this.complete(journal, whole);
      this.hooks.whole(parts.flat());
      await nextTask();
      if (this.journal !== journal) return;
      this.hooks.estimate(journal);
    } finally {
      this.fetching = false;
    }
  }

  /**
   * Puts the whole of a conversation opened brief or in part in place of
   * what was shown: its items in their order, each shown one kept as it is
   * (a card completed with its result), then those added since the open.
   */
  private complete(journal: Journal, whole: Opened): void {
    this.hooks.resume(whole);
    this.briefId = null;
    const stored: Item[] = [];
    this.board.update((state) => {
      const shown = new Map(state.items.map((item) => [item.id, item]));
      const items = whole.items.map((full) => {
        const item = shown.get(full.id);
        shown.delete(full.id);
        if (item === undefined) {
          stored.push(full);
          return full;
        }
        if (item.kind !== "tool" || item.result !== undefined || full.kind !== "tool" || full.result === undefined) return item;
        const done = { ...item, result: full.result };
        stored.push(done);
        return done;
      });
      return { ...state, items: [...items, ...shown.values()] };
    });
    journal.markStored(stored, whole.seqOf);
  }
}

/** Lets the page run (paint, input) before going on. */
function nextTask(): Promise<void> {
  return later(0);
}

function later(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
