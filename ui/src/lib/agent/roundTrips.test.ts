// How many IPC round trips one tool call costs, counted at Tauri's invoke
// with the real client (lib/ipc.ts) under the tool runner: an approved call
// is two (check_call, then run_call with the answer), and so is a call the
// policy allows; Rust keeps the checked call as a ticket between them.
import { describe, expect, it, vi } from "vitest";

const invoked: { command: string; args: Record<string, unknown> }[] = [];
let verdict: Record<string, unknown> = { decision: "allow" };
vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(async (command: string, args: Record<string, unknown>) => {
    invoked.push({ command, args });
    if (command === "check_call") return { ticket: `ticket-${invoked.length}`, ...verdict };
    return { ok: true };
  }),
  Channel: class {
    onmessage: (message: unknown) => void = () => undefined;
  },
}));
import { ipc } from "../ipc";
import { SPECS, use } from "../../test/fakeIpc";
import type { RunControl } from "./ports";
import { ToolRunner } from "./toolRunner";

function run(call: ReturnType<typeof use>, answer?: "once" | "network") {
  invoked.length = 0;
  const runner = new ToolRunner(ipc, {
    newId: () => "run-1",
    updateCard: (id, change) => {
      if (change.status === "waiting" && answer) queueMicrotask(() => runner.decide(id, answer));
    },
    riskOf: (tool) => SPECS.find((s) => s.name === tool)?.risk ?? null,
    inputError: () => undefined,
    conversation: () => "c1",
  });
  const control: RunControl = { cancelled: false, hooks: new Set() };
  return runner.runAll([{ type: "tool_use", ...call }], control, new Map(), () => {
    throw new Error("no call should be cancelled");
  });
}

describe("IPC round trips per tool call", () => {
  it("an approved write: check_call, then run_call carrying the ticket and the answer", async () => {
    verdict = { decision: "ask", reason: "writes need approval" };
    const [result] = await run(use("write_file", { path: "a.txt", content: "x" }), "once");
    expect(result.is_error).toBeFalsy();
    expect(invoked.map((i) => i.command)).toEqual(["check_call", "run_call"]);
    expect(invoked[1].args).toMatchObject({ ticket: "ticket-1", approval: { scope: "once" } });
    expect(invoked[1].args).not.toHaveProperty("input");
  });

  it("an approved command with the network: two as well", async () => {
    verdict = { decision: "ask", reason: "the command fetches from the network", network: true };
    await run(use("exec_shell", { command: "npm", args: ["ci"] }), "network");
    expect(invoked.map((i) => i.command)).toEqual(["check_call", "run_call"]);
    expect(invoked[1].args).toMatchObject({ ticket: "ticket-1", approval: { scope: "once", network: true } });
  });

  it("an allowed read: check_call, then run_call with no answer", async () => {
    verdict = { decision: "allow" };
    await run(use("read_file", { path: "a.txt" }));
    expect(invoked.map((i) => i.command)).toEqual(["check_call", "run_call"]);
    expect(invoked[1].args).not.toHaveProperty("approval");
  });
});
