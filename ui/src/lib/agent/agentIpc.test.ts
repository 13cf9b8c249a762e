// The agent loop's IPC is written once over a transport; the window's and
// exec's transports only carry it. Each function sends its command with the
// arguments Rust reads, and a streamed one's events reach its callback.
import { describe, expect, it, vi } from "vitest";
import type { CommandName } from "../commands";
import type { LlmEvent, LlmRequest, ShellEvent } from "../types";
import { agentIpc, type Transport } from "./agentIpc";
import type { AgentIpc } from "./ports";

const channels: { onmessage?: (message: unknown) => void }[] = [];
const invoke = vi.fn(async (..._args: unknown[]): Promise<unknown> => null);
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage?: (message: unknown) => void;
    constructor() {
      channels.push(this);
    }
  },
  invoke: (...args: unknown[]) => invoke(...args),
}));

type Sent = { command: CommandName; args: unknown; streamed: boolean };

const REQUEST = { system: "", messages: [], tools: [] } as unknown as LlmRequest;
const OUTPUT: ShellEvent = { stream: "stdout", data: "hi\n" };
const DONE: LlmEvent = { type: "done", stop_reason: "end_turn" };

/** A transport that records each call and plays a streamed command's events before it answers. */
function recording() {
  const sent: Sent[] = [];
  const transport: Transport = {
    call: async (command, args, onEvent) => {
      sent.push({ command, args, streamed: onEvent !== undefined });
      const events: Partial<Record<CommandName, unknown>> = { llm_stream: DONE, run_call: OUTPUT, call_tool: OUTPUT };
      if (onEvent && command in events) onEvent(events[command] as never);
      return null as never;
    },
  };
  return { sent, transport };
}

// Each function as the loop calls it, and the one command it must send.
const CASES: [string, (ipc: AgentIpc, events: unknown[]) => Promise<unknown>, Sent][] = [
  ["toolSpecs", (ipc) => ipc.toolSpecs(), { command: "tool_specs", args: {}, streamed: false }],
  ["checkCall", (ipc) => ipc.checkCall("read_file", { path: "a" }), { command: "check_call", args: { tool: "read_file", input: { path: "a" } }, streamed: false }],
  ["checkCall in a conversation", (ipc) => ipc.checkCall("read_file", { path: "a" }, "c1"), { command: "check_call", args: { tool: "read_file", input: { path: "a" }, conversation: "c1" }, streamed: false }],
  ["conversationGrants", (ipc) => ipc.conversationGrants("c1"), { command: "conversation_grants", args: { conversation: "c1" }, streamed: false }],
  ["revokeGrant", (ipc) => ipc.revokeGrant("c1", "g1"), { command: "revoke_grant", args: { conversation: "c1", id: "g1" }, streamed: false }],
  ["endConversation", (ipc) => ipc.endConversation("c1"), { command: "end_conversation", args: { conversation: "c1" }, streamed: false }],
  [
    "callTool by its ticket",
    (ipc) => ipc.callTool("write_file", { path: "a" }, { ticket: "t1", approval: { scope: "once" } }, { turn_id: "u1", call_id: "k1" }, "r1"),
    { command: "run_call", args: { ticket: "t1", approval: { scope: "once" }, turn_id: "u1", call_id: "k1", run_id: "r1" }, streamed: false },
  ],
  [
    "callTool without a ticket",
    (ipc) => ipc.callTool("read_file", { path: "a" }, { conversation: "c1" }),
    { command: "call_tool", args: { name: "read_file", input: { path: "a" }, conversation: "c1" }, streamed: false },
  ],
  [
    "execShell by its ticket",
    (ipc, events) => ipc.execShell({ command: "ls" }, { ticket: "t2" }, "r2", (event) => events.push(event), { turn_id: "u1" }),
    { command: "run_call", args: { ticket: "t2", run_id: "r2", turn_id: "u1" }, streamed: true },
  ],
  [
    "execShell without a ticket",
    (ipc, events) => ipc.execShell({ command: "ls" }, undefined, "r3", (event) => events.push(event)),
    { command: "call_tool", args: { name: "exec_shell", input: { command: "ls" }, run_id: "r3" }, streamed: true },
  ],
  ["llmStream", (ipc, events) => ipc.llmStream("r4", REQUEST, (event) => events.push(event)), { command: "llm_stream", args: { run_id: "r4", request: REQUEST }, streamed: true }],
  [
    "llmStream to a target",
    (ipc, events) => ipc.llmStream("r5", REQUEST, (event) => events.push(event), { provider: "ollama", base_url: "http://x", model: "m" } as never),
    { command: "llm_stream", args: { run_id: "r5", request: REQUEST, target: { provider: "ollama", base_url: "http://x", model: "m" } }, streamed: true },
  ],
  ["cancel", (ipc) => ipc.cancel("r1"), { command: "cancel", args: { run_id: "r1" }, streamed: false }],
  ["hookStatus", (ipc) => ipc.hookStatus?.() ?? Promise.reject(new Error("missing")), { command: "hook_status", args: {}, streamed: false }],
  [
    "runHooks",
    (ipc) => ipc.runHooks?.({ event: "Stop" } as never) ?? Promise.reject(new Error("missing")),
    { command: "run_hooks", args: { request: { event: "Stop" } }, streamed: false },
  ],
  ["customization", (ipc) => ipc.customization(), { command: "customization", args: {}, streamed: false }],
  ["skillFile", (ipc) => ipc.skillFile("project" as never, "pdf"), { command: "skill_file", args: { source: "project", folder: "pdf" }, streamed: false }],
  ["skillFile of a file", (ipc) => ipc.skillFile("project" as never, "pdf", "a.md"), { command: "skill_file", args: { source: "project", folder: "pdf", file: "a.md" }, streamed: false }],
  ["modelInfo", (ipc) => ipc.modelInfo(), { command: "model_info", args: {}, streamed: false }],
  ["countPromptTokens", (ipc) => ipc.countPromptTokens(REQUEST), { command: "count_prompt_tokens", args: { request: REQUEST }, streamed: false }],
  ["openConversation", (ipc) => ipc.openConversation("c1"), { command: "open_conversation", args: { id: "c1" }, streamed: false }],
  [
    "openConversation in part",
    (ipc) => ipc.openConversation("c1", { elideOver: 4096, beforeSeq: 9, last: 60 }),
    { command: "open_conversation", args: { id: "c1", elide_over: 4096, before_seq: 9, last: 60 }, streamed: false },
  ],
  ["appendEntry to a new conversation", (ipc) => ipc.appendEntry(null, { kind: "notice" } as never), { command: "append_entry", args: { entry: { kind: "notice" } }, streamed: false }],
  ["appendEntry", (ipc) => ipc.appendEntry("c1", { kind: "notice" } as never), { command: "append_entry", args: { conversation: "c1", entry: { kind: "notice" } }, streamed: false }],
];

describe("agentIpc", () => {
  it.each(CASES)("%s sends its command", async (_name, run, expected) => {
    const { sent, transport } = recording();
    const events: unknown[] = [];
    await run(agentIpc(transport) satisfies AgentIpc, events);
    expect(sent).toEqual([expected]);
    // A streamed command's events reach the function's own callback.
    if (expected.streamed) expect(events).toEqual([expected.command === "llm_stream" ? DONE : OUTPUT]);
  });

  it("sends every command of the loop", () => {
    const functions = Object.keys(agentIpc(recording().transport));
    const tested = new Set(CASES.map(([name]) => name.split(" ")[0]));
    expect(functions.filter((name) => !tested.has(name))).toEqual([]);
  });
});

describe("the window's transport", () => {
  it("passes a Channel under the command's channel argument", async () => {
    const { ipc } = await import("../ipc");
    const output: unknown[] = [];
    invoke.mockClear();
    await ipc.execShell({ command: "ls" }, { ticket: "t1" }, "r1", (event) => output.push(event));
    const [command, args] = invoke.mock.calls[0] as [string, Record<string, unknown>];
    expect(command).toBe("run_call");
    expect(Object.keys(args).sort()).toEqual(["on_output", "run_id", "ticket"]);
    expect(args.on_output).toBe(channels.at(-1));
    channels.at(-1)?.onmessage?.(OUTPUT);
    expect(output).toEqual([OUTPUT]);

    invoke.mockClear();
    const streamed = ipc.llmStream("r2", REQUEST, () => undefined);
    await vi.waitFor(() => expect(invoke).toHaveBeenCalled());
    const [, streamArgs] = invoke.mock.calls[0] as [string, Record<string, unknown>];
    expect(streamArgs.on_event).toBe(channels.at(-1));
    channels.at(-1)?.onmessage?.(DONE);
    await streamed;
  });

  it("sends no channel without a callback", async () => {
    const { ipc } = await import("../ipc");
    invoke.mockClear();
    await ipc.callTool("read_file", { path: "a" });
    expect(invoke).toHaveBeenCalledWith("call_tool", { name: "read_file", input: { path: "a" } });
  });
});

describe("exec's transport", () => {
  it("carries JSON both ways, events as they come, an error as a WireError", async () => {
    const { hostIpc } = await import("../../exec/host");
    const calls: [string, unknown][] = [];
    const host = {
      invoke: async (command: string, args: string, onEvent?: (event: string) => void) => {
        calls.push([command, JSON.parse(args)]);
        if (command === "llm_stream") onEvent?.(JSON.stringify(DONE));
        if (command === "cancel") return JSON.stringify({ err: { code: "not_found", message: "no run" } });
        return JSON.stringify({ ok: command === "count_prompt_tokens" ? 42 : null });
      },
      emit: () => undefined,
      timer: async () => undefined,
      clearTimer: () => undefined,
      uuid: () => "u",
    };
    const ipc = hostIpc(host);
    const events: LlmEvent[] = [];
    await ipc.llmStream("r1", REQUEST, (event) => events.push(event));
    expect(events).toEqual([DONE]);
    expect(await ipc.countPromptTokens(REQUEST)).toBe(42);
    await expect(ipc.cancel("r1")).rejects.toMatchObject({ code: "not_found", message: "no run" });
    expect(calls).toEqual([
      ["llm_stream", { run_id: "r1", request: REQUEST }],
      ["count_prompt_tokens", { request: REQUEST }],
      ["cancel", { run_id: "r1" }],
    ]);
  });
});
