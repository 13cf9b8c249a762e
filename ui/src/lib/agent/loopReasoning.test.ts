import { describe, expect, it } from "vitest";
import { fakeIpc, use, type Turn } from "../../test/fakeIpc";
import { AgentLoop } from "./loop";
import type { AssistantItem } from "./state";
import { NO_INSTRUCTIONS } from "./instructions";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const replies = () => loop.state.get().items.filter((i): i is AssistantItem => i.kind === "assistant");
  return { ...fake, loop, replies };
}

describe("a thinking model's reasoning", () => {
  it("is shown as it streams, kept with its reply, and never sent back to the model", async () => {
    const read = use("read_file", { path: "src/main.rs" });
    let seenWhileThinking: { waiting: unknown; reply: AssistantItem | undefined } | null = null;
    let t: ReturnType<typeof setup> | null = null;
    const thinkThenCall: Turn = (emit) => {
      emit({ type: "reasoning_delta", text: "Main is in " });
      emit({ type: "reasoning_delta", text: "src/main.rs." });
      const state = t!.loop.state.get();
      seenWhileThinking = { waiting: state.waiting, reply: t!.replies().at(-1) };
      emit({ type: "tool_call_start", id: read.id, name: read.name });
      emit({ type: "tool_call_end", id: read.id, name: read.name, input: read.input });
      emit({ type: "done", stop_reason: "tool_use" });
    };
    const thinkThenAnswer: Turn = (emit) => {
      emit({ type: "reasoning_delta", text: "It prints." });
      emit({ type: "text_delta", text: "It prints hello." });
      emit({ type: "done", stop_reason: "end_turn" });
    };
    t = setup([thinkThenCall, thinkThenAnswer]);
    await t.loop.send("what does main do?");

    // While it thought: the waiting notice gone, the reasoning on screen.
    expect(seenWhileThinking).toMatchObject({ waiting: null, reply: { text: "", reasoning: "Main is in src/main.rs.", streaming: true } });
    // A turn that only thought keeps its reasoning; the answer carries its own.
    expect(t.replies()).toMatchObject([
      { text: "", reasoning: "Main is in src/main.rs.", streaming: false },
      { text: "It prints hello.", reasoning: "It prints.", streaming: false },
    ]);
    // What the model is sent: no reasoning anywhere, and no empty text block.
    const sent = JSON.stringify(t.requests[1].messages);
    expect(sent).not.toContain("Main is in");
    expect(t.requests[1].messages.at(-2)).toEqual({ role: "assistant", content: [{ type: "tool_use", id: read.id, name: read.name, input: read.input }] });
    expect(t.loop.transcript.at(-1)).toEqual({ role: "assistant", content: [{ type: "text", text: "It prints hello." }] });
    // The history keeps the items as shown, reasoning included.
    const stored = t.ipc.appendEntry.mock.calls.flatMap(([, entry]) => entry.items);
    expect(stored).toContainEqual(expect.objectContaining({ kind: "assistant", reasoning: "It prints.", text: "It prints hello." }));
  });
});
