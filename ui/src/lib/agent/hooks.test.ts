import { describe, expect, it, vi } from "vitest";
import type { HookOutcome } from "../types";
import { LoopHooks, blockedBy, notesOf } from "./hooks";
import type { AgentIpc } from "./ports";

const outcome = (over: Partial<HookOutcome>): HookOutcome => ({ verdict: "none", context: [], notices: [], ran: ["check.sh"], ...over });

function ipcWith(events: string[], answer: HookOutcome) {
  const hookStatus = vi.fn(async () => ({ events, untrusted: [], problems: [] }));
  const runHooks = vi.fn(async () => answer);
  return { ipc: { hookStatus, runHooks } as unknown as AgentIpc, hookStatus, runHooks };
}

describe("the loop's hooks", () => {
  it("asks Rust nothing for an event without hooks", async () => {
    const { ipc, runHooks } = ipcWith(["Stop"], outcome({}));
    const hooks = new LoopHooks(ipc, () => "c1", () => undefined);
    await hooks.refresh();
    expect(await hooks.raise("PreToolUse", { tool: "read_file", input: { path: "a" } })).toBeNull();
    expect(runHooks).not.toHaveBeenCalled();
    expect(await hooks.raise("Stop", {})).not.toBeNull();
    expect(runHooks).toHaveBeenCalledWith({ event: "Stop", conversation: "c1" });
  });

  it("shows a hook that failed without blocking as a notice", async () => {
    const { ipc } = ipcWith(["Stop"], outcome({ notices: ["the hook `x` failed (code 1): boom"] }));
    const notices: string[] = [];
    const hooks = new LoopHooks(ipc, () => null, (text) => notices.push(text));
    await hooks.refresh();
    await hooks.raise("Stop", {});
    expect(notices).toEqual(["Hook: the hook `x` failed (code 1): boom"]);
  });

  it("says on the card which hook blocked, changed or added to a call", () => {
    const said = outcome({ verdict: "deny", reason: "no rm", by: "no-rm.sh", updated_input: { path: "b" }, updated_by: "move.sh", context: ["be careful"] });
    expect(notesOf("PreToolUse", said)).toEqual([
      { event: "PreToolUse", kind: "blocked", by: "no-rm.sh", text: "no rm" },
      { event: "PreToolUse", kind: "modified", by: "move.sh" },
      { event: "PreToolUse", kind: "context", by: "no-rm.sh", text: "be careful" },
    ]);
    expect(blockedBy(outcome({ block: "not yet", blocked_by: "stop.sh" }))).toEqual({ by: "stop.sh", reason: "not yet" });
    expect(blockedBy(outcome({}))).toBeNull();
  });
});
