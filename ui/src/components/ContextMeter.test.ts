// The context meter's colours against the window, and the Continue button
// the chat shows when the loop pauses at its turn budget.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";
import ContextMeter from "./ContextMeter.svelte";
import { noUsage } from "../lib/agent/usage";

function meter(used: number, window = 10_000, known = true, usage = noUsage()) {
  const onCompact = vi.fn();
  const onUsage = vi.fn();
  render(ContextMeter, { props: { meter: { used, window, known }, usage, busy: false, onCompact, onUsage } });
  return { element: screen.getByTestId("context-meter"), onCompact, onUsage };
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

describe("the conversation's usage beside the meter", () => {
  it("shows its tokens and cost, and opens the usage", async () => {
    const { onUsage } = meter(100, 10_000, true, { ...noUsage(), input_tokens: 12_345, output_tokens: 678, cache_read_tokens: 9000, cost_usd: 0.0421 });
    expect(screen.getByTestId("usage-totals").textContent).toContain("12.3k in, 678 out");
    expect(screen.getByTestId("usage-totals").getAttribute("title")).toContain("9.0k cache read");
    expect(screen.getByTestId("cost").textContent).toBe("· $0.042");
    await fireEvent.click(screen.getByTestId("show-usage"));
    expect(onUsage).toHaveBeenCalledTimes(1);
  });

  it("says a cost it does not know, never a guess", () => {
    meter(100, 10_000, true, { ...noUsage(), input_tokens: 50, output_tokens: 5, unpriced: 1 });
    expect(screen.getByTestId("cost").textContent).toBe("· cost unknown");
    expect(screen.getByTestId("cost").getAttribute("title")).toContain("prices.json");
  });

  it("shows no cost before anything was used", () => {
    meter(100);
    expect(screen.queryByTestId("cost")).toBeNull();
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
