// The context meter's colours against the window, and the Continue button
// the chat shows when the loop pauses at its turn budget.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";
import ContextMeter from "./ContextMeter.svelte";

function meter(used: number, window = 10_000, known = true) {
  const onCompact = vi.fn();
  render(ContextMeter, { props: { meter: { used, window, known }, usage: { input_tokens: 0, output_tokens: 0 }, price: null, busy: false, onCompact } });
  return { element: screen.getByTestId("context-meter"), onCompact };
}

describe("ContextMeter", () => {
  it.each([
    [5_999, "ok"],
    [6_000, "high"],
    [7_999, "high"],
    [8_000, "full"],
    [12_000, "full"],
  ])("at %i of 10,000 tokens is %s", (used, level) => {
    const { element } = meter(used);
    expect(element.dataset.level).toBe(level);
    expect(element.querySelector(".fill")?.getAttribute("style")).toContain(`width: ${Math.min(100, Math.round(used / 100))}%`);
  });

  it("marks an assumed window, and its Compact button compacts", async () => {
    const { element, onCompact } = meter(8_500, 32_768, false);
    expect(element.textContent).toContain("Context 8.5k / 32.8k?");
    await fireEvent.click(screen.getByTestId("compact"));
    expect(onCompact).toHaveBeenCalledTimes(1);
  });
});

describe("the turn budget in the chat", () => {
  it("shows Continue when the loop pauses, and Continue goes on", async () => {
    const reads = [1, 2].map((n) => callTools(use("read_file", { path: `f${n}.txt` })));
    const fake = fakeIpc([...reads, say("all read")]);
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS, maxTurns: 2 });
    render(Chat, { props: { loop } });
    expect(screen.queryByTestId("continue")).toBeNull();
    await loop.send("read both");
    const button = await screen.findByTestId("continue");
    expect(fake.requests).toHaveLength(2);
    expect(screen.getAllByTestId("notice").some((n) => n.textContent?.includes("Paused after 2 model turns"))).toBe(true);
    await fireEvent.click(button);
    await vi.waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)?.textContent).toContain("all read"));
    expect(fake.requests).toHaveLength(3);
    expect(screen.queryByTestId("continue")).toBeNull();
  });
});
