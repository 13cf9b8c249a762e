// Before each request, the conversation is made to fit the model's window:
// results too large for their share are cut, old tool results trimmed, and
// when that is not enough the older part is summarized by the model itself
// (the items shown stay as they are; the history keeps the originals).
import { toWireError } from "../errors";
import type { Message, ToolSpec, WireError } from "../types";
import {
  COMPACT_AT,
  compactionBoundary,
  KEEP_RECENT,
  replyFloor,
  replyLimit,
  summaryRequest,
  type TokenEstimate,
  trimOldToolResults,
  withMargin,
  withSummary,
} from "./context";
import type { Board } from "./board";
import { cutLargeResults, prefixTooLarge, resultShare } from "./fitting";
import type { ModelFacts } from "./modelFacts";
import type { Outgoing } from "./outgoing";
import type { AgentIpc, RunControl } from "./ports";
import type { Compaction } from "./state";
import { addUsage, requestUsage } from "./usage";
import { count } from "../format";

/** The share of the conversation's room (the window below its compaction mark, less the fixed prefix) a summary keeps of the last messages. */
export const KEPT_SHARE = 0.4;
/** The fewest tokens a summary may be written in. */
export const SUMMARY_MIN_TOKENS = 256;
/** What old tool results are cut to, in characters, after the turn's summary (`squeeze`). */
export const SQUEEZE_OVER_CHARS = 400;

/** What the Compact button says when only the last messages are there (they are kept, never summarized). */
export const NOTHING_TO_COMPACT = "Nothing to compact yet: the conversation holds only the messages a summary would keep.";

export class ContextFitter {
  constructor(
    private readonly ipc: AgentIpc,
    private readonly newId: () => string,
    private readonly outgoing: Outgoing,
    private readonly facts: ModelFacts,
    private readonly estimate: TokenEstimate,
    private readonly board: Board,
    /** Raised before a summary is asked for (the project's PreCompact hooks), with what started it. */
    private readonly beforeCompact: (trigger: "auto" | "manual") => Promise<void> = async () => undefined,
  ) {}

  /** Shows `used` tokens against the model's window. */
  showMeter(used: number): void {
    const { window, known } = this.facts.contextWindow;
    this.board.patch({ context: { used, window, known } });
  }

  /** The estimated size of the fixed prefix a request with `specs` sends. */
  prefixTokens(specs: ToolSpec[]): number {
    return this.estimate.tokens(this.outgoing.prefix(specs));
  }

  /** The most characters a message or result may hold before it is cut or set aside. */
  resultShare(specs: ToolSpec[]): number {
    return resultShare(this.facts.contextWindow.window, this.prefixTokens(specs), this.estimate.ratio);
  }

  /** Whether a summary was asked for since the user's last message (at most one is, `fit`). */
  private summarized = false;
  /** Messages sent already: they stay byte for byte as sent, so the server's prompt cache holds them. */
  private readonly sent = new WeakSet<Message>();
  /** The fixed prefix's estimated tokens at the last fitting. */
  private prefixSize = 0;

  /** A new message of the user: its turn may summarize once again. */
  newTurn(): void {
    this.summarized = false;
  }

  /**
   * Before a request: summarizes (trimming what it keeps), when it would
   * pass the threshold; and when even then the reply would have less than its floor
   * of what the window has left, summarizes all but the last messages. One
   * summary at most per turn of the user: past it, old tool results are
   * cut short instead, and only a request that still cannot fit is
   * summarized again.
   */
  async fit(control: RunControl, specs: ToolSpec[]): Promise<WireError | null> {
    const { window } = this.facts.contextWindow;
    const limit = window * COMPACT_AT;
    const out = this.outgoing;
    const prefix = (this.prefixSize = this.prefixTokens(specs));
    const tooLarge = prefixTooLarge(window, prefix);
    if (tooLarge) return tooLarge;
    // A result larger than its share never fits whole: cut now, not after a failure.
    out.messages = cutLargeResults(out.messages, resultShare(window, prefix, this.estimate.ratio), (m) => this.sent.has(m));
    let size = this.estimate.tokens(out.request(specs));
    const short = () => window - withMargin(size) < replyFloor(window);
    // Not trimmed first: a trim changes messages sent already, so the
    // server reads the prompt again from there as after a summary, for less
    // room. The summary trims what it keeps (`compact`).
    if (size > limit && !this.summarized && (await this.compact(control, false))) size = this.estimate.tokens(out.request(specs));
    if (short() && !control.cancelled && this.squeeze()) size = this.estimate.tokens(out.request(specs));
    if (short() && !control.cancelled && (await this.compact(control, true))) size = this.estimate.tokens(out.request(specs));
    for (const message of out.messages) this.sent.add(message);
    this.showMeter(size);
    return null;
  }

  /**
   * After this turn's summary: old tool results (all but the last two
   * messages') cut to a few hundred characters, rather than a second
   * summary. Returns whether anything was cut.
   */
  squeeze(): boolean {
    if (!this.summarized) return false;
    const out = this.outgoing;
    const before = out.messages;
    out.messages = trimOldToolResults(out.messages, 2, SQUEEZE_OVER_CHARS);
    return out.messages !== before;
  }

  /**
   * How many of the last messages a summary keeps: those that fit in
   * `KEPT_SHARE` of the conversation's room (so the next requests have
   * room to grow in), at least one, at most `KEEP_RECENT`.
   */
  private keptBySize(): number {
    const messages = this.outgoing.messages;
    const { window } = this.facts.contextWindow;
    const room = Math.max(0, window * COMPACT_AT - this.prefixSize) * KEPT_SHARE;
    let kept = 0;
    let used = 0;
    while (kept < Math.min(KEEP_RECENT, messages.length)) {
      used += this.estimate.tokens({ system: "", messages: [messages[messages.length - 1 - kept]], tools: [] });
      if (kept > 0 && used > room) break;
      kept++;
    }
    return kept;
  }

  /**
   * Replaces the older part of the transcript by a summary the model writes.
   * The items the user sees stay as they are; the full original stays there.
   * A single message is never summarized (it would free nothing worth a
   * request). While it is asked, the window shows its progress
   * (`compacting`). Returns whether anything was compacted.
   */
  async compact(control: RunControl, forced: boolean, trigger: "auto" | "manual" = "auto"): Promise<boolean> {
    const out = this.outgoing;
    const keep = forced ? Math.min(2, this.keptBySize()) : this.keptBySize();
    out.messages = trimOldToolResults(out.messages, keep);
    const boundary = compactionBoundary(out.messages, keep);
    if (boundary < 2 && trigger === "manual") this.board.notice(NOTHING_TO_COMPACT);
    if (boundary === 0) return forced;
    const older = out.messages.slice(0, boundary);
    if (older.length < 2) return false;
    await this.beforeCompact(trigger);
    if (control.cancelled) return false;
    const { window } = this.facts.contextWindow;
    const request = summaryRequest(older, window, this.estimate.ratio);
    const tokens = this.estimate.tokens(request);
    // A summary as long as the window allows would leave no room to go on in.
    const room = Math.max(0, window * COMPACT_AT - this.prefixSize);
    request.max_tokens = Math.min(replyLimit(window, tokens), Math.max(SUMMARY_MIN_TOKENS, Math.floor(room / 3)));
    this.summarized = true;
    const runId = this.newId();
    let hook = (): void => undefined;
    const cancelled = new Promise<void>((resolve) => {
      hook = () => {
        void this.ipc.cancel(runId).catch(() => undefined);
        resolve();
      };
    });
    control.hooks.add(hook);
    let summary = "";
    let failed: WireError | null = null;
    const board = this.board;
    board.patch({ compacting: { since: Date.now(), tokens } });
    const stream = this.ipc
      .llmStream(runId, request, (event) => {
        if (control.cancelled) return;
        const compacting = board.get().compacting;
        if (event.type === "prompt_progress" && compacting) board.patch({ compacting: { ...compacting, processed: event.processed, total: event.total } });
        if (event.type === "text_delta" || event.type === "reasoning_delta") {
          if (compacting && !compacting.writing) board.patch({ compacting: { ...compacting, writing: true } });
        }
        if (event.type === "text_delta") summary += event.text;
        if (event.type === "error") failed = event.error;
        // The summary's request is the conversation's too.
        if (event.type === "usage") {
          const { usage, price } = board.get();
          board.patch({ usage: addUsage(usage, requestUsage(event, price)) });
        }
      })
      .then(
        () => undefined,
        (error: unknown) => {
          failed = toWireError(error);
        },
      );
    try {
      await Promise.race([stream, cancelled]);
    } finally {
      control.hooks.delete(hook);
      board.patch({ compacting: null });
    }
    if (control.cancelled) return false;
    if (failed || summary.trim() === "") {
      const why = failed ? `: ${(failed as WireError).message}` : ": the summary came back empty";
      board.notice(`Could not compact the conversation${why}.`);
      return false;
    }
    const compacted: Compaction = { summary: summary.trim(), covered: boundary + out.shift };
    out.shift += out.messages[boundary].role === "user" ? boundary : boundary - 1;
    out.messages = withSummary(out.messages, boundary, compacted.summary);
    // The notice opens to show the summary the model goes on from; the
    // history keeps it, so the conversation opened again goes on from it too.
    board.notice(`Compacted: ${older.length} earlier messages were summarized for the model (they stay shown above).`, compacted.summary, compacted);
    return true;
  }

  /**
   * Learns the window from the server's overflow error and says that the
   * conversation is compacted and sent again; or, when the fixed prefix
   * alone cannot fit that window, returns the error saying so instead.
   */
  noteOverflow(error: WireError, specs: ToolSpec[]): WireError | null {
    const used = Number(error.details.prompt_tokens) || 0;
    const window = Number(error.details.context_window) || 0;
    this.facts.learnWindow(window);
    const tooLarge = prefixTooLarge(this.facts.contextWindow.window, this.prefixTokens(specs));
    if (tooLarge) return tooLarge;
    const sizes = used && window ? ` (${count(used)} of ${count(window)} tokens)` : "";
    this.board.notice(`The conversation no longer fit the model's context window${sizes}; compacting it and sending again.`);
    return null;
  }
}
