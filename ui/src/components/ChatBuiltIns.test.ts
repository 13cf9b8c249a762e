// A built-in slash command sent from the box runs in the window: /compact
// compacts, /new and the others go to the project view's handlers, and
// none of them reaches the model; a custom name is sent as usual.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { fakeIpc, say } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";

function setup() {
  const fake = fakeIpc([say("Sent.")]);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  const onBuiltIn = { new: vi.fn(), model: vi.fn(), changes: vi.fn(), settings: vi.fn(), task: vi.fn() };
  const compact = vi.spyOn(loop, "compact").mockResolvedValue();
  render(Chat, { props: { loop, onBuiltIn } });
  const box = screen.getByTestId("chat-input") as HTMLTextAreaElement;
  const send = async (text: string) => {
    await fireEvent.input(box, { target: { value: text } });
    await fireEvent.keyDown(box, { key: "Enter" });
  };
  return { ...fake, compact, onBuiltIn, send };
}

describe("a built-in sent from the box", () => {
  it("runs in the window and never reaches the model", async () => {
    const t = setup();
    await t.send("/compact");
    await vi.waitFor(() => expect(t.compact).toHaveBeenCalledTimes(1));
    await t.send("/new");
    await vi.waitFor(() => expect(t.onBuiltIn.new).toHaveBeenCalledTimes(1));
    await t.send("/model");
    await vi.waitFor(() => expect(t.onBuiltIn.model).toHaveBeenCalledTimes(1));
    // /task takes what to do: the window starts a task with it.
    await t.send("/task add a README");
    await vi.waitFor(() => expect(t.onBuiltIn.task).toHaveBeenCalledWith("add a README"));
    expect(t.ipc.llmStream).not.toHaveBeenCalled();
    expect(screen.queryByTestId("message-user")).toBeNull();
  });

  it("is not one with words after it: that goes to the model", async () => {
    const t = setup();
    await t.send("/compact the notes please");
    await vi.waitFor(() => expect(t.ipc.llmStream).toHaveBeenCalledTimes(1));
    expect(t.compact).not.toHaveBeenCalled();
  });
});
