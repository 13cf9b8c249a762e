// Before each request, the conversation is made to fit the model's window:
// results too large for their share are cut, old tool results trimmed, and
// when that is not enough the older part is summarized by the model itself
// (the items shown stay as they are; the history keeps the originals).
import { toWireError } from "../errors";
import type { ToolSpec, WireError } from "../types";
import {
  COMPACT_AT,
  compactionBoundary,
  isSummaryMessage,
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

  /**
   * Before a request: trims, then summarizes, when it would pass the
   * threshold; and when even then the reply would have less than its floor
   * of what the window has left, summarizes all but the last messages.
   */
  async fit(control: RunControl, specs: ToolSpec[]): Promise<WireError | null> {
    const { window } = this.facts.contextWindow;
    const limit = window * COMPACT_AT;
    const out = this.outgoing;
    const prefix = this.prefixTokens(specs);
    const tooLarge = prefixTooLarge(window, prefix);
    if (tooLarge) return tooLarge;
    // A result larger than its share never fits whole: cut now, not after a failure.
    out.messages = cutLargeResults(out.messages, resultShare(window, prefix, this.estimate.ratio));
    let size = this.estimate.tokens(out.request(specs));
    if (size > limit) {
      out.messages = trimOldToolResults(out.messages);
      size = this.estimate.tokens(out.request(specs));
    }
    if (size > limit && (await this.compact(control, false))) size = this.estimate.tokens(out.request(specs));
    if (window - withMargin(size) < replyFloor(window) && !control.cancelled && (await this.compact(control, true))) {
      size = this.estimate.tokens(out.request(specs));
    }
    this.showMeter(size);
    return null;
  }

  /**
   * Replaces the older part of the transcript by a summary the model writes.
   * The items the user sees stay as they are; the full original stays there.
   * Returns whether anything was compacted.
   */
  async compact(control: RunControl, forced: boolean, trigger: "auto" | "manual" = "auto"): Promise<boolean> {
    const out = this.outgoing;
    const keep = forced ? 2 : undefined;
    out.messages = trimOldToolResults(out.messages, keep);
    const boundary = compactionBoundary(out.messages, keep);
    if (boundary === 0) return forced;
    const older = out.messages.slice(0, boundary);
    // Only the last summary before the boundary: summarizing it again frees nothing.
    if (older.length === 1 && isSummaryMessage(older[0])) return false;
    await this.beforeCompact(trigger);
    if (control.cancelled) return false;
    const { window } = this.facts.contextWindow;
    const request = summaryRequest(older, window, this.estimate.ratio);
    request.max_tokens = replyLimit(window, this.estimate.tokens(request));
    const runId = this.newId();
    const hook = () => void this.ipc.cancel(runId).catch(() => undefined);
    control.hooks.add(hook);
    let summary = "";
    let failed: WireError | null = null;
    await this.ipc
      .llmStream(runId, request, (event) => {
        if (event.type === "text_delta") summary += event.text;
        if (event.type === "error") failed = event.error;
        // The summary's request is the conversation's too.
        if (event.type === "usage") {
          const { usage, price } = this.board.get();
          this.board.patch({ usage: addUsage(usage, requestUsage(event, price)) });
        }
      })
      .catch((error: unknown) => {
        failed = toWireError(error);
      });
    control.hooks.delete(hook);
    if (control.cancelled) return false;
    if (failed || summary.trim() === "") {
      const why = failed ? `: ${(failed as WireError).message}` : ": the summary came back empty";
      this.board.notice(`Could not compact the conversation${why}.`);
      return false;
    }
    const compacted: Compaction = { summary: summary.trim(), covered: boundary + out.shift };
    out.shift += out.messages[boundary].role === "user" ? boundary : boundary - 1;
    out.messages = withSummary(out.messages, boundary, compacted.summary);
    // The notice opens to show the summary the model goes on from; the
    // history keeps it, so the conversation opened again goes on from it too.
    const count = older.length === 1 ? "1 earlier message was summarized for the model (it stays" : `${older.length} earlier messages were summarized for the model (they stay`;
    this.board.notice(`Compacted: ${count} shown above).`, compacted.summary, compacted);
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
    const sizes = used && window ? ` (${used.toLocaleString("en")} of ${window.toLocaleString("en")} tokens)` : "";
    this.board.notice(`The conversation no longer fit the model's context window${sizes}; compacting it and sending again.`);
    return null;
  }
}
