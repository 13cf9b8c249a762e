// The agent loop's IPC, written once over a transport: the window's
// (lib/ipc.ts: Tauri's invoke, a Channel for a streamed command's events)
// and corral-cli's (exec/host.ts: JSON through the embedded engine's one
// invoke function) send the same commands with the same arguments through
// it. It never imports @tauri-apps/api: a streamed command's events come
// back through a callback, and the window's transport makes the Channel.
import type { CommandName, Commands } from "../commands";
import type {
  ApprovalAnswer,
  CallTag,
  HookRequest,
  LlmEvent,
  LlmRequest,
  LlmTarget,
  NewEntry,
  SettingsInput,
  SetupSource,
  ShellEvent,
  ShellOutput,
} from "../types";

type ArgsOf<K extends CommandName> = Commands[K]["args"];

/** What a channel argument is, structurally (Tauri's Channel, without importing it). */
type ChannelOf<E> = { onmessage: (message: E) => void };

/** The name of `K`'s channel argument (`on_output`, `on_event`, …); never when it streams nothing. */
export type ChannelKey<K extends CommandName> = string extends keyof ArgsOf<K>
  ? never
  : { [P in keyof ArgsOf<K>]-?: NonNullable<ArgsOf<K>[P]> extends ChannelOf<never> ? P : never }[keyof ArgsOf<K>];

/** What `K`'s channel carries; never when it streams nothing. */
export type EventOf<K extends CommandName> = [ChannelKey<K>] extends [never]
  ? never
  : NonNullable<ArgsOf<K>[ChannelKey<K>]> extends ChannelOf<infer E>
    ? E
    : never;

/** `K`'s arguments without its channel (a callback carries the events instead). */
export type ArgsWithoutChannel<K extends CommandName> = Omit<ArgsOf<K>, ChannelKey<K>>;

/**
 * How a host is reached: runs `command` with `args`, each streamed event
 * handed to `onEvent` as it arrives; resolves to the command's result,
 * rejects with a WireError.
 */
export type Transport = {
  call<K extends CommandName>(command: K, args: ArgsWithoutChannel<K>, onEvent?: (event: EventOf<K>) => void): Promise<Commands[K]["result"]>;
};

/**
 * How a call runs: by the `ticket` check_call gave it (the call as Rust
 * checked it, its input parsed once), with `approval`, the user's answer
 * if it asked; without a ticket it is checked and run in one (call_tool),
 * in `conversation`, whose grants may cover it.
 */
export type Consent = { ticket?: string; approval?: ApprovalAnswer; conversation?: string };

/** Which entries of a conversation `openConversation` asks for, and how. */
export type OpenPart = { elideOver?: number; beforeSeq?: number; last?: number };

/** What a run of a call carries besides the call: its run id and checkpoint tag. */
type RunArgs = { run_id?: string; turn_id?: string; call_id?: string };

/** The loop's IPC over `transport`. */
export function agentIpc(transport: Transport) {
  const call = transport.call.bind(transport);

  /** Runs a call: `run_call` of its ticket, or `call_tool` (checked and run in one) without one. */
  function runTool(name: string, input: Record<string, unknown>, consent: Consent | undefined, run: RunArgs, onOutput?: (event: ShellEvent) => void) {
    if (consent?.ticket !== undefined) {
      const approval = consent.approval === undefined ? {} : { approval: consent.approval };
      return call("run_call", { ticket: consent.ticket, ...approval, ...run }, onOutput);
    }
    const conversation = consent?.conversation === undefined ? {} : { conversation: consent.conversation };
    return call("call_tool", { name, input, ...conversation, ...run }, onOutput);
  }

  return {
    // Policy and grants
    toolSpecs: () => call("tool_specs", {}),
    /**
     * Checks a call and has Rust keep it as a ticket (run it with `callTool`
     * and `{ ticket }`). `conversation`: the window's key of the
     * conversation; a grant of it may make the call `allow`.
     */
    checkCall: (tool: string, input: Record<string, unknown>, conversation?: string) =>
      call("check_call", { tool, input, ...(conversation === undefined ? {} : { conversation }) }),
    /** What the user allowed in the conversation, oldest first. */
    conversationGrants: (conversation: string) => call("conversation_grants", { conversation }),
    /** Revokes one; resolves to those left. */
    revokeGrant: (conversation: string, id: string) => call("revoke_grant", { conversation, id }),
    /** The window left the conversation: its grants end. */
    endConversation: (conversation: string) => call("end_conversation", { conversation }),

    // Tools: a checked call runs by its ticket (run_call); the window's own
    // reads are checked and run in one (call_tool). The model's input object
    // passes straight through.
    // `tag` names the user turn and the card of a call that can change the
    // project: the checkpoint taken before it carries them.
    // `runId`: `cancel(runId)` stops the call (an MCP server's tool).
    callTool: (name: string, input: Record<string, unknown>, consent?: Consent, tag?: CallTag, runId?: string) =>
      runTool(name, input, consent, { ...tag, ...(runId === undefined ? {} : { run_id: runId }) }),
    /** A command, its output handed to `onOutput` as it comes. */
    execShell: (input: Record<string, unknown>, consent: Consent | undefined, runId: string, onOutput: (event: ShellEvent) => void, tag?: CallTag) =>
      runTool("exec_shell", input, consent, { run_id: runId, ...tag }, onOutput) as Promise<ShellOutput>,

    // Hooks
    hookStatus: () => call("hook_status", {}),
    runHooks: (request: HookRequest) => call("run_hooks", { request }),

    // Custom commands and skills
    /** The project's and the user's custom commands and skills, each file's text whole. */
    customization: () => call("customization", {}),
    /** A file of a listed skill's folder (its SKILL.md without `file`). */
    skillFile: (source: SetupSource, folder: string, file?: string) =>
      call("skill_file", { source, folder, ...(file === undefined ? {} : { file }) }),

    // LLM
    /**
     * A turn streamed to `target` (the conversation's model, see
     * ModelSwitcher) when given, else as the settings say. Resolves once
     * the stream's terminal event (`done` or `error`) has arrived, not when
     * the command answers: in the window a channel message over about 8 KB
     * (a tool call's long arguments) travels apart from the command's
     * answer and can arrive after it, and a turn ended early would drop it.
     * The command answers Ok only after sending its terminal event (exec's
     * host hands every event over before the answer).
     */
    llmStream: async (runId: string, request: LlmRequest, onEvent: (event: LlmEvent) => void, target?: LlmTarget | null) => {
      let ended = (): void => undefined;
      const terminal = new Promise<void>((resolve) => (ended = resolve));
      const answer = await call("llm_stream", { run_id: runId, request, ...(target ? { target } : {}) }, (event) => {
        // Ended first: a callback that throws on it cannot hold the turn open.
        if (event.type === "done" || event.type === "error") ended();
        onEvent(event);
      });
      await terminal;
      return answer;
    },
    cancel: (runId: string) => call("cancel", { run_id: runId }),
    /** What is known of the model of `settings`, else of the saved settings. */
    modelInfo: (settings?: SettingsInput) => call("model_info", settings ? { settings } : {}),
    /** The server's own count of `request`'s tokens (llama.cpp), at `target` when given; null when it cannot count. */
    countPromptTokens: (request: LlmRequest, target?: LlmTarget | null) =>
      call("count_prompt_tokens", { request, ...(target ? { target } : {}) }),

    // Conversations (kept by Rust; see docs/ipc.md)
    /**
     * The conversation's entries, oldest first; `part` may ask for fewer
     * (`summary.entries` counts them all): with `elideOver`, tool results
     * longer than that many bytes are left out (see `elided`); with
     * `beforeSeq`, only the entries before that one; with `last`, only the
     * newest that many of them.
     */
    openConversation: (id: string, part: OpenPart = {}) =>
      call("open_conversation", {
        id,
        ...(part.elideOver === undefined ? {} : { elide_over: part.elideOver }),
        ...(part.beforeSeq === undefined ? {} : { before_seq: part.beforeSeq }),
        ...(part.last === undefined ? {} : { last: part.last }),
      }),
    appendEntry: (conversation: string | null, entry: NewEntry) =>
      call("append_entry", { ...(conversation === null ? {} : { conversation }), entry }),
  };
}
