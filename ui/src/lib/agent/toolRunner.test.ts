// The tool runner runs each call by the ticket Rust gave its check, which
// keeps the preview the card showed, so what is written is what the user
// saw: a file changed in between fails the call with stale_file instead of
// being overwritten.
import { describe, expect, it, vi } from "vitest";
import { displayOf, fakeIpc, SPECS, TICKET, use } from "../../test/fakeIpc";
import type { ToolPreview } from "../types";
import type { LoopHooks } from "./hooks";
import type { RunControl } from "./ports";
import type { ToolItem } from "./state";
import { ToolRunner } from "./toolRunner";

const PREVIEW: ToolPreview = {
  path: "notes.md",
  before: "old\n",
  after: "new\n",
  diff: "--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-old\n+new\n",
  base: "blake3:5f0c",
};

function setup(events?: LoopHooks) {
  const { ipc } = fakeIpc([]);
  const cards = new Map<string, Partial<ToolItem>>();
  const runner = new ToolRunner(ipc, {
    newId: () => "run-1",
    updateCard: (id, change) => cards.set(id, { ...cards.get(id), ...change }),
    riskOf: (tool) => SPECS.find((s) => s.name === tool)?.risk ?? null,
    displayOf,
    inputError: () => undefined,
    turnId: () => "turn-1",
    ...(events ? { events } : {}),
  });
  const control: RunControl = { cancelled: false, hooks: new Set() };
  const run = (...uses: ReturnType<typeof use>[]) =>
    runner.runAll(uses.map((u) => ({ type: "tool_use" as const, ...u })), control, new Map(uses.map((u) => [u.id, `card-${u.id}`])), () => {
      throw new Error("no call should be cancelled");
    });
  return { ipc, cards, runner, run };
}

describe("ToolRunner and the ticket", () => {
  it("runs an approved call by its ticket, with the answer", async () => {
    const t = setup();
    const edit = use("edit_file", { path: "notes.md", old_string: "old", new_string: "new" });
    t.ipc.checkCall.mockResolvedValue({ ticket: "edit-ticket", decision: "ask", reason: "edits need approval", preview: PREVIEW });
    const ran = t.run(edit);
    await vi.waitFor(() => expect(t.cards.get(`card-${edit.id}`)?.status).toBe("waiting"));
    t.runner.decide(`card-${edit.id}`, "once");
    await ran;
    expect(t.ipc.callTool).toHaveBeenCalledTimes(1);
    expect(t.ipc.callTool).toHaveBeenCalledWith(
      "edit_file",
      edit.input,
      { ticket: "edit-ticket", approval: { scope: "once" } },
      { call_id: `card-${edit.id}`, turn_id: "turn-1" },
    );
  });

  it("runs a change the mode allows by its ticket too, with no answer", async () => {
    const t = setup();
    const write = use("write_file", { path: "notes.md", content: "new\n" });
    t.ipc.checkCall.mockResolvedValue({ ticket: "write-ticket", decision: "allow", preview: { ...PREVIEW, base: "absent" } });
    await t.run(write);
    expect(t.ipc.callTool).toHaveBeenCalledWith("write_file", write.input, { ticket: "write-ticket" }, expect.anything());
  });

  it("runs a read by its ticket", async () => {
    const t = setup();
    const read = use("read_file", { path: "notes.md" });
    await t.run(read);
    expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", read.input, { ticket: TICKET });
  });

  it("shows stale_file when the file changed after the card, and gives the model the error", async () => {
    const t = setup();
    const edit = use("edit_file", { path: "notes.md", old_string: "old", new_string: "new" });
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "allow", preview: PREVIEW });
    const stale = {
      code: "stale_file",
      message: "`notes.md` changed after its change was shown for approval; nothing was written",
      retryable: true,
    };
    t.ipc.callTool.mockRejectedValue(stale);
    const [result] = await t.run(edit);
    const card = t.cards.get(`card-${edit.id}`);
    expect(card?.status).toBe("failed");
    expect(card?.error?.code).toBe("stale_file");
    expect(result.is_error).toBe(true);
    expect(JSON.stringify(result.content)).toContain("stale_file");
  });
});

describe("ToolRunner's round trips", () => {
  /** Every IPC call the runner made, by name, in order. */
  function trips(ipc: ReturnType<typeof setup>["ipc"]): string[] {
    const made: { name: string; order: number }[] = [];
    for (const [name, fn] of Object.entries(ipc)) {
      for (const order of (fn as { mock: { invocationCallOrder: number[] } }).mock.invocationCallOrder) made.push({ name, order });
    }
    return made.sort((a, b) => a.order - b.order).map((m) => m.name);
  }

  it("an approved call takes two: the check, then the call carrying the answer", async () => {
    const t = setup();
    const edit = use("edit_file", { path: "notes.md", old_string: "old", new_string: "new" });
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "edits need approval", preview: PREVIEW });
    const ran = t.run(edit);
    await vi.waitFor(() => expect(t.cards.get(`card-${edit.id}`)?.status).toBe("waiting"));
    t.runner.decide(`card-${edit.id}`, { grant: { kind: "path", tool: "edit_file", path: "notes.md" } });
    await ran;
    expect(trips(t.ipc)).toEqual(["checkCall", "callTool"]);
    expect(t.ipc.callTool.mock.calls[0][2]).toEqual({
      ticket: TICKET,
      approval: { scope: "conversation", grant: { kind: "path", tool: "edit_file", path: "notes.md" } },
    });
  });

  it("a command approved with the network takes two as well", async () => {
    const t = setup();
    const sh = use("exec_shell", { command: "npm", args: ["ci"] });
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "the command fetches from the network", network: true });
    const ran = t.run(sh);
    await vi.waitFor(() => expect(t.cards.get(`card-${sh.id}`)?.status).toBe("waiting"));
    t.runner.decide(`card-${sh.id}`, "once");
    await ran;
    expect(trips(t.ipc)).toEqual(["checkCall", "execShell"]);
  });
});

describe("ToolRunner, a hook's allow and what may be granted", () => {
  /** A runner whose PreToolUse hook allows every call. */
  function allowedByHook() {
    const raise = vi.fn(async (event: string) =>
      event === "PreToolUse" ? { verdict: "allow" as const, by: "ok.sh", context: [], notices: [], ran: ["ok.sh"] } : null,
    );
    return setup({ raise } as unknown as LoopHooks);
  }

  it("lets a hook's allow answer only where the ticket says it may", async () => {
    const t = allowedByHook();
    const edit = use("edit_file", { path: "notes.md", old_string: "old", new_string: "new" });
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "edits need approval", hook_may_answer: true });
    await t.run(edit);
    expect(t.cards.get(`card-${edit.id}`)?.status).toBe("done");
    expect(t.ipc.callTool.mock.calls[0][2]).toEqual({ ticket: TICKET, approval: { scope: "once" } });
  });

  it("asks the user where the ticket does not say so (one at a time, the network)", async () => {
    for (const ticket of [
      { ticket: TICKET, decision: "ask" as const, reason: "the agent's configuration", one_at_a_time: true },
      { ticket: TICKET, decision: "ask" as const, reason: "the command fetches from the network", network: true },
    ]) {
      const t = allowedByHook();
      const edit = use("edit_file", { path: ".claude/settings.json", old_string: "a", new_string: "b" });
      t.ipc.checkCall.mockResolvedValue(ticket);
      const ran = t.run(edit);
      await vi.waitFor(() => expect(t.cards.get(`card-${edit.id}`)?.status).toBe("waiting"));
      expect(t.ipc.callTool).not.toHaveBeenCalled();
      t.runner.decide(`card-${edit.id}`, "deny");
      await ran;
      expect(t.cards.get(`card-${edit.id}`)?.status).toBe("denied");
    }
  });

  it("keeps on the waiting card what the ticket says may be granted", async () => {
    const t = setup();
    const write = use("write_file", { path: "src/a.js", content: "x" });
    const exact = { kind: "path" as const, tool: "write_file", path: "src/a.js" };
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "writes ask", exact_grant: exact, grant_folders: ["src", "."] });
    const ran = t.run(write);
    await vi.waitFor(() => expect(t.cards.get(`card-${write.id}`)?.status).toBe("waiting"));
    expect(t.cards.get(`card-${write.id}`)?.grantChoices).toEqual({ exact_grant: exact, grant_folders: ["src", "."] });
    t.runner.decide(`card-${write.id}`, "deny");
    await ran;
  });
});
