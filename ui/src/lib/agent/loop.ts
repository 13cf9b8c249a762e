// The agent loop: plan → tools → report. Plain TypeScript, no framework; the
// Rust side is reached only through the `AgentIpc` functions passed in, and
// the UI only reads `state` and calls send / retry / stop / decide.
import { toWireError, wireError } from "../errors";
import { type FrameScheduler, OutputBuffer } from "../outputBuffer";
import { type Readable, writable } from "../store";
import type {
  Appended,
  Block,
  ConversationData,
  ImageBlock,
  LlmEvent,
  LlmRequest,
  Message,
  ModelInfo,
  StoredEntry,
  ToolResultBlock,
  ToolSpec,
  TextBlock,
  ToolUseBlock,
  WireError,
} from "../types";
import {
  COMPACT_AT,
  compactionBoundary,
  DEFAULT_CONTEXT_WINDOW,
  isContextOverflow,
  isSummaryMessage,
  resumeFrom,
  replyFloor,
  replyLimit,
  withMargin,
  summaryRequest,
  TokenEstimate,
  trimOldToolResults,
  withSummary,
} from "./context";
import { type InstructionSource, type Instructions, instructionsBlock, PROJECT_INSTRUCTIONS } from "./instructions";
import { StreamAssembler } from "./assembler";
import { fromEntries } from "./conversation";
import { GrantList } from "./grantList";
import { IMAGES_PER_MESSAGE, IMAGES_PER_REQUEST } from "../images";
import { Journal } from "./journal";
import { type AgentState, type Compaction, emptyState, type Item, type NoticeItem, type ToolItem } from "./state";
import { shortSystemPrompt, systemPrompt } from "./systemPrompt";
import { isOnRequest, isSmallWindow, offeredTools } from "./promptBudget";
import { cutLargeResults, prefixTooLarge, resultShare } from "./fitting";
import { PasteShelf, READ_PASTE, READ_PASTE_TOOL } from "./pastes";
import type { AgentIpc, Decision, RunControl } from "./ports";
import { ToolRunner } from "./toolRunner";
import { sandboxNotice } from "../sandboxNotice";
import { appendUserContent, CANCELLED_TEXT, textBlock } from "./transcript";

export type { AgentIpc, Decision, RunControl } from "./ports";

export type AgentOptions = {
  projectRoot: string;
  /** Model calls per user message before the loop pauses and offers Continue. */
  maxTurns?: number;
  newId?: () => string;
  scheduleFrame?: FrameScheduler;
  /** Finds the project's instructions (default: through read_file). */
  instructions?: InstructionSource;
  /** A conversation from the history to go on with; none starts a new one. */
  conversation?: ConversationData | null;
  /** Each entry stored in the history (the first one names a new conversation). */
  onAppended?: (appended: Appended) => void;
  /** How long a send waits for the server's count of the prefix (default `COUNT_WAIT_MS`). */
  countWaitMs?: number;
};


type TurnOutcome = { message: Message | null; stopReason: string; error: WireError | null };

export const DEFAULT_MAX_TURNS = 100;

/**
 * How long a request (or a paste's sizing) waits for the server's count of
 * the fixed prefix when it is on its way: the count decides whether a big
 * paste goes inline or as an attachment, so it should be in, but a slow
 * server must not hold the send up for long. Past it, the estimate stands
 * for this send and the count corrects the next one when it arrives.
 */
export const COUNT_WAIT_MS = 1_500;

/** What a tool call of a reply cut off at its token limit gets instead of running. */
export const CUT_OFF_TEXT =
  "Not run: your reply was cut off at its token limit before it ended, so this call may be incomplete. Send it again in a shorter reply.";

/** What stands in for an image the model is not sent. */
export const IMAGE_LEFT_OUT = "[An image was here; it is left out because this model takes no images.]";

export class AgentLoop {
  private readonly store = writable<AgentState>(emptyState());
  readonly state: Readable<AgentState> = this.store;
  private messages: Message[] = [];
  private specs: ToolSpec[] | null = null;
  private control: RunControl | null = null;
  private readonly estimate = new TokenEstimate();
  /** What the server said of the model; undefined until asked. */
  private model: ModelInfo | undefined;
  /**
   * The model refused images the conversation carried from before: from
   * then on they are left out of what it is sent (a line says so in their
   * place; the conversation keeps them), until `resetModel` (another
   * model, or another conversation opened).
   */
  private imagesRefused = false;
  /** The images the person sent in this turn: they are always sent. */
  private freshImages = new Set<Block>();
  /** The project's instruction file, read once per conversation. */
  private instructions: Instructions | null | undefined;
  /** Tools offered by name only (a small window) that the model asked for: offered whole from then on. */
  private requestedTools = new Set<string>();
  /** Messages too large for the window, kept in parts for `read_paste`. */
  private pastes = new PasteShelf();
  private readonly tools: ToolRunner;
  private readonly newId: () => string;
  /** The conversation's key and what the user allowed in it. */
  private readonly grants: GrantList;
  /** The user message being answered: checkpoints are taken in its name. */
  private turnId: string | undefined;
  /** Appends the conversation to the history as it happens. */
  private journal: Journal;
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

  constructor(
    private readonly ipc: AgentIpc,
    private readonly options: AgentOptions,
  ) {
    this.newId = options.newId ?? (() => crypto.randomUUID());
    // Its own keys: the card ids' sequence is not touched.
    this.grants = new GrantList(ipc, () => crypto.randomUUID(), (grants) => this.patch({ grants }));
    this.tools = new ToolRunner(ipc, {
      newId: this.newId,
      scheduleFrame: options.scheduleFrame,
      updateCard: (id, change) => {
        this.updateCard(id, change);
        this.noteSandbox(change.result);
      },
      riskOf: (name) => this.specs?.find((s) => s.name === name)?.risk ?? null,
      displayOf: (name) => this.specs?.find((s) => s.name === name)?.display,
      inputError: (callId) => this.inputErrors.get(callId),
      turnId: () => this.turnId,
      conversation: () => this.grants.conversation,
      granted: () => void this.grants.refresh(),
    });
    this.journal = this.newJournal(null);
    if (options.conversation) this.load(options.conversation);
  }

  /** The window's key of the conversation shown (its grants and answers about domains). */
  get conversationKey(): string {
    return this.grants.conversation;
  }

  /** The conversation's id in the history; null until its first entry is stored. */
  get conversationId(): string | null {
    return this.journal.conversation;
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
    const items = this.store.get().items;
    const at = items.findIndex((item) => item.id === itemId);
    const next = items.slice(at + 1).find((item) => item.kind === "user");
    return (next && this.journal.seqOf(next.id)) ?? Number.MAX_SAFE_INTEGER;
  }

  private newJournal(conversation: ConversationData | null, stored?: ReturnType<typeof fromEntries>): Journal {
    const journal: Journal = new Journal(this.ipc, {
      conversation: conversation?.summary.id ?? null,
      stored: stored && { items: stored.items, seqOf: stored.seqOf },
      onAppended: this.options.onAppended,
      onError: (e) => {
        const which = journal === this.journal ? "the conversation" : "the conversation left";
        this.addItem({ kind: "notice", id: this.newId(), text: `Could not save ${which} (${e.code}): ${e.message}` });
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
   * Stores what is still unsaved, of this conversation and of those left,
   * before another is opened; resolves once each is stored or has failed
   * again (nothing is dropped: a failure is tried again later).
   */
  async saveAll(): Promise<void> {
    await this.journal.flush();
    if (this.journal.unsaved > 0) await this.journal.retry();
    await this.retryRetired();
  }

  /** Entries recorded in this loop and not stored yet, in every conversation. */
  get unsaved(): number {
    return this.journal.unsaved + this.retired.reduce((sum, journal) => sum + journal.unsaved, 0);
  }

  /** The project folder the tools resolve paths against. */
  get projectRoot(): string {
    return this.options.projectRoot;
  }

  /** The provider transcript, as the next request would send it. */
  get transcript(): Message[] {
    return this.messages;
  }

  /**
   * Goes on with a conversation from the history (the loop must be idle).
   * It may come brief (long tool results left out) or in part (its last
   * entries, fewer than `summary.entries`): it is shown at once, and its
   * whole is fetched behind; nothing is sent until that is in.
   */
  load(conversation: ConversationData): void {
    if (this.control) return;
    const opened = fromEntries(conversation.entries);
    this.resume(opened);
    this.freshImages = new Set();
    this.instructions = undefined;
    this.requestedTools = new Set();
    this.pastes = PasteShelf.fromEntries(conversation.entries);
    this.foldersSeen = new Set();
    const { input_tokens, output_tokens } = conversation.summary;
    this.store.set({ ...emptyState(), items: opened.items, usage: { input_tokens, output_tokens } });
    this.grants.restart();
    void this.leave(this.journal);
    this.journal = this.newJournal(conversation, opened);
    const partial = conversation.entries.length < conversation.summary.entries;
    const brief = partial || conversation.entries.some((entry) => (entry.elided?.length ?? 0) > 0);
    this.briefId = brief ? conversation.summary.id : null;
    // A part's transcript would give the meter a wrong size: it waits for the whole.
    if (!partial) void this.estimateOpened(this.journal);
    // Fetched a moment after the brief one is on screen (or at once when the
    // user goes on): taking in tens of MB holds the page, never its first paint.
    const journal = this.journal;
    this.whole = brief ? later(WHOLE_AFTER_MS).then(() => this.fetchWhole(conversation.summary.id, journal)) : null;
    // A failure is said when the user goes on (and the fetch tried again), not now.
    this.whole?.catch(() => undefined);
  }

  /**
   * Resolves once the conversation shown is whole (at once when it was
   * opened whole); a failed fetch resolves it too (tried again on send).
   */
  async loaded(): Promise<void> {
    await this.whole?.catch(() => undefined);
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
      this.pastes = PasteShelf.fromEntries(parts.flat());
      await nextTask();
      if (this.journal !== journal) return;
      if (this.specs && this.model !== undefined) this.estimateShown();
      else void this.estimateOpened(journal);
    } finally {
      this.fetching = false;
    }
  }

  /** The transcript of a conversation opened: from its last compaction's summary on, when it has one. */
  private resume(opened: ReturnType<typeof fromEntries>): void {
    const last = opened.items.filter((item): item is NoticeItem => item.kind === "notice" && item.compacted !== undefined).at(-1);
    const resumed = resumeFrom(opened.messages, last?.compacted);
    this.messages = resumed.messages;
    this.shift = resumed.shift;
  }

  /**
   * How far the transcript's indices are behind the conversation's as the
   * history keeps it (the messages a summary replaced, less its message).
   */
  private shift = 0;

  /**
   * Puts the whole of a conversation opened brief or in part in place of
   * what was shown: its items in their order, each shown one kept as it is
   * (a card completed with its result), then those added since the open.
   */
  private complete(journal: Journal, whole: ReturnType<typeof fromEntries>): void {
    this.resume(whole);
    this.briefId = null;
    const stored: Item[] = [];
    this.store.update((state) => {
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

  /** Waits for the whole of a conversation opened brief; false (and the error shown) if it cannot be had. */
  private async ready(): Promise<boolean> {
    if (this.briefId === null) return true;
    // Not fetching (the moment has not come, or the last try failed): now.
    if (!this.fetching) this.whole = this.fetchWhole(this.briefId, this.journal);
    try {
      await this.whole;
    } catch (error) {
      this.patch({ error: toWireError(error) });
    }
    return this.briefId === null;
  }


  /**
   * Sends the person's message: its text and the images pasted or dropped
   * with it. When the model refuses the images (`images_unsupported`), the
   * message is taken back (see `withdraw`) and offered to the composer
   * again as `returned`, so nothing typed or attached is lost; so is a
   * message that is not sent at all (a run is on, the rest of a
   * conversation opened in part could not be had, or its images are over
   * the limits).
   */
  async send(text: string, images: ImageBlock[] = []): Promise<void> {
    if (text.trim() === "" && images.length === 0) return;
    // Not taken (a run is on, or the rest of the conversation could not
    // be had): the message goes back to the box rather than being lost.
    if (this.control || !(await this.ready()) || this.control) {
      this.patch({ returned: { text, images } });
      return;
    }
    const over = this.imagesOverLimit(images.length);
    if (over) {
      this.patch({ error: over, returned: { text, images } });
      return;
    }
    const sentText = await this.shelvePaste(text);
    if (this.control) {
      this.patch({ returned: { text, images } });
      return;
    }
    const content: Block[] = [...(text.trim() === "" ? [] : [{ type: "text" as const, text: sentText }]), ...images];
    this.messages = appendUserContent(this.messages, content);
    const sent = this.messages.at(-1);
    this.freshImages = new Set(images);
    const turn = this.newId();
    this.turnId = turn;
    this.patch({ returned: null });
    this.addItem({ kind: "user", id: turn, text, ...(images.length > 0 ? { images } : {}) });
    this.record({ role: "user", content });
    await this.run();
    const error = this.store.get().error;
    if (images.length > 0 && error?.details?.reason === "images_unsupported" && this.turnId === turn) this.withdraw(turn, sent, content.length, text, images);
  }

  /** The person's text as the model is sent it: a part and a note when it is larger than its share of the window. */
  private async shelvePaste(text: string): Promise<string> {
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.modelFacts();
    } catch {
      return text;
    }
    const prefix = this.estimate.tokens({ ...this.request(this.specs), messages: [] });
    return this.pastes.shelve(text, resultShare(this.contextWindow.window, prefix, this.estimate.ratio));
  }

  /**
   * Why a message with `count` images cannot be sent (more than a message
   * may carry, or more than the bridge takes in one request with the
   * conversation's images), or null. Checked before the message is
   * recorded, so it goes back to the box whole.
   */
  private imagesOverLimit(count: number): WireError | null {
    if (count > IMAGES_PER_MESSAGE) {
      return wireError("invalid_input", `The message carries ${count} images; at most ${IMAGES_PER_MESSAGE} can be sent with one message.`, "Remove some images, or send them over several messages.");
    }
    const earlier = this.messages.flatMap((m) => m.content).filter((b) => b.type === "image").length;
    if (count > 0 && earlier + count > IMAGES_PER_REQUEST) {
      return wireError("invalid_input", `The conversation already carries ${earlier} images; with ${count} more it would be over the ${IMAGES_PER_REQUEST} one request can carry.`, "Start a new conversation for more images, or send the message without them.");
    }
    return null;
  }

  /**
   * Takes back the user's last message, which the model refused for its
   * images: its blocks leave the transcript, its item the window (stored
   * again as `withdrawn`, so the conversation opened again leaves it out
   * too), and its text and images go back to the composer. Only while
   * `sent`, the message `send` appended (or merged the blocks into), is
   * still the last: after a tool round in the same turn the last user
   * message holds tool results, and cutting it would corrupt the
   * transcript, so the error is only shown.
   */
  private withdraw(turn: string, sent: Message | undefined, blocks: number, text: string, images: ImageBlock[]): void {
    const last = this.messages.at(-1);
    const item = this.store.get().items.find((i) => i.id === turn);
    if (sent === undefined || last !== sent || item?.kind !== "user") return;
    const kept = last.content.slice(0, Math.max(0, last.content.length - blocks));
    this.messages = kept.length > 0 ? [...this.messages.slice(0, -1), { role: "user", content: kept }] : this.messages.slice(0, -1);
    this.removeItems(new Set([turn]));
    this.journal.recordItems([{ kind: "user", id: turn, text: "", withdrawn: true }]);
    this.turnId = undefined;
    this.patch({ returned: { text, images } });
  }

  /** Re-sends the last turn after a provider failure; the conversation is kept. */
  async retry(): Promise<void> {
    if (this.control || !(await this.ready())) return;
    if (this.control || this.messages.at(-1)?.role !== "user") return;
    await this.run();
  }

  /** Goes on after the run paused at its turn budget. */
  async continue(): Promise<void> {
    await this.retry();
  }

  /** Forgets what is known of the model (the settings changed). */
  resetModel(): void {
    this.model = undefined;
    this.imagesRefused = false;
    this.asking = null;
    this.counting = null;
    this.modelNoted = false;
  }

  /**
   * The settings changed: forgets the model, asks the server about the new
   * one and shows the meter against its window at once (when idle).
   */
  async refreshModel(): Promise<void> {
    this.resetModel();
    if (this.control) return;
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.modelFacts();
    } catch {
      return; // the meter comes with the next request
    }
    this.estimateShown();
  }

  /** Summarizes the older part of the conversation now (the Compact button). */
  async compact(): Promise<void> {
    if (this.control || !(await this.ready()) || this.control) return;
    const control: RunControl = { cancelled: false, hooks: new Set() };
    this.control = control;
    this.patch({ busy: true });
    try {
      await this.compactNow(control, true);
    } finally {
      this.control = null;
      this.patch({ busy: false });
      await this.save();
    }
  }

  stop(): void {
    const control = this.control;
    if (!control || control.cancelled) return;
    control.cancelled = true;
    for (const hook of [...control.hooks]) hook();
  }

  dismissError(): void {
    this.patch({ error: null });
  }

  /** Starts a new conversation; the one shown stays in the history as it is. */
  async clear(): Promise<void> {
    if (this.control) return;
    await this.leave(this.journal);
    this.messages = [];
    this.freshImages = new Set();
    this.shift = 0;
    this.instructions = undefined;
    this.requestedTools = new Set();
    this.pastes = new PasteShelf();
    this.foldersSeen = new Set();
    this.store.set(emptyState());
    this.grants.restart();
    this.journal = this.newJournal(null);
    this.briefId = null;
    this.whole = null;
  }

  /** The key under which Rust holds what the user allowed in this conversation. */
  get grantsKey(): string {
    return this.grants.conversation;
  }

  /** Revokes one thing the user allowed in this conversation. */
  revokeGrant(id: string): Promise<void> {
    return this.grants.revoke(id);
  }

  /** The user's answer to an approval card. */
  decide(cardId: string, decision: Decision): void {
    this.tools.decide(cardId, decision);
  }

  /** Stops one running command; the loop goes on with its partial output. */
  stopCommand(cardId: string): void {
    const card = this.store.get().items.find((i): i is ToolItem => i.kind === "tool" && i.id === cardId);
    if (card?.runId) void this.ipc.cancel(card.runId).catch(() => undefined);
  }

  outputFor(cardId: string): OutputBuffer | undefined {
    return this.tools.outputs.get(cardId);
  }

  private async run(): Promise<void> {
    const control: RunControl = { cancelled: false, hooks: new Set() };
    this.control = control;
    this.patch({ busy: true, error: null, retrying: null, turnLimitReached: false });
    const maxTurns = this.options.maxTurns ?? DEFAULT_MAX_TURNS;
    let overflowRetried = false;
    try {
      // Asked each run: the programs the user added may have changed.
      this.specs = await this.ipc.toolSpecs();
      await this.loadModelFacts();
      for (let turn = 1; ; turn++) {
        const unfit = await this.fitContext(control, this.specs);
        if (unfit) {
          this.patch({ error: unfit });
          break;
        }
        if (control.cancelled) break;
        const usedBefore = this.store.get().usage;
        const outcome = await this.streamTurn(control, this.specs);
        if (outcome.error && isContextOverflow(outcome.error) && !overflowRetried && !control.cancelled) {
          // Compacted and sent again once, by itself; a second overflow is shown.
          overflowRetried = true;
          const unfit = this.noteOverflow(outcome.error, this.specs);
          if (unfit) {
            // Compacting cannot help when the fixed prompt alone does not fit.
            this.patch({ error: unfit });
            break;
          }
          if (await this.compactNow(control, true)) {
            turn--;
            continue;
          }
        }
        if (outcome.error && this.refusesEarlierImages(outcome.error) && !control.cancelled) {
          // Sent again without them (once: then they are left out).
          this.imagesRefused = true;
          this.notice("This model takes no images: the conversation's earlier images are left out of what it is sent from now on. They stay in the conversation.");
          turn--;
          continue;
        }
        if (outcome.error) {
          this.patch({ error: outcome.error });
          break;
        }
        if (outcome.message) {
          this.messages = [...this.messages, outcome.message];
          const used = this.store.get().usage;
          this.record(outcome.message, {
            input_tokens: used.input_tokens - usedBefore.input_tokens,
            output_tokens: used.output_tokens - usedBefore.output_tokens,
          });
        }
        const uses = outcome.message?.content.filter((b): b is ToolUseBlock => b.type === "tool_use") ?? [];
        if (uses.length > 0 && outcome.stopReason === "max_tokens") {
          // A reply cut off mid-way may carry garbled calls: none of them runs.
          this.messages = [...this.messages, { role: "user", content: uses.map((use) => this.cutOffCard(use)) }];
          this.record(this.messages[this.messages.length - 1]);
          this.notice(
            `The reply was cut off at its token limit; its ${uses.length === 1 ? "tool call was" : `${uses.length} tool calls were`} not run. Send a message to let the agent try again.`,
          );
          break;
        }
        if (uses.length === 0) {
          if (outcome.stopReason === "max_tokens") this.notice("The reply hit the max tokens limit and was cut off.");
          else if (!control.cancelled && !outcome.message) this.notice("The model sent an empty reply.");
          break;
        }
        const asked = this.askedTools(uses, this.specs);
        const runnable = uses.filter((use) => !asked.has(use));
        const ran = control.cancelled
          ? runnable.map((use) => this.cancelCard(use))
          : await this.tools.runAll(runnable, control, this.cardIds, (use) => this.cancelCard(use));
        const results = uses.map((use) => asked.get(use) ?? ran[runnable.indexOf(use)]);
        const content = [...results, ...(await this.folderInstructions(uses))];
        this.messages = [...this.messages, { role: "user", content }];
        this.record({ role: "user", content });
        if (control.cancelled) break;
        // Each finished round is stored before the next turn starts.
        await this.save();
        if (turn >= maxTurns) {
          this.notice(`Paused after ${maxTurns} model turns. Continue to let the agent go on.`);
          this.patch({ turnLimitReached: true });
          break;
        }
      }
    } catch (error) {
      this.patch({ error: toWireError(error) });
    } finally {
      if (control.cancelled) this.notice("Stopped.");
      this.control = null;
      this.patch({ busy: false, retrying: null });
      // After Stop the meter shows what the next request would send.
      if (control.cancelled) this.estimateShown();
      await this.save();
    }
  }

  /** Card ids of the current turn, by the provider's tool_use id. */
  private cardIds = new Map<string, string>();
  /** Calls of the current turn whose input the model garbled, by tool_use id. */
  private inputErrors = new Map<string, WireError>();

  private async streamTurn(control: RunControl, specs: ToolSpec[]): Promise<TurnOutcome> {
    const runId = this.newId();
    const assembler = new StreamAssembler();
    const textId = this.newId();
    this.cardIds = new Map();
    this.inputErrors = new Map();
    this.addItem({ kind: "assistant", id: textId, text: "", streaming: true });
    let stopReason = "";
    let error: WireError | null = null;

    let hook = (): void => undefined;
    const cancelled = new Promise<void>((resolve) => {
      hook = () => {
        void this.ipc.cancel(runId).catch(() => undefined);
        resolve();
      };
    });
    control.hooks.add(hook);

    this.patch({ waiting: { since: Date.now() } });
    const onEvent = (event: LlmEvent): void => {
      if (control.cancelled) return;
      assembler.apply(event);
      if (event.type === "prompt_progress") {
        this.patch({ waiting: { since: this.store.get().waiting?.since ?? Date.now(), processed: event.processed, total: event.total } });
        return;
      }
      if (event.type !== "retrying" && event.type !== "usage" && this.store.get().waiting) this.patch({ waiting: null });
      if (event.type !== "retrying" && this.store.get().retrying) this.patch({ retrying: null });
      switch (event.type) {
        case "text_delta":
          this.updateItem(textId, (item) => ({ ...item, text: assembler.text }));
          return;
        case "tool_call_start":
          this.openCard(event.id, event.name, {});
          return;
        case "tool_call_end":
          if (event.input_error) this.inputErrors.set(event.id, event.input_error);
          this.openCard(event.id, event.name, event.input ?? {});
          return;
        case "usage": {
          reportedInput += event.input_tokens;
          const usage = this.store.get().usage;
          this.patch({
            usage: {
              input_tokens: usage.input_tokens + event.input_tokens,
              output_tokens: usage.output_tokens + event.output_tokens,
            },
          });
          return;
        }
        case "retrying":
          this.patch({ retrying: { attempt: event.attempt, delay_ms: event.delay_ms, error: event.error } });
          return;
        case "done":
          stopReason = event.stop_reason;
          return;
        case "error":
          error = event.error;
          return;
        case "tool_call_delta":
          return;
      }
    };

    const request = this.request(specs);
    // Request and reply together inside the window (fitContext made room).
    request.max_tokens = replyLimit(this.contextWindow.window, this.estimate.tokens(request));
    let reportedInput = 0;
    const stream = this.ipc.llmStream(runId, request, onEvent).then(
      () => undefined,
      (rejection: unknown) => {
        error ??= toWireError(rejection);
      },
    );
    await Promise.race([stream, cancelled]);
    control.hooks.delete(hook);
    this.patch({ waiting: null });
    if (reportedInput > 0) {
      this.estimate.calibrate(request, reportedInput);
      this.showMeter(reportedInput);
    } else {
      // Stopped, or a server that reports no usage: the estimate, not a stale count.
      this.showMeter(this.estimate.tokens(request));
    }

    // Half tool calls never reach the transcript, so their cards go too.
    const drop = new Set(assembler.unfinished.flatMap((callId) => this.cardIds.get(callId) ?? []));
    if (error && !control.cancelled) {
      // The failed turn is discarded whole; Retry sends the same transcript again.
      this.removeItems(new Set([textId, ...this.cardIds.values()]));
      return { message: null, stopReason, error };
    }
    if (assembler.text.trim() === "") drop.add(textId);
    else this.updateItem(textId, (item) => ({ ...item, streaming: false }));
    this.removeItems(drop);
    return { message: assembler.message(), stopReason: control.cancelled ? "cancelled" : stopReason, error: null };
  }

  private openCard(callId: string, name: string, input: Record<string, unknown>): void {
    const existing = this.cardIds.get(callId);
    if (existing) {
      this.updateCard(existing, { input });
      return;
    }
    const id = this.newId();
    this.cardIds.set(callId, id);
    const spec = this.specs?.find((s) => s.name === name);
    const shown = spec ? { display: spec.display } : {};
    this.addItem({ kind: "tool", id, callId, name, input, risk: spec?.risk ?? null, ...shown, status: "queued" });
  }

  /** Folders whose AGENTS.md was looked for in this conversation. */
  private foldersSeen = new Set<string>();

  /** The AGENTS.md of folders the model just read files in, as text blocks for it. */
  private async folderInstructions(uses: ToolUseBlock[]): Promise<TextBlock[]> {
    const source = this.options.instructions ?? PROJECT_INSTRUCTIONS;
    const blocks: TextBlock[] = [];
    for (const use of uses) {
      if (use.name !== "read_file" || typeof use.input.path !== "string") continue;
      for (const found of await source.folder(this.ipc, use.input.path, this.foldersSeen)) {
        this.notice(found.notice, found.text);
        blocks.push({ type: "text", text: instructionsBlock(found) });
      }
    }
    return blocks;
  }

  /** An image the person sent before this turn. */
  private readonly earlier = (block: Block): boolean => block.type === "image" && !this.freshImages.has(block);

  /**
   * Whether `error` is the model refusing images that can only be earlier
   * ones: this turn's message brought none (if it did, they are the likely
   * cause, and that message goes back to the box), and images from before
   * are still sent.
   */
  private refusesEarlierImages(error: WireError): boolean {
    return (
      error.details?.reason === "images_unsupported" &&
      !this.imagesRefused &&
      this.freshImages.size === 0 &&
      this.messages.some((m) => m.content.some(this.earlier))
    );
  }

  /** The conversation as the model is sent it: earlier images left out once it refused them. */
  private sentMessages(): Message[] {
    if (!this.imagesRefused) return this.messages;
    return this.messages.map((m) =>
      m.content.some(this.earlier) ? { ...m, content: m.content.map((b) => (this.earlier(b) ? { type: "text" as const, text: IMAGE_LEFT_OUT } : b)) } : m,
    );
  }

  /** The request the next turn sends. */
  private request(specs: ToolSpec[]): LlmRequest {
    const { window } = this.contextWindow;
    const root = this.options.projectRoot;
    const instructions = this.instructions ?? null;
    return {
      system: isSmallWindow(window) ? shortSystemPrompt(root, window, instructions) : systemPrompt(root, specs, instructions),
      messages: this.sentMessages(),
      tools: [...offeredTools(specs, window, this.requestedTools), ...(this.pastes.isEmpty ? [] : [READ_PASTE_TOOL])],
    };
  }

  /**
   * The calls of tools offered by name only: none runs; each gets a
   * result saying its parameters are offered now, and is from then on.
   */
  private askedTools(uses: ToolUseBlock[], specs: ToolSpec[]): Map<ToolUseBlock, ToolResultBlock> {
    const asked = new Map<ToolUseBlock, ToolResultBlock>();
    for (const use of uses) {
      if (use.name === READ_PASTE) {
        // The conversation's own text: nothing is touched, nothing asks.
        const answer = this.pastes.answer(use);
        asked.set(use, answer);
        const id = this.cardIds.get(use.id);
        if (id) this.updateCard(id, { status: answer.is_error ? "failed" : "done", result: { part: use.input.part } });
        continue;
      }
      if (!isOnRequest(use.name, this.contextWindow.window, specs, this.requestedTools)) continue;
      const text = `Not run: ${use.name}'s parameters are offered now. Call it again with them.`;
      asked.set(use, { type: "tool_result", tool_use_id: use.id, content: text });
      const id = this.cardIds.get(use.id);
      if (id) this.updateCard(id, { status: "done", result: { offered: use.name } });
    }
    for (const use of asked.keys()) if (use.name !== READ_PASTE) this.requestedTools.add(use.name);
    return asked;
  }

  /** The server's word on the model being asked (once per loop, or after `resetModel`). */
  private asking: Promise<ModelInfo> | null = null;
  /** Whether what the model cannot do was said (once per loop). */
  private modelNoted = false;
  /** The server's count of the prefix, asked once per model. */
  private counting: Promise<void> | null = null;

  /**
   * What the server says of the model: asked once, on the first need. On a
   * server that counts tokens, the count of the prefix is started once the
   * tools are known, and each caller waits for it (at most `countWaitMs`),
   * also a caller that comes while another's question is still out.
   */
  private async modelFacts(): Promise<ModelInfo> {
    if (this.model === undefined) {
      const asking = (this.asking ??= this.ipc.modelInfo().catch((): ModelInfo => ({})));
      const model = await asking;
      if (this.asking !== asking) return model; // the settings changed meanwhile
      if (this.model === undefined) {
        this.model = model;
        this.patch({ price: model.price ?? null });
      }
    }
    const model = this.model;
    if (model.counts_tokens && this.specs && this.asking) {
      const counting = (this.counting ??= this.countPrefix(this.specs, this.asking));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((done) => (timer = setTimeout(done, this.options.countWaitMs ?? COUNT_WAIT_MS)));
      await Promise.race([counting, waited]).finally(() => clearTimeout(timer));
    }
    return model;
  }

  /**
   * Corrects the estimate with the server's own count of the fixed prefix
   * (llama.cpp's template and tokenizer), once per model, before the first
   * request is sized by it; a server that cannot count leaves it as it is.
   */
  private async countPrefix(specs: ToolSpec[], asking: Promise<ModelInfo>): Promise<void> {
    const prefix = { ...this.request(specs), messages: [] };
    const counted = await this.ipc.countPromptTokens(prefix).catch(() => null);
    if (counted !== null && this.asking === asking) this.estimate.calibrate(prefix, counted);
  }

  /**
   * The meter of a conversation opened: the size of the request its next
   * message would send, estimated as before a send (without the project's
   * instructions, read at that send). Nothing is sent.
   */
  private async estimateOpened(journal: Journal): Promise<void> {
    try {
      this.specs ??= await this.ipc.toolSpecs();
      await this.modelFacts();
    } catch {
      return; // the meter comes with the next request
    }
    if (this.journal !== journal) return;
    this.patch({ price: this.model?.price ?? null });
    this.estimateShown();
  }

  /** Shows the next request's estimated size, when idle and the tools are known. */
  private estimateShown(): void {
    if (this.control || !this.specs || this.model === undefined) return;
    this.showMeter(this.estimate.tokens(this.request(this.specs)));
  }

  /** The model's context window and the project's instructions, once. */
  private async loadModelFacts(): Promise<void> {
    const model = await this.modelFacts();
    if (!this.modelNoted) {
      this.modelNoted = true;
      if (model.supports_tools === false) {
        this.notice(
          "The server says this model's chat template cannot call tools, so the agent can only talk. Start the server with a template that supports tools (llama.cpp: --jinja), or pick another model.",
        );
      }
    }
    if (this.instructions === undefined) {
      this.instructions = await (this.options.instructions ?? PROJECT_INSTRUCTIONS).root(this.ipc);
      // A conversation opened again already shows them, unless they changed since.
      const found = this.instructions;
      const shown = found && this.store.get().items.some((item) => item.kind === "notice" && item.text === found.notice && item.detail === found.text);
      if (found && !shown) this.notice(found.notice, found.text);
    }
  }

  private get contextWindow(): { window: number; known: boolean } {
    const window = this.model?.context_window;
    return window ? { window, known: true } : { window: DEFAULT_CONTEXT_WINDOW, known: false };
  }

  private showMeter(used: number): void {
    const { window, known } = this.contextWindow;
    this.patch({ context: { used, window, known } });
  }

  /**
   * Before a request: trims, then summarizes, when it would pass the
   * threshold; and when even then the reply would have less than its floor
   * of what the window has left, summarizes all but the last messages.
   */
  private async fitContext(control: RunControl, specs: ToolSpec[]): Promise<WireError | null> {
    const { window } = this.contextWindow;
    const limit = window * COMPACT_AT;
    const prefix = this.estimate.tokens({ ...this.request(specs), messages: [] });
    const tooLarge = prefixTooLarge(window, prefix);
    if (tooLarge) return tooLarge;
    // A result larger than its share never fits whole: cut now, not after a failure.
    this.messages = cutLargeResults(this.messages, resultShare(window, prefix, this.estimate.ratio));
    let size = this.estimate.tokens(this.request(specs));
    if (size > limit) {
      this.messages = trimOldToolResults(this.messages);
      size = this.estimate.tokens(this.request(specs));
    }
    if (size > limit && (await this.compactNow(control, false))) size = this.estimate.tokens(this.request(specs));
    if (window - withMargin(size) < replyFloor(window) && !control.cancelled && (await this.compactNow(control, true))) {
      size = this.estimate.tokens(this.request(specs));
    }
    this.showMeter(size);
    return null;
  }

  /**
   * Replaces the older part of the transcript by a summary the model writes.
   * The items the user sees stay as they are; the full original stays there.
   * Returns whether anything was compacted.
   */
  private async compactNow(control: RunControl, forced: boolean): Promise<boolean> {
    const keep = forced ? 2 : undefined;
    this.messages = trimOldToolResults(this.messages, keep);
    const boundary = compactionBoundary(this.messages, keep);
    if (boundary === 0) return forced;
    const older = this.messages.slice(0, boundary);
    // Only the last summary before the boundary: summarizing it again frees nothing.
    if (older.length === 1 && isSummaryMessage(older[0])) return false;
    const request = summaryRequest(older, this.contextWindow.window, this.estimate.ratio);
    request.max_tokens = replyLimit(this.contextWindow.window, this.estimate.tokens(request));
    const runId = this.newId();
    const hook = () => void this.ipc.cancel(runId).catch(() => undefined);
    control.hooks.add(hook);
    let summary = "";
    let failed: WireError | null = null;
    await this.ipc
      .llmStream(runId, request, (event) => {
        if (event.type === "text_delta") summary += event.text;
        if (event.type === "error") failed = event.error;
      })
      .catch((error: unknown) => {
        failed = toWireError(error);
      });
    control.hooks.delete(hook);
    if (control.cancelled) return false;
    if (failed || summary.trim() === "") {
      const why = failed ? `: ${(failed as WireError).message}` : ": the summary came back empty";
      this.notice(`Could not compact the conversation${why}.`);
      return false;
    }
    const compacted: Compaction = { summary: summary.trim(), covered: boundary + this.shift };
    this.shift += this.messages[boundary].role === "user" ? boundary : boundary - 1;
    this.messages = withSummary(this.messages, boundary, compacted.summary);
    // The notice opens to show the summary the model goes on from; the
    // history keeps it, so the conversation opened again goes on from it too.
    const count = older.length === 1 ? "1 earlier message was summarized for the model (it stays" : `${older.length} earlier messages were summarized for the model (they stay`;
    this.notice(`Compacted: ${count} shown above).`, compacted.summary, compacted);
    return true;
  }

  /**
   * Learns the window from the server's overflow error and says that the
   * conversation is compacted and sent again; or, when the fixed prefix
   * alone cannot fit that window, returns the error saying so instead.
   */
  private noteOverflow(error: WireError, specs: ToolSpec[]): WireError | null {
    const used = Number(error.details.prompt_tokens) || 0;
    const window = Number(error.details.context_window) || 0;
    if (window > 0 && (!this.model?.context_window || this.model.context_window > window)) {
      this.model = { ...this.model, context_window: window, source: "server" };
    }
    const tooLarge = prefixTooLarge(this.contextWindow.window, this.estimate.tokens({ ...this.request(specs), messages: [] }));
    if (tooLarge) return tooLarge;
    const sizes = used && window ? ` (${used.toLocaleString("en")} of ${window.toLocaleString("en")} tokens)` : "";
    this.notice(`The conversation no longer fit the model's context window${sizes}; compacting it and sending again.`);
    return null;
  }

  private cutOffCard(use: ToolUseBlock): ToolResultBlock {
    const id = this.cardIds.get(use.id);
    if (id) this.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Not run: the reply was cut off at its token limit.") });
    return textBlock(use, CUT_OFF_TEXT);
  }

  private cancelCard(use: ToolUseBlock): ToolResultBlock {
    const id = this.cardIds.get(use.id);
    if (id) this.updateCard(id, { status: "cancelled", error: wireError("cancelled", "Cancelled by the user.") });
    return textBlock(use, CANCELLED_TEXT);
  }

  /** Appends a completed message to the history, with the items that came with it. */
  private record(message: Message, usage?: { input_tokens: number; output_tokens: number }): void {
    this.journal.record(message, this.store.get().items, usage);
  }

  /** Waits until everything recorded is stored (failures were said as notices). */
  private async save(): Promise<void> {
    await this.journal.flush();
    if (this.retired.length > 0) await this.retryRetired();
  }


  /** Says once per conversation that commands ran without the namespaces. */
  private noteSandbox(result: unknown): void {
    const text = this.sandboxNoted ? null : sandboxNotice(result);
    if (text === null) return;
    this.sandboxNoted = true;
    this.notice(text);
  }

  private sandboxNoted = false;

  private notice(text: string, detail?: string, compacted?: Compaction): void {
    const item: Item = { kind: "notice", id: this.newId(), text, ...(detail === undefined ? {} : { detail }), ...(compacted ? { compacted } : {}) };
    this.addItem(item);
    this.journal.recordItems([item]);
  }

  private patch(change: Partial<AgentState>): void {
    this.store.update((state) => ({ ...state, ...change }));
  }

  private addItem(item: Item): void {
    this.store.update((state) => ({ ...state, items: [...state.items, item] }));
  }

  private updateItem(id: string, change: (item: Item) => Item): void {
    this.store.update((state) => ({
      ...state,
      items: state.items.map((item) => (item.id === id ? change(item) : item)),
    }));
  }

  private updateCard(id: string, change: Partial<ToolItem>): void {
    this.updateItem(id, (item) => (item.kind === "tool" ? { ...item, ...change } : item));
  }

  private removeItems(ids: Set<string>): void {
    if (ids.size === 0) return;
    this.store.update((state) => ({ ...state, items: state.items.filter((item) => !ids.has(item.id)) }));
  }
}

/** How long a conversation opened brief is shown before its whole is fetched. */
const WHOLE_AFTER_MS = 1000;
/** How many entries each answer of the whole fetched behind holds (about 2 MB of a long run's). */
const WHOLE_PART = 500;

/** Lets the page run (paint, input) before going on. */
function nextTask(): Promise<void> {
  return later(0);
}

function later(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
