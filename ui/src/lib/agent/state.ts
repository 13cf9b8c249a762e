// What the agent loop shows: the items of the conversation as the user sees
// them. The provider transcript (Message[]) lives beside it in the loop.
import type { HookNote } from "./hooks";
import type { GrantChoices } from "../grants";
import type { Grant, GrantEntry, ImageBlock, Price, ResolvedPath, Risk, ShownCall, ToolDisplay, WireError } from "../types";
import { noUsage, type Usage } from "./usage";

export type { Usage };

/** queued → (waiting →) running → done | failed; or denied; or cancelled by Stop. */
export type ToolStatus = "queued" | "waiting" | "running" | "done" | "failed" | "denied" | "cancelled";

export type Preview =
  | { kind: "diff"; path: string; before: string; after: string }
  | { kind: "unavailable"; path: string; reason: string };

/**
 * `images`: those sent with the text. `withdrawn`: the message was taken
 * back (the model refused its images); stored so the conversation opened
 * again leaves it out.
 */
export type UserItem = { kind: "user"; id: string; text: string; images?: ImageBlock[]; withdrawn?: true; cut?: Cut };
/**
 * What the model received of a tool result or a message cut or split to
 * fit its window: `received` of `total` characters, and how it can read
 * the rest (`rest`: "read_file with start_line and end_line", "read_paste,
 * parts 2 to 5"). Shown on the card or under the message.
 */
export type Cut = { received: number; total: number; rest: string };
/**
 * `reasoning`: what a thinking model thought before it answered, as it
 * streamed: shown folded above the answer and kept with it in the history,
 * never sent back to the model.
 */
export type AssistantItem = { kind: "assistant"; id: string; text: string; streaming: boolean; reasoning?: string };
/**
 * `detail`, when present, opens under the notice (an instruction file's
 * text, a compaction's summary). `compacted`: the compaction it announces,
 * kept with the history so a conversation opened again goes on from it.
 */
export type NoticeItem = { kind: "notice"; id: string; text: string; detail?: string; compacted?: Compaction };
/** A compaction: the summary, and how many of the conversation's first messages (as the history folds them) it stands for. */
export type Compaction = { summary: string; covered: number };
export type ToolItem = {
  kind: "tool";
  id: string;
  /** The provider's tool_use id (not unique across turns with every server). */
  callId: string;
  name: string;
  input: Record<string, unknown>;
  risk: Risk | null;
  /** How its tool's spec says to show it (absent on a card saved before specs said). */
  display?: ToolDisplay;
  status: ToolStatus;
  /** Why the policy asked or denied. */
  reason?: string;
  preview?: Preview;
  /** Where the call's paths lead, as Rust resolved them when it checked the call. */
  paths?: ResolvedPath[];
  /** The call as its question shows it, marked by Rust (every host shows these pieces). */
  shown?: ShownCall;
  result?: unknown;
  error?: WireError;
  /** Run id of a running exec_shell, for Stop. */
  runId?: string;
  /** The saved rule that let the call run without asking. */
  rule?: string;
  /** What the user allowed in the conversation that let it run without asking. */
  grant?: Grant;
  /** It touches a secret-like file: approved one call at a time, never granted or saved as a rule. */
  oneAtATime?: boolean;
  /** For a command that asks: the rule "Always allow" would save, as Rust proposes it. */
  proposedRule?: string;
  /** What "Allow in this conversation" may grant for the call, as its ticket says. */
  grantChoices?: GrantChoices;
  /** The call fetches from the network (approved, it runs with it). */
  network?: boolean;
  /** A `task` call's subagent: its type, what it did (its own items) and the tokens it used. */
  subagent?: SubagentTranscript;
  /** What the project's hooks did to the call (blocked, asked, allowed, changed its input, added context). */
  hooks?: HookNote[];
  /** The model's input, when a hook changed it (`input` is what ran). */
  modelInput?: Record<string, unknown>;
  /** The result was cut to fit the window before the model got it: how much it got. */
  cut?: Cut;
};
/** What a subagent did, kept on its task's card (and in the history with it). */
export type SubagentTranscript = { type: string; items: Item[]; usage: Usage };
export type Item = UserItem | AssistantItem | NoticeItem | ToolItem;


/** A summary on its way (see `AgentState.compacting`). */
export type Compacting = { since: number; tokens: number; processed?: number; total?: number; writing?: boolean };

/** How full the model's context window is: the next request's size, estimated or as the server counted it. */
export type ContextMeter = { used: number; window: number; known: boolean };


export type AgentState = {
  items: Item[];
  busy: boolean;
  /** The provider failure that ended the last run; Retry re-sends. */
  error: WireError | null;
  /** Set while the provider is retrying after a transient failure. */
  retrying: { attempt: number; delay_ms: number; error: WireError } | null;
  /** While a request waits for its first token: when it was sent, and how far the server is in reading the prompt, where it says. */
  waiting: { since: number; processed?: number; total?: number } | null;
  /**
   * While the older part is being summarized: since when, the summary
   * request's estimated tokens, how far the server is in reading it (where
   * it says) and whether the summary is coming in.
   */
  compacting: Compacting | null;
  usage: Usage;
  context: ContextMeter | null;
  /** The model's price per million tokens, when known (0 on this machine). */
  price: Price | null;
  /** The run stopped at the turn budget; Continue goes on. */
  turnLimitReached: boolean;
  /** A message taken back (the model refused its images), for the composer to hold again. */
  returned: { text: string; images: ImageBlock[] } | null;
  /** What the user allowed in this conversation (Rust holds them; this is its list). */
  grants: GrantEntry[];
};

export const emptyState = (): AgentState => ({
  items: [],
  busy: false,
  error: null,
  retrying: null,
  waiting: null,
  compacting: null,
  usage: noUsage(),
  context: null,
  price: null,
  turnLimitReached: false,
  returned: null,
  grants: [],
});

export function isTerminal(status: ToolStatus): boolean {
  return status === "done" || status === "failed" || status === "denied" || status === "cancelled";
}
