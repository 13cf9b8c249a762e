// The project's hooks as the loop raises them (docs/hooks.md): Rust reads
// the settings, runs the hooks in the sandbox and joins what they said;
// here is only when each event is raised and what its outcome does to the
// turn. `hook_status` is asked once per run, so a project without hooks
// costs no round trip per tool call.
import { toWireError } from "../errors";
import type { HookEvent, HookOutcome, HookRequest } from "../types";
import type { AgentIpc } from "./ports";

/** What a hook did to a tool call, shown on the card it affected. */
export type HookNote = {
  event: HookEvent;
  kind: "blocked" | "asked" | "allowed" | "modified" | "context";
  /** The hook's command. */
  by: string;
  /** Its reason, or the context it added. */
  text?: string;
};

export class LoopHooks {
  private events = new Set<HookEvent>();

  constructor(
    private readonly ipc: AgentIpc,
    /** The conversation's id, the hooks' `session_id`. */
    private readonly conversation: () => string | null,
    /** A line for the user (a hook that failed without blocking). */
    private readonly notice: (text: string) => void,
  ) {}

  /** Asks which events have hooks now (once per run: settings may have changed, or been trusted). */
  async refresh(): Promise<void> {
    if (!this.ipc.hookStatus) return;
    try {
      this.events = new Set((await this.ipc.hookStatus()).events);
    } catch {
      this.events = new Set();
    }
  }

  /** Runs `event`'s hooks; null when it has none (nothing is asked of Rust). */
  async raise(event: HookEvent, fields: Omit<HookRequest, "event" | "conversation">): Promise<HookOutcome | null> {
    if (!this.ipc.runHooks || !this.events.has(event)) return null;
    const conversation = this.conversation();
    let outcome: HookOutcome;
    try {
      outcome = await this.ipc.runHooks({ event, ...(conversation ? { conversation } : {}), ...fields });
    } catch (error) {
      this.notice(`The ${event} hooks could not run: ${toWireError(error).message}`);
      return null;
    }
    for (const text of outcome.notices) this.notice(`Hook: ${text}`);
    return outcome.ran.length > 0 ? outcome : null;
  }
}

/** The outcome's context for the model, as one text, or null. */
export function hookContext(event: HookEvent, outcome: HookOutcome | null): string | null {
  if (!outcome || outcome.context.length === 0) return null;
  return `Context from the ${event} hooks:\n${outcome.context.join("\n")}`;
}

/** Why a hook blocked, and which. */
export function blockedBy(outcome: HookOutcome): { by: string; reason: string } | null {
  const reason = outcome.block ?? outcome.stop;
  if (reason === undefined) return null;
  return { by: outcome.blocked_by ?? outcome.by ?? outcome.ran[0] ?? "a hook", reason };
}

/** What a tool event's outcome shows on the card. */
export function notesOf(event: HookEvent, outcome: HookOutcome): HookNote[] {
  const notes: HookNote[] = [];
  const by = outcome.by ?? outcome.ran[0] ?? "";
  if (outcome.verdict === "deny") notes.push({ event, kind: "blocked", by, text: outcome.reason ?? outcome.block });
  else if (outcome.block !== undefined) notes.push({ event, kind: "blocked", by: outcome.blocked_by ?? by, text: outcome.block });
  if (outcome.verdict === "ask") notes.push({ event, kind: "asked", by, ...(outcome.reason ? { text: outcome.reason } : {}) });
  if (outcome.verdict === "allow") notes.push({ event, kind: "allowed", by, ...(outcome.reason ? { text: outcome.reason } : {}) });
  if (outcome.updated_input !== undefined) notes.push({ event, kind: "modified", by: outcome.updated_by ?? by });
  for (const text of outcome.context) notes.push({ event, kind: "context", by, text });
  return notes;
}
