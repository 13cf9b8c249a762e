// The agent loop's IPC over a host without a window (corral-cli's embedded
// JS engine): lib/agent/agentIpc.ts's commands, the same the window sends,
// carried as JSON through the host's one `invoke` function. A streamed
// command (llm_stream, a command's live output) calls back with each event
// as it arrives instead of through a Tauri Channel.
import { agentIpc, type Transport } from "../lib/agent/agentIpc";
import type { AgentIpc } from "../lib/agent/ports";
import { toWireError } from "../lib/errors";

/** What the host gives the script (corral-cli's Rust, see crates/corral-cli/src/exec/). */
export type Host = {
  /**
   * Runs `command` with its JSON arguments; resolves to `{"ok": result}` or
   * `{"err": WireError}` as JSON. `onEvent` gets each streamed event's JSON.
   */
  invoke(command: string, args: string, onEvent?: (event: string) => void): Promise<string>;
  /** One event of the run (docs/exec.md), as JSON. */
  emit(event: string): void;
  /** Resolves after `ms`, or at once when `clearTimer(id)` is called first. */
  timer(id: number, ms: number): Promise<void>;
  clearTimer(id: number): void;
  /** A random UUID (v4). */
  uuid(): string;
};

type Answer<T> = { ok: T } | { err: unknown };

/** The transport over `host`: JSON both ways, each streamed event parsed as it comes. */
export function hostTransport(host: Host): Transport {
  return {
    async call(command, args, onEvent) {
      const forward = onEvent && ((event: string) => onEvent(JSON.parse(event) as never));
      const answer = JSON.parse(await host.invoke(command, JSON.stringify(args), forward)) as Answer<never>;
      if ("err" in answer) throw toWireError(answer.err);
      return answer.ok;
    },
  };
}

/**
 * The AgentIpc the loop runs on, over `host`. The host answers a stream
 * once its terminal event was handed over: events are delivered in order
 * before the answer, so nothing arrives after it.
 */
export function hostIpc(host: Host): AgentIpc {
  return agentIpc(hostTransport(host));
}
