import { fireEvent, render, screen, within } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, TICKET, type Turn, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";

function setup(turns: Turn[]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  render(Chat, { props: { loop } });
  return { ...fake, loop };
}

const reply = (text: string, input_tokens: number, output_tokens: number): Turn => (emit) => {
  emit({ type: "text_delta", text });
  emit({ type: "usage", input_tokens, output_tokens });
  emit({ type: "done", stop_reason: "end_turn" });
};

describe("a subagent's transcript", () => {
  it("opens under its task card: its task, its calls and its answer, with the tokens it used", async () => {
    const task = use("task", { subagent_type: "explore", description: "find main", prompt: "Find the main function." });
    const read = use("read_file", { path: "src/main.rs" });
    setup([callTools(task), callTools(read), reply("main is in src/main.rs:1", 40, 7), say("Found it.")]);
    const input = screen.getByTestId("chat-input") as HTMLTextAreaElement;
    await fireEvent.input(input, { target: { value: "where is main?" } });
    await fireEvent.keyDown(input, { key: "Enter" });
    await vi.waitFor(() => expect(screen.getAllByTestId("message-assistant").at(-1)?.textContent).toContain("Found it."));

    const card = screen.getAllByTestId("tool-card").find((c) => c.dataset.tool === "task")!;
    expect(card.dataset.status).toBe("done");
    const transcript = screen.getByTestId("subagent-transcript") as HTMLDetailsElement;
    // Folded under the card until opened.
    expect(transcript.open).toBe(false);
    expect(card.parentElement?.contains(transcript)).toBe(true);
    expect(within(transcript).getByTestId("subagent-summary").textContent).toMatch(/Subagent explore: 1 call, 47 tokens/);
    // The pointer on its summary holds the log still, as on a button.
    await fireEvent.pointerOver(within(transcript).getByTestId("subagent-summary"));
    expect(document.querySelector(".log")?.getAttribute("data-held")).toBe("true");
    await fireEvent.click(within(transcript).getByTestId("subagent-summary"));
    expect(transcript.open).toBe(true);
    expect(within(transcript).getByTestId("subagent-task").textContent).toBe("Find the main function.");
    const inner = within(transcript).getByTestId("tool-card");
    expect(inner.dataset.tool).toBe("read_file");
    expect(inner.dataset.status).toBe("done");
    expect(within(transcript).getByTestId("subagent-message").textContent).toContain("main is in src/main.rs:1");
  });

  it("asks for a subagent's call in the approval area, and runs it on the answer", async () => {
    const task = use("task", { subagent_type: "explore", prompt: "Read the env file." });
    const read = use("read_file", { path: ".env" });
    const t = setup([callTools(task), callTools(read), say("It sets PORT."), say("ok")]);
    t.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "a secret-like file" });
    void t.loop.send("what does .env set?");
    await vi.waitFor(() => expect(screen.getByTestId("approval").dataset.tool).toBe("read_file"));
    const once = screen.getByTestId("approve-once") as HTMLButtonElement;
    await vi.waitFor(() => expect(once.disabled).toBe(false), { timeout: 2000 });
    await fireEvent.mouseDown(once);
    await fireEvent.click(once, { detail: 1 });
    await vi.waitFor(() => expect(t.ipc.callTool).toHaveBeenCalledWith("read_file", read.input, { ticket: TICKET, approval: { scope: "once" } }));
  });
});
