// `corral-cli exec`'s script: the app's agent loop, run once on a task
// inside the CLI's embedded JS engine. The host (Rust) serves the loop's
// IPC, answers approvals (the terminal, or no one) and prints the events.
// Bundled by `npm run build:exec` into crates/corral-cli/js/exec.js.
import { projectAgents } from "../lib/agent/agentFiles";
import { builtInOf } from "../lib/agent/builtIns";
import { AgentLoop } from "../lib/agent/loop";
import { wireError } from "../lib/errors";
import { type AcpRequest, runAcp } from "./acp";
import type { ToolItem } from "../lib/agent/state";
import { noUsage, usageSince } from "../lib/agent/usage";
import { EventTracker, type ExecEvent, type Outcome, runUsage } from "./events";
import { installGlobals } from "./globals";
import { type Host, hostIpc } from "./host";

/** What the host asks for (as JSON): the task, the project, the conversation to go on with, whether it is kept. */
export type ExecRequest = { root: string; task: string; resume: string | null; ephemeral: boolean };

/** The host's answer to an approval. */
type Approval = { decision: "once" | "deny"; by: "terminal" | "no_terminal" };

/**
 * How a run ended, for its exit code: its outcome, or `not_stored` when it
 * was done but the conversation could not all be stored in the history.
 */
export type Ended = Outcome | "not_stored";

/** Runs one task to its end; resolves to how it ended. */
export async function runExec(host: Host, request: ExecRequest): Promise<Ended> {
  const ipc = hostIpc(host);
  const emit = (event: ExecEvent) => host.emit(JSON.stringify(event));
  const conversation = request.resume === null ? null : await ipc.openConversation(request.resume);
  const loop = new AgentLoop(ipc, { projectRoot: request.root, conversation, agents: projectAgents });
  if (conversation) await loop.loaded();
  // The run's usage is what it adds to the conversation's (a resumed one has its own before).
  const before = loop.state.get().usage;
  let stoppedAtApproval = false;
  const ask = async (card: ToolItem) => {
    const args = { id: card.id, name: card.name, input: card.input, reason: card.reason ?? "" };
    const raw = JSON.parse(await host.invoke("ask_approval", JSON.stringify(args))) as { ok: Approval } | { err: unknown };
    const answer: Approval = "ok" in raw ? raw.ok : { decision: "deny", by: "no_terminal" };
    emit({ type: "approval_answered", id: card.id, ...answer });
    loop.decide(card.id, answer.decision);
    if (answer.by === "no_terminal") {
      // No one can answer: the run ends here rather than go on without it.
      stoppedAtApproval = true;
      loop.stop();
    }
  };
  const tracker = new EventTracker(emit, (card) => void ask(card), loop.state.get());
  const unsubscribe = loop.state.subscribe((state) => tracker.update(state));
  // A built-in is Corral's, not the model's: /compact compacts the
  // conversation resumed; the others act on a window exec does not have.
  const builtIn = builtInOf(request.task);
  if (builtIn !== null && !(builtIn.headless && conversation)) {
    const why = builtIn.headless ? "there is no conversation to compact without --resume ID" : "it acts on the window, which exec does not have";
    emit({ type: "error", error: wireError("invalid_input", `\`/${builtIn.name}\` is one of Corral's own commands and does not run here: ${why}.`, "Run it in the window, or give exec a task for the model.") });
    emit({ type: "final", outcome: "failed", text: "", conversation: null, stored: !request.ephemeral, usage: runUsage(noUsage()) });
    unsubscribe();
    return "failed";
  }
  if (builtIn !== null) await loop.compact();
  else await loop.send(request.task);
  await loop.saveAll();
  unsubscribe();
  const state = loop.state.get();
  const usage = runUsage(usageSince(state.usage, before));
  emit({ type: "usage", ...usage });
  const last = state.items.at(-1);
  const text = last?.kind === "assistant" ? last.text : "";
  const ended = builtIn !== null ? !state.error : text !== "";
  const outcome: Outcome = stoppedAtApproval ? "approval" : state.error || state.turnLimitReached || !ended ? "failed" : "done";
  if (state.turnLimitReached) emit({ type: "notice", text: "The run stopped at its turn budget before the task was done." });
  // Every entry of the run in the history, or said what was not and why.
  const storeError = request.ephemeral ? null : loop.saveError;
  const stored = !request.ephemeral && loop.unsaved === 0;
  if (storeError) {
    const what = loop.conversationId === null ? "Nothing of the conversation was stored" : `The conversation ${loop.conversationId} was stored only in part`;
    emit({ type: "notice", text: `${what}: ${loop.unsaved} of its entries could not be written to the history (${storeError.message}).` });
  }
  emit({ type: "final", outcome, text, conversation: request.ephemeral ? null : loop.conversationId, stored, ...(storeError ? { store_error: storeError } : {}), usage });
  return outcome === "done" && !request.ephemeral && !stored ? "not_stored" : outcome;
}

/** The hosts' entries: `corralExec(requestJson)` resolves to the outcome, `corralAcp(requestJson)` to an ACP turn's answer. */
const scope = globalThis as unknown as Record<string, unknown>;
const host = scope.__corralHost as Host | undefined;
if (host) {
  installGlobals(host, scope);
  scope.corralExec = (request: string) => runExec(host, JSON.parse(request) as ExecRequest);
  scope.corralAcp = (request: string) => runAcp(host, JSON.parse(request) as AcpRequest);
}
