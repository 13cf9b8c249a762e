// The ACP `session/update`s of a run (docs/acp.md), read off the loop's
// state as it changes, as exec's events are (events.ts): an update says
// what the window would show. Message (and thought) chunks, tool calls with their status
// and locations, the diff of an edit, and the plan of update_plan.
import type { AgentState, Item, ToolItem } from "../lib/agent/state";
import { isTerminal } from "../lib/agent/state";
import { planOf } from "../lib/plan";

/** A tool call's status in ACP. */
type CallStatus = "pending" | "in_progress" | "completed" | "failed";

type Content = { type: "content"; content: { type: "text"; text: string } } | { type: "diff"; path: string; oldText: string | null; newText: string };

/** The fields of ACP's ToolCall that Corral fills. */
export type ToolCallFields = {
  toolCallId: string;
  title: string;
  kind: "read" | "edit" | "delete" | "search" | "execute" | "think" | "fetch" | "other";
  status: CallStatus;
  rawInput: Record<string, unknown>;
  locations: { path: string }[];
  content: Content[];
};

export type SessionUpdate =
  | { sessionUpdate: "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk"; content: { type: "text"; text: string } }
  | ({ sessionUpdate: "tool_call" } & ToolCallFields)
  | { sessionUpdate: "tool_call_update"; toolCallId: string; status: CallStatus; content?: Content[]; rawOutput?: unknown }
  | { sessionUpdate: "plan"; entries: { content: string; priority: "medium"; status: "pending" | "in_progress" | "completed" }[] };

/** The ACP kind of a call, from how its spec says to show its result. */
function kindOf(card: ToolItem): ToolCallFields["kind"] {
  switch (card.display?.result) {
    case "file_content":
      return "read";
    case "written":
    case "edited":
      return "edit";
    case "deleted":
      return "delete";
    case "entries":
    case "files":
    case "matches":
    case "diagnostics":
      return "search";
    case "output":
      return "execute";
    case "plan":
      return "think";
    case "page":
      return "fetch";
    default:
      return card.network ? "fetch" : "other";
  }
}

/** A short title: the tool and what it is about (its path, command or query). */
function titleOf(card: ToolItem): string {
  const { path, command, args, query, pattern, url } = card.input;
  if (typeof command === "string") return [command, ...(Array.isArray(args) ? args.map(String) : [])].join(" ");
  const about = [path, query, pattern, url].find((v) => typeof v === "string");
  return about === undefined ? card.name : `${card.name} ${String(about)}`;
}

const text = (value: string): Content => ({ type: "content", content: { type: "text", text: value } });

/** Turns each new state into the session updates since the last one. */
export class UpdateTracker {
  private text = new Map<string, string>();
  private thought = new Map<string, string>();
  private tools = new Map<string, ToolItem["status"]>();
  private users = new Set<string>();

  constructor(
    private readonly send: (update: SessionUpdate) => void,
    /** The project's root: ACP's paths are absolute. */
    private readonly root: string,
    /** Items already told (a prompt's earlier turns); none when a stored conversation is replayed. */
    seen: readonly Item[],
  ) {
    for (const item of seen) {
      if (item.kind === "assistant") {
        this.text.set(item.id, item.text);
        this.thought.set(item.id, item.reasoning ?? "");
      } else if (item.kind === "tool") this.tools.set(item.id, item.status);
      else if (item.kind === "user") this.users.add(item.id);
    }
  }

  /** Marks the user messages in `state` as told: a prompt's own text is the client's already. */
  skipUsers(state: AgentState): void {
    for (const item of state.items) if (item.kind === "user") this.users.add(item.id);
  }

  update(state: AgentState): void {
    for (const item of state.items) {
      if (item.kind === "user" && !this.users.has(item.id)) {
        this.users.add(item.id);
        if (!item.withdrawn) this.send({ sessionUpdate: "user_message_chunk", content: { type: "text", text: item.text } });
      } else if (item.kind === "assistant") {
        // A thinking model's reasoning comes before its answer.
        const thought = this.thought.get(item.id) ?? "";
        const reasoning = item.reasoning ?? "";
        if (reasoning !== thought && reasoning.startsWith(thought)) {
          this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: reasoning.slice(thought.length) } });
        }
        this.thought.set(item.id, reasoning);
        const before = this.text.get(item.id) ?? "";
        if (item.text !== before && item.text.startsWith(before)) {
          this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: item.text.slice(before.length) } });
        }
        this.text.set(item.id, item.text);
      } else if (item.kind === "tool") {
        this.tool(item);
        // A subagent's calls are tool calls of the turn too: one may ask for permission.
        for (const inner of item.subagent?.items ?? []) if (inner.kind === "tool") this.tool(inner);
      }
    }
  }

  /** The call as ACP's ToolCall: what a permission request shows too. */
  toolCall(card: ToolItem): ToolCallFields {
    const paths = card.paths?.map((p) => this.absolute(p.inside)) ?? [];
    const path = card.input.path;
    if (paths.length === 0 && typeof path === "string") paths.push(this.absolute(path));
    return {
      toolCallId: card.id,
      title: titleOf(card),
      kind: kindOf(card),
      status: "pending",
      rawInput: card.input,
      locations: paths.map((p) => ({ path: p })),
      content: this.diff(card),
    };
  }

  private tool(card: ToolItem): void {
    const before = this.tools.get(card.id);
    if (before === card.status) return;
    this.tools.set(card.id, card.status);
    // A card is queued while the model still streams its input: it is told once whole.
    if ((before === undefined || before === "queued") && card.status !== "queued") {
      this.send({ sessionUpdate: "tool_call", ...this.toolCall(card) });
    }
    if (card.status === "running") {
      this.send({ sessionUpdate: "tool_call_update", toolCallId: card.id, status: "in_progress" });
    } else if (isTerminal(card.status)) {
      const done = card.status === "done";
      const why = card.error?.message ?? card.reason ?? card.status;
      this.send({
        sessionUpdate: "tool_call_update",
        toolCallId: card.id,
        status: done ? "completed" : "failed",
        content: done ? this.diff(card) : [text(card.status === "cancelled" ? "Cancelled." : why)],
        ...(card.result === undefined ? {} : { rawOutput: card.result }),
      });
      const plan = done && card.display?.result === "plan" ? planOf(card.result) : null;
      if (plan) {
        this.send({
          sessionUpdate: "plan",
          entries: plan.steps.map((step) => ({ content: step.step, priority: "medium", status: step.status })),
        });
      }
    }
  }

  /** The change of an edit, as Rust computed it when it checked the call. */
  private diff(card: ToolItem): Content[] {
    const preview = card.preview;
    if (preview?.kind !== "diff") return [];
    return [{ type: "diff", path: this.absolute(preview.path), oldText: preview.before === "" ? null : preview.before, newText: preview.after }];
  }

  private absolute(path: string): string {
    if (path.startsWith("/")) return path;
    const inside = path.replace(/^\.\/?/, "");
    return inside === "" ? this.root : `${this.root.replace(/\/$/, "")}/${inside}`;
  }
}
