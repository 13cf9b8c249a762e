// A scripted stand-in for the Rust side, injected into the agent loop at its
// one seam (the AgentIpc object). Each llm_stream call plays the next turn.
import { vi } from "vitest";
import type { AgentIpc } from "../lib/agent/loop";
import type { GrantEntry, LlmEvent, LlmRequest, Message, ShellEvent, ToolDisplay, ToolSpec, WireError } from "../lib/types";
import specsJson from "./toolSpecs.json";
import type { Consent } from "../lib/ipc";

export type Turn = (emit: (event: LlmEvent) => void, ctx: { runId: string; cancelled: Promise<void> }) => Promise<void> | void;

/** The registry's specs, as Rust gives them (corral-tools' spec_fixture test keeps the file true). */
export const SPECS = specsJson as ToolSpec[];

/** The display hints of a registry tool, as its spec gives them. */
export function displayOf(name: string): ToolDisplay | undefined {
  return SPECS.find((s) => s.name === name)?.display;
}

/** The display hints of a tool of the MCP server `server`. */
export const serverDisplay = (server: string, label: string): ToolDisplay => ({ subject: "arguments", result: "json", server, label });

/** The ticket the fake's checks give (a test's own check gives its own). */
export const TICKET = "ticket-1";

export function say(text: string): Turn {
  return (emit) => {
    emit({ type: "text_delta", text });
    emit({ type: "done", stop_reason: "end_turn" });
  };
}

let nextCall = 0;
export function use(name: string, input: Record<string, unknown>): { id: string; name: string; input: Record<string, unknown> } {
  return { id: `toolu_${++nextCall}`, name, input };
}

export function callTools(...uses: ReturnType<typeof use>[]): Turn {
  return (emit) => {
    for (const u of uses) {
      emit({ type: "tool_call_start", id: u.id, name: u.name });
      emit({ type: "tool_call_delta", id: u.id, json: JSON.stringify(u.input) });
      emit({ type: "tool_call_end", id: u.id, name: u.name, input: u.input });
    }
    emit({ type: "done", stop_reason: "tool_use" });
  };
}

export function fakeIpc(turns: Turn[]) {
  const requests: LlmRequest[] = [];
  const stopStream = new Map<string, () => void>();
  let ids = 0;
  let seq = 0;
  /** What was allowed, by conversation key, as Rust would hold it. */
  const grants = new Map<string, GrantEntry[]>();
  /**
   * A ticket run with an answer "in this conversation" holds its grant, as
   * Rust does, for the conversation it was checked in (the latest check's).
   */
  const hold = (consent: Consent | undefined): Record<string, never> => {
    const answer = consent?.approval;
    const conversation = ipc.checkCall.mock.calls.at(-1)?.[2];
    if (answer?.scope === "conversation" && conversation && answer.grant) {
      const held = grants.get(conversation) ?? [];
      grants.set(conversation, [...held, { id: `grant-${held.length + 1}`, grant: answer.grant }]);
    }
    return {};
  };
  const ipc = {
    llmStream: vi.fn<AgentIpc["llmStream"]>(async (runId, request, onEvent) => {
      requests.push(structuredClone(request));
      const turn = turns.shift();
      if (!turn) throw new Error("the test scripted no more turns");
      const cancelled = new Promise<void>((resolve) => stopStream.set(runId, resolve));
      await turn(onEvent, { runId, cancelled });
      return null;
    }),
    cancel: vi.fn<AgentIpc["cancel"]>(async (runId) => {
      stopStream.get(runId)?.();
      return null;
    }),
    toolSpecs: vi.fn<AgentIpc["toolSpecs"]>(async () => SPECS),
    checkCall: vi.fn<AgentIpc["checkCall"]>(async () => ({ ticket: TICKET, decision: "allow" })),
    conversationGrants: vi.fn<AgentIpc["conversationGrants"]>(async (conversation) => grants.get(conversation) ?? []),
    revokeGrant: vi.fn<AgentIpc["revokeGrant"]>(async (conversation, id) => {
      const left = (grants.get(conversation) ?? []).filter((entry) => entry.id !== id);
      grants.set(conversation, left);
      return left;
    }),
    endConversation: vi.fn<AgentIpc["endConversation"]>(async (conversation) => {
      grants.delete(conversation);
      return null;
    }),
    callTool: vi.fn<AgentIpc["callTool"]>(async (name, input, consent) => {
      hold(consent);
      return { tool: name, path: input.path, ok: true };
    }),
    execShell: vi.fn<AgentIpc["execShell"]>(async (input, consent) => ({
      ...hold(consent),
      command: String(input.command),
      args: (input.args as string[]) ?? [],
      stdout: "",
      stderr: "",
      exit_code: 0,
      timed_out: false,
      duration_ms: 5,
      stdout_truncated_bytes: 0,
      stderr_truncated_bytes: 0,
      profile: "build",
      sandbox: "namespaces",
      sandboxed: true,
    })),
    openConversation: vi.fn<AgentIpc["openConversation"]>(async () => {
      throw new Error("the test opened no conversation");
    }),
    appendEntry: vi.fn<AgentIpc["appendEntry"]>(async (conversation) => ({ conversation: conversation ?? "c1", seq: seq++ })),
    modelInfo: vi.fn<AgentIpc["modelInfo"]>(async () => ({})),
    countPromptTokens: vi.fn<AgentIpc["countPromptTokens"]>(async () => null),
    customization: vi.fn<AgentIpc["customization"]>(async () => ({ commands: [], skills: [], problems: [] })),
    skillFile: vi.fn<AgentIpc["skillFile"]>(async (_source, folder, file) => {
      throw { code: "not_found", message: `the test has no file ${file ?? "SKILL.md"} of the skill ${folder}` };
    }),
  };
  return { ipc, requests, grants, newId: () => `id${++ids}` };
}

/** Throws unless the transcript is one the providers accept. */
export function assertConsistent(messages: Message[]): void {
  messages.forEach((message, i) => {
    const expected = i % 2 === 0 ? "user" : "assistant";
    if (message.role !== expected) throw new Error(`message ${i} is ${message.role}, expected ${expected}`);
    if (message.content.length === 0) throw new Error(`message ${i} is empty`);
    if (message.role !== "assistant") return;
    const uses = message.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    const next = messages[i + 1];
    const results = next ? next.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])) : [];
    for (const id of uses) {
      if (!results.includes(id)) throw new Error(`tool_use ${id} in message ${i} has no tool_result`);
    }
    if (results.length !== uses.length) throw new Error(`message ${i + 1} has results for unknown tool uses`);
  });
}

/** A promise with its resolve exposed, to hold a call in flight. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The error Rust rejects a stopped exec_shell with (crates/corral-tools, shell/mod.rs). */
export function shellCancelled(input: Record<string, unknown>, stdout: string, stderr: string, duration_ms: number): WireError {
  return {
    code: "cancelled",
    message: `\`${String(input.command)}\` was stopped by the user`,
    hint: "The user stopped this; do not retry unless asked.",
    retryable: false,
    details: { command: input.command, args: input.args ?? [], stdout, stderr, duration_ms },
  };
}

/**
 * Makes exec_shell print `events` and then run until its run id is
 * cancelled, when it rejects with `cancelled` and the partial output, as
 * Rust does. Returns the run id of the latest run.
 */
export function hangingShell(ipc: ReturnType<typeof fakeIpc>["ipc"], events: ShellEvent[], duration_ms = 800): () => string {
  let current = "";
  const stops = new Map<string, () => void>();
  ipc.execShell.mockImplementation((input, _approval, runId, onOutput) => {
    current = runId;
    for (const event of events) onOutput(event);
    const text = (stream: ShellEvent["stream"]) => events.filter((e) => e.stream === stream).map((e) => e.data).join("");
    return new Promise((_resolve, reject) => {
      stops.set(runId, () => reject(shellCancelled(input, text("stdout"), text("stderr"), duration_ms)));
    });
  });
  const cancelStream = ipc.cancel.getMockImplementation();
  ipc.cancel.mockImplementation(async (runId) => {
    stops.get(runId)?.();
    return (await cancelStream?.(runId)) ?? null;
  });
  return () => current;
}
