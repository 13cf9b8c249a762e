// The agent loop's IPC over a host without a window (corral-cli's embedded
// JS engine): the same commands, with the same arguments, as the app's
// ipc.ts sends to Tauri, handed to the host's one `invoke` function. A
// streamed command (llm_stream, a command's live output) calls back with
// each event as it arrives instead of through a Tauri Channel.
import type { AgentIpc } from "../lib/agent/ports";
import type { CommandName, Commands } from "../lib/commands";
import type { Consent, OpenPart } from "../lib/ipc";
import { toWireError } from "../lib/errors";
import type { CallTag, LlmEvent, ShellEvent, ShellOutput } from "../lib/types";

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

/** The arguments of `K` without its Tauri channel (a callback carries the events instead). */
type ArgsOf<K extends CommandName> = Omit<Commands[K]["args"], "on_event" | "on_output">;

type Answer<T> = { ok: T } | { err: unknown };

/** The AgentIpc the loop runs on, over `host`. */
export function hostIpc(host: Host): AgentIpc {
  async function call<K extends CommandName>(
    command: K,
    args: ArgsOf<K>,
    onEvent?: (event: never) => void,
  ): Promise<Commands[K]["result"]> {
    const forward = onEvent && ((event: string) => onEvent(JSON.parse(event) as never));
    const answer = JSON.parse(await host.invoke(command, JSON.stringify(args), forward)) as Answer<Commands[K]["result"]>;
    if ("err" in answer) throw toWireError(answer.err);
    return answer.ok;
  }

  /** As ipc.ts's runTool: by its ticket, or checked and run in one without one. */
  function runTool(
    name: string,
    input: Record<string, unknown>,
    consent: Consent | undefined,
    run: { run_id?: string; turn_id?: string; call_id?: string },
    onOutput?: (event: ShellEvent) => void,
  ): Promise<unknown> {
    if (consent?.ticket !== undefined) {
      const approval = consent.approval === undefined ? {} : { approval: consent.approval };
      return call("run_call", { ticket: consent.ticket, ...approval, ...run }, onOutput);
    }
    const conversation = consent?.conversation === undefined ? {} : { conversation: consent.conversation };
    return call("call_tool", { name, input, ...conversation, ...run }, onOutput);
  }

  const runIdOf = (runId?: string) => (runId === undefined ? {} : { run_id: runId });

  return {
    toolSpecs: () => call("tool_specs", {}),
    checkCall: (tool: string, input: Record<string, unknown>, conversation?: string) =>
      call("check_call", { tool, input, ...(conversation === undefined ? {} : { conversation }) }),
    conversationGrants: (conversation: string) => call("conversation_grants", { conversation }),
    revokeGrant: (conversation: string, id: string) => call("revoke_grant", { conversation, id }),
    endConversation: (conversation: string) => call("end_conversation", { conversation }),
    callTool: (name: string, input: Record<string, unknown>, consent?: Consent, tag?: CallTag, runId?: string) =>
      runTool(name, input, consent, { ...tag, ...runIdOf(runId) }),
    execShell: (
      input: Record<string, unknown>,
      consent: Consent | undefined,
      runId: string,
      onOutput: (event: ShellEvent) => void,
      tag?: CallTag,
    ) => runTool("exec_shell", input, consent, { run_id: runId, ...tag }, onOutput) as Promise<ShellOutput>,
    // The host answers once the terminal event was handed over: events are
    // delivered in order before the answer, so nothing arrives after it.
    llmStream: async (runId, request, onEvent: (event: LlmEvent) => void, target) => {
      await call("llm_stream", { run_id: runId, request, ...(target ? { target } : {}) }, onEvent);
      return null;
    },
    cancel: (runId: string) => call("cancel", { run_id: runId }),
    hookStatus: () => call("hook_status", {}),
    runHooks: (request) => call("run_hooks", { request }),
    customization: () => call("customization", {}),
    skillFile: (source, folder, file) => call("skill_file", { source, folder, ...(file === undefined ? {} : { file }) }),
    modelInfo: () => call("model_info", {}),
    countPromptTokens: (request, target) => call("count_prompt_tokens", { request, ...(target ? { target } : {}) }),
    openConversation: (id: string, part: OpenPart = {}) =>
      call("open_conversation", {
        id,
        ...(part.elideOver === undefined ? {} : { elide_over: part.elideOver }),
        ...(part.beforeSeq === undefined ? {} : { before_seq: part.beforeSeq }),
        ...(part.last === undefined ? {} : { last: part.last }),
      }),
    appendEntry: (conversation, entry) =>
      call("append_entry", { ...(conversation === null ? {} : { conversation }), entry }),
  };
}
