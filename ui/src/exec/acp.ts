// `corral-cli acp`'s script: one prompt of an ACP session, or the replay of
// a stored conversation, run by the same agent loop as exec's and the
// window's. The host (Rust, crates/corral-cli/src/acp/) sends the updates
// to the editor, asks it for each approval and says when it cancels.
import { projectAgents } from "../lib/agent/agentFiles";
import { everyCard } from "../lib/agent/subagents";
import { AgentLoop } from "../lib/agent/loop";
import type { Decision } from "../lib/agent/ports";
import type { AgentState, ToolItem } from "../lib/agent/state";
import { UpdateTracker, type ToolCallFields } from "./acpUpdates";
import { type Host, hostIpc } from "./host";

/** What the host asks for (as JSON): a prompt, or (prompt null) the replay of `resume`. */
export type AcpRequest = { root: string; prompt: string | null; resume: string | null };

/** The answer (as JSON): how the turn stopped, and the conversation it is stored as. */
export type AcpAnswer = { stopReason: "end_turn" | "max_turn_requests" | "cancelled" | "error"; conversation: string | null; error?: unknown };

/**
 * What the host asks the editor about a waiting call: the call as ACP's
 * ToolCall, and which answers it may offer beyond once and reject.
 */
export type PermissionQuestion = { toolCall: ToolCallFields; network: boolean; grant: boolean };

/** The editor's choice: an option Corral offered, or cancelled (the prompt was). */
type Choice = { decision: "once" | "network" | "grant" | "deny" | "cancelled" };

/** Runs one prompt (or replays a conversation); resolves to the answer's JSON. */
export async function runAcp(host: Host, request: AcpRequest): Promise<string> {
  const ipc = hostIpc(host);
  const conversation = request.resume === null ? null : await ipc.openConversation(request.resume);
  const loop = new AgentLoop(ipc, { projectRoot: request.root, conversation, agents: projectAgents });
  if (conversation) await loop.loaded();
  const send = (update: unknown) => host.emit(JSON.stringify(update));
  if (request.prompt === null) {
    new UpdateTracker(send, request.root, []).update(loop.state.get());
    return JSON.stringify({ stopReason: "end_turn", conversation: request.resume } satisfies AcpAnswer);
  }
  const tracker = new UpdateTracker(send, request.root, loop.state.get().items);
  let cancelled = false;
  // The editor's session/cancel: the loop stops the turn and any running command.
  void host.invoke("wait_stop", "{}").then(() => {
    cancelled = true;
    loop.stop();
  });
  const asked = new Set<string>();
  const ask = async (card: ToolItem) => {
    // The grant offered is this very call, as its ticket says (none for a call approved one at a time).
    const exact = card.grantChoices?.exact_grant;
    const question: PermissionQuestion = { toolCall: tracker.toolCall(card), network: card.network === true, grant: exact !== undefined };
    const raw = JSON.parse(await host.invoke("ask_approval", JSON.stringify(question))) as { ok: Choice } | { err: unknown };
    const choice = "ok" in raw ? raw.ok.decision : "deny";
    const decision: Decision = choice === "grant" && exact ? { grant: exact } : choice === "cancelled" || choice === "grant" ? "deny" : choice;
    loop.decide(card.id, decision);
    if (choice === "cancelled") {
      cancelled = true;
      loop.stop();
    }
  };
  const unsubscribe = loop.state.subscribe((state) => {
    tracker.skipUsers(state);
    tracker.update(state);
    // A subagent's call asks as the parent's do.
    for (const item of everyCard(state.items)) {
      if (item.status === "waiting" && !asked.has(item.id)) {
        asked.add(item.id);
        void ask(item);
      }
    }
  });
  await loop.send(request.prompt);
  await loop.saveAll();
  unsubscribe();
  const state = loop.state.get();
  send(usageUpdate(state));
  const answer: AcpAnswer = cancelled
    ? { stopReason: "cancelled", conversation: loop.conversationId }
    : state.error
      ? { stopReason: "error", conversation: loop.conversationId, error: state.error }
      : { stopReason: state.turnLimitReached ? "max_turn_requests" : "end_turn", conversation: loop.conversationId };
  return JSON.stringify(answer);
}

/**
 * ACP's `usage_update` after a turn: the tokens in the context and its
 * window, as the meter shows them, and what the conversation cost when
 * every one of its requests had a known price (US dollars).
 */
export function usageUpdate(state: AgentState): Record<string, unknown> {
  const cost = state.usage.unpriced === 0 ? { cost: { amount: state.usage.cost_usd, currency: "USD" } } : {};
  return { sessionUpdate: "usage_update", used: state.context?.used ?? 0, size: state.context?.window ?? 0, ...cost };
}
