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

describe("/usage", () => {
  it("shows the conversation's tokens and cost and the days' table, without reaching the model", async () => {
    const fake = fakeIpc([]);
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    const summary = { id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 12_000, output_tokens: 300, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.05, unpriced: 1, entries: 0 };
    loop.load({ summary, entries: [] });
    const day = (date: string, cost: number, unpriced: number) => ({ day: date, input_tokens: 2_500_000, output_tokens: 40_000, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: cost, unpriced, conversations: 3 });
    const usageDays = vi.fn(async () => [day("2025-03-02", 1.5, 0), day("2025-03-01", 0, 2)]);
    render(Chat, { props: { loop, usageDays } });
    const box = screen.getByTestId("chat-input") as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: "/usage" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    const panel = await screen.findByTestId("usage-panel");
    expect(screen.getByTestId("usage-conversation").textContent).toContain("12.0k in, 300 out; $0.050 + unknown");
    const rows = await vi.waitFor(() => {
      const found = screen.getAllByTestId("usage-day");
      expect(found).toHaveLength(2);
      return found;
    });
    expect(rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent))).toEqual([
      ["2025-03-02", "2.5M", "40.0k", "$1.50", "3"],
      ["2025-03-01", "2.5M", "40.0k", "cost unknown", "3"],
    ]);
    expect(fake.ipc.llmStream).not.toHaveBeenCalled();
    expect(screen.queryByTestId("message-user")).toBeNull();
    await fireEvent.click(screen.getByTestId("close-usage"));
    expect(panel.isConnected).toBe(false);
  });
});

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
