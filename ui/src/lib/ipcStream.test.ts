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

const { ipc } = await import("./ipc");

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
