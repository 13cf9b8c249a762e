// The run's events (docs/exec.md, docs/exec-events.schema.json), read off
// the loop's state as it changes: the window renders the same state, so an
// event says what the window would show. One tracker per run.
import type { AgentState, Cut, ToolItem } from "../lib/agent/state";
import { isTerminal } from "../lib/agent/state";
import type { WireError } from "../lib/types";
import type { Usage } from "../lib/agent/usage";

export type ExecEvent =
  | { type: "text_delta"; id: string; text: string }
  | { type: "reasoning_delta"; id: string; text: string }
  | { type: "tool_call"; id: string; name: string; input: Record<string, unknown> }
  | { type: "approval_asked"; id: string; name: string; reason: string }
  | { type: "approval_answered"; id: string; decision: "once" | "deny"; by: "terminal" | "no_terminal" }
  | { type: "tool_result"; id: string; name: string; status: "done" | "failed" | "denied" | "cancelled"; reason?: string; result?: unknown; error?: WireError }
  | { type: "cut"; id: string; name?: string; received: number; total: number; rest: string }
  | { type: "notice"; text: string }
  | { type: "error"; error: WireError }
  | ({ type: "usage" } & RunUsage)
  | { type: "final"; outcome: Outcome; text: string; conversation: string | null; stored: boolean; store_error?: WireError; usage: RunUsage };

/**
 * What a run's model requests used (the servers' counts; of the input, the
 * tokens read from and written to the prompt cache) and cost in US
 * dollars: null when a request had no known price.
 */
export type RunUsage = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number; cost_usd: number | null };

/** A run's usage as told, from the sum of its requests. */
export function runUsage(usage: Usage): RunUsage {
  const { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens } = usage;
  return { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd: usage.unpriced > 0 ? null : usage.cost_usd };
}

/** How a run ended: its final message given, failed, or stopped at an approval no one could give. */
export type Outcome = "done" | "failed" | "approval";

/** Turns each new state into the events since the last one. */
export class EventTracker {
  private text = new Map<string, string>();
  private reasoning = new Map<string, string>();
  private tools = new Map<string, ToolItem["status"]>();
  private notices = new Set<string>();
  /** The cuts told, by item id, as "received/total". */
  private cuts = new Map<string, string>();
  private error: WireError | null = null;

  constructor(
    private readonly emit: (event: ExecEvent) => void,
    /** A tool card started waiting for the user's answer. */
    private readonly onWaiting: (card: ToolItem) => void,
    /** Items of a conversation resumed: already told. */
    seen: AgentState,
  ) {
    for (const item of seen.items) {
      if ((item.kind === "tool" || item.kind === "user") && item.cut) this.cuts.set(item.id, `${item.cut.received}/${item.cut.total}`);
      if (item.kind === "assistant") {
        this.text.set(item.id, item.text);
        this.reasoning.set(item.id, item.reasoning ?? "");
      } else if (item.kind === "tool") this.tools.set(item.id, item.status);
      else if (item.kind === "notice") this.notices.add(item.id);
    }
    this.error = seen.error;
  }

  update(state: AgentState): void {
    for (const item of state.items) {
      if (item.kind === "user" && item.cut) this.cut(item.id, item.cut);
      if (item.kind === "assistant") {
        const thought = this.reasoning.get(item.id) ?? "";
        const reasoning = item.reasoning ?? "";
        if (reasoning !== thought && reasoning.startsWith(thought)) {
          this.emit({ type: "reasoning_delta", id: item.id, text: reasoning.slice(thought.length) });
        }
        this.reasoning.set(item.id, reasoning);
        const before = this.text.get(item.id) ?? "";
        if (item.text !== before && item.text.startsWith(before)) {
          this.emit({ type: "text_delta", id: item.id, text: item.text.slice(before.length) });
        }
        this.text.set(item.id, item.text);
      } else if (item.kind === "notice" && !this.notices.has(item.id)) {
        this.notices.add(item.id);
        this.emit({ type: "notice", text: item.text });
      } else if (item.kind === "tool") {
        this.tool(item);
        // A subagent's calls are told too: one may ask for approval.
        for (const inner of item.subagent?.items ?? []) if (inner.kind === "tool") this.tool(inner);
      }
    }
    if (state.error && state.error !== this.error) this.emit({ type: "error", error: state.error });
    this.error = state.error;
  }

  /** A result or a message cut to fit the model's window: what the model received of it, told once (again if it changes). */
  private cut(id: string, cut: Cut, name?: string): void {
    const figures = `${cut.received}/${cut.total}`;
    if (this.cuts.get(id) === figures) return;
    this.cuts.set(id, figures);
    this.emit({ type: "cut", id, ...(name === undefined ? {} : { name }), received: cut.received, total: cut.total, rest: cut.rest });
  }

  private tool(card: ToolItem): void {
    // Results are cut after the call ended, as the next request is fitted.
    if (card.cut && isTerminal(card.status)) this.cut(card.id, card.cut, card.name);
    const before = this.tools.get(card.id);
    if (before === card.status) return;
    this.tools.set(card.id, card.status);
    // A card is queued while the model still streams its input: it is told once whole.
    if ((before === undefined || before === "queued") && card.status !== "queued") {
      this.emit({ type: "tool_call", id: card.id, name: card.name, input: card.input });
    }
    if (card.status === "waiting") {
      this.emit({ type: "approval_asked", id: card.id, name: card.name, reason: card.reason ?? "" });
      this.onWaiting(card);
    } else if (isTerminal(card.status)) {
      this.emit({
        type: "tool_result",
        id: card.id,
        name: card.name,
        status: card.status as "done" | "failed" | "denied" | "cancelled",
        ...(card.reason === undefined ? {} : { reason: card.reason }),
        ...(card.result === undefined ? {} : { result: card.result }),
        ...(card.error === undefined ? {} : { error: card.error }),
      });
    }
  }
}
