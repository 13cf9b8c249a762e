// The keyboard around an approval: Tab from the message box reaches the
// approval area (it sits above the box, so the browser's order would need
// Shift+Tab), and once the call is answered the focus is back in the box.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, fakeIpc, say, TICKET, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import Chat from "./Chat.svelte";

describe("the keyboard and an approval", () => {
  it("Tab from the message box goes to the approval area; answering gives the focus back to the box", async () => {
    const w = use("write_file", { path: "a.txt", content: "hi\n" });
    const fake = fakeIpc([callTools(w), say("written")]);
    fake.ipc.checkCall.mockResolvedValue({ ticket: TICKET, decision: "ask", reason: "writes need approval" });
    fake.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, bytes: 3, created: true }));
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    render(Chat, { props: { loop } });
    const input = screen.getByTestId("chat-input") as HTMLTextAreaElement;

    // No approval: Tab is the browser's.
    input.focus();
    expect(await fireEvent.keyDown(input, { key: "Tab" })).toBe(true);

    void loop.send("write a");
    const area = await screen.findByTestId("approval");
    input.focus();
    // Shift+Tab stays the browser's; Tab goes to the area, before its buttons.
    expect(await fireEvent.keyDown(input, { key: "Tab", shiftKey: true })).toBe(true);
    expect(await fireEvent.keyDown(input, { key: "Tab" })).toBe(false);
    expect(document.activeElement).toBe(area);
    const once = screen.getByTestId("approve-once") as HTMLButtonElement;
    expect(area.compareDocumentPosition(once) & Node.DOCUMENT_POSITION_CONTAINED_BY).toBeTruthy();

    await vi.waitFor(() => expect(once.disabled).toBe(false), { timeout: 2000 });
    once.focus();
    await fireEvent.keyDown(once, { key: "Enter" });
    await fireEvent.click(once, { detail: 0 });
    await vi.waitFor(() => expect(screen.queryByTestId("approval")).toBeNull());
    expect(document.activeElement).toBe(input);
    await vi.waitFor(() => expect(screen.getByTestId("tool-card").dataset.status).toBe("done"));
  });
});
