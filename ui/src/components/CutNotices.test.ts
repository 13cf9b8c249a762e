// The window says what the model saw: a card whose result was cut to fit,
// and a message sent in parts, say how many characters the model received
// and how it can read the rest; a result or a message sent whole says nothing.
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import { AgentLoop } from "../lib/agent/loop";
import type { ToolItem } from "../lib/agent/state";
import type { ToolSpec } from "../lib/types";
import { displayOf, fakeIpc, say } from "../test/fakeIpc";
import specsJson from "../test/toolSpecs.json";
import Chat from "./Chat.svelte";
import ToolCard from "./ToolCard.svelte";

const card: ToolItem = { kind: "tool", id: "c1", callId: "t1", name: "read_file", input: { path: "big.txt" }, risk: "read", status: "done", display: displayOf("read_file"), result: { path: "big.txt", content: "x", truncated: false } };

describe("the window says what the model saw", () => {
  it("a card whose result was cut to fit says how much the model received and how it reads the rest", () => {
    render(ToolCard, { props: { item: { ...card, cut: { received: 1_024, total: 43_310, rest: "read_file with start_line and end_line" } }, onStopCommand: vi.fn() } });
    expect(screen.getByTestId("tool-cut").textContent).toBe("The model received 1,024 of 43,310 characters; it can read the rest with read_file with start_line and end_line.");
  });

  it("a card whose result went whole says nothing of it", () => {
    render(ToolCard, { props: { item: card, onStopCommand: vi.fn() } });
    expect(screen.queryByTestId("tool-cut")).toBeNull();
  });

  it("a paste sent in parts to a 2k window says so under the message, shown whole", async () => {
    const fake = fakeIpc([say("I see the start."), say("Hi.")]);
    fake.ipc.toolSpecs.mockResolvedValue(specsJson as ToolSpec[]);
    fake.ipc.modelInfo.mockResolvedValue({ context_window: 2_048, source: "server" });
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    render(Chat, { props: { loop } });
    const paste = "a line of pasted log\n".repeat(600);
    await loop.send(paste);
    await vi.waitFor(() => expect(screen.getAllByTestId("message-assistant")).toHaveLength(1));
    // The window shows the message whole, every line of it.
    expect(screen.getByTestId("message-user").textContent?.match(/a line of pasted log/g)).toHaveLength(600);
    expect(screen.getByTestId("message-cut").textContent).toMatch(/^The model received [\d,]+ of 12,600 characters; it can read the rest with read_paste, parts 2 to \d+\.$/);
    await loop.send("hello");
    await vi.waitFor(() => expect(screen.getAllByTestId("message-assistant")).toHaveLength(2));
    expect(screen.getAllByTestId("message-cut")).toHaveLength(1);
  });
});
