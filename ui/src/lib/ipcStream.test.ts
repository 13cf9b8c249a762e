import { describe, expect, it, vi } from "vitest";

// The one seam: Tauri's invoke and Channel. The command answers at once;
// the channel's messages arrive later, as a large one does.
const sent: { onmessage?: (message: unknown) => void }[] = [];
vi.mock("@tauri-apps/api/core", () => ({
  Channel: class {
    onmessage?: (message: unknown) => void;
    constructor() {
      sent.push(this);
    }
  },
  invoke: vi.fn(async () => null),
}));

const { ipc, taskIpc } = await import("./ipc");
const { invoke } = await import("@tauri-apps/api/core");

describe("ipc.llmStream", () => {
  it("ends with the stream's terminal event, not with the command's answer", async () => {
    const events: unknown[] = [];
    let settled = false;
    const stream = ipc.llmStream("r1", { system: "", messages: [], tools: [] } as never, (event) => events.push(event)).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    const channel = sent.at(-1);
    channel?.onmessage?.({ type: "tool_call_end", id: "t1", name: "exec_shell", input: { command: "node" } });
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    channel?.onmessage?.({ type: "done", stop_reason: "tool_use" });
    await stream;
    expect(events).toEqual([
      { type: "tool_call_end", id: "t1", name: "exec_shell", input: { command: "node" } },
      { type: "done", stop_reason: "tool_use" },
    ]);
  });
});

describe("taskIpc", () => {
  it("names its task in every command of the table, and in no window command", async () => {
    const task = taskIpc("fix-login");
    vi.mocked(invoke).mockClear();
    await task.toolSpecs();
    await task.listCheckpoints();
    await task.processOutput("r1", 0);
    await task.callTool("read_file", { path: "a.txt" });
    await task.taskList();
    await task.getSettings();
    const calls = vi.mocked(invoke).mock.calls.map(([command, args]) => [command, (args as { task?: string } | undefined)?.task]);
    expect(calls).toEqual([
      ["tool_specs", "fix-login"],
      ["list_checkpoints", "fix-login"],
      ["process_output", "fix-login"],
      ["call_tool", "fix-login"],
      ["task_list", undefined],
      ["get_settings", undefined],
    ]);
    // The project's own IPC names none.
    await ipc.toolSpecs();
    expect(vi.mocked(invoke).mock.calls.at(-1)).toEqual(["tool_specs", {}]);
  });
});
