import { fireEvent, render, screen } from "@testing-library/svelte";
import { tick } from "svelte";
import { describe, expect, it, vi } from "vitest";
import { callTools, deferred, fakeIpc, hangingShell, say, type Turn, TICKET, use } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import Chat from "./Chat.svelte";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";

function setup(turns: Turn[], onSettings?: () => void) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  render(Chat, { props: { loop, ...(onSettings ? { onBuiltIn: { settings: onSettings } } : {}) } });
  return { ...fake, loop };
}

describe("Chat", () => {
  it("sends on Enter, keeps Shift+Enter as a newline, and renders Markdown replies", async () => {
    const t = setup([say("Here is `main`:\n\n```rust\nfn main() {}\n```\n<img src=x onerror=alert(1)>")]);
    const input = screen.getByTestId("chat-input") as HTMLTextAreaElement;
    await fireEvent.input(input, { target: { value: "first line" } });
    await fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    expect(t.ipc.llmStream).not.toHaveBeenCalled();
    await fireEvent.keyDown(input, { key: "Enter" });
    await vi.waitFor(() => expect(screen.getAllByTestId("message-assistant")).toHaveLength(1));
    expect(screen.getByTestId("message-user").textContent).toBe("first line");
    const reply = screen.getByTestId("message-assistant");
    // Escaped at first; highlighted once the highlighter's chunk has arrived.
    await vi.waitFor(() => expect(reply.querySelector("pre code.language-rust .hljs-keyword")?.textContent).toBe("fn"));
    expect(reply.querySelector("img")).toBeNull();
    expect(input.value).toBe("");
  });

  it("stops on Esc and shows Stop only while running", async () => {
    const hanging: Turn = async (emit, { cancelled }) => {
      emit({ type: "text_delta", text: "thinking" });
      await cancelled;
    };
    const t = setup([hanging]);
    expect(screen.queryByTestId("stop")).toBeNull();
    void t.loop.send("go");
    await vi.waitFor(() => expect(screen.getByTestId("stop")).toBeTruthy());
    await fireEvent.keyDown(window, { key: "Escape" });
    await vi.waitFor(() => expect(screen.queryByTestId("stop")).toBeNull());
    expect(t.ipc.cancel).toHaveBeenCalled();
    expect(screen.getByTestId("message-assistant").textContent).toContain("thinking");
  });

  it("shows a thinking model's reasoning open while it thinks, folded once it answers", async () => {
    const answer = deferred<void>();
    const thinking: Turn = async (emit) => {
      emit({ type: "reasoning_delta", text: "The user wants <b>a</b> greeting." });
      await answer.promise;
      emit({ type: "text_delta", text: "Hello." });
      emit({ type: "done", stop_reason: "end_turn" });
    };
    const t = setup([thinking, say("Nothing more.")]);
    void t.loop.send("hi");
    const shown = await vi.waitFor(() => screen.getByTestId("reasoning") as HTMLDetailsElement);
    expect(shown.open).toBe(true);
    expect(shown.querySelector("summary")?.textContent).toBe("Thinking…");
    // Shown as text, never as markup.
    expect(shown.querySelector("pre")?.textContent).toBe("The user wants <b>a</b> greeting.");
    expect(shown.querySelector("b")).toBeNull();
    answer.resolve();
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Hello."));
    const folded = screen.getByTestId("reasoning") as HTMLDetailsElement;
    expect(folded.open).toBe(false);
    expect(folded.querySelector("summary")?.textContent).toBe("Thought");
    // Unfolded by the user, it stays open when the conversation changes again.
    await fireEvent.click(folded.querySelector("summary")!);
    await vi.waitFor(() => expect(folded.open).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 0));
    t.loop.dismissError();
    await t.loop.send("and?");
    await tick();
    expect((screen.getAllByTestId("reasoning")[0] as HTMLDetailsElement).open).toBe(true);
  });

  it("shows an error banner that keeps the conversation, and retries", async () => {
    const failing: Turn = (emit) =>
      emit({ type: "error", error: { code: "llm_unavailable", message: "Provider returned 503", hint: "Try again in a moment.", retryable: true, details: {} } });
    const t = setup([failing, say("recovered")]);
    await t.loop.send("hello");
    await tick();
    const banner = screen.getByTestId("error-banner");
    expect(banner.querySelector("[data-testid=error-code]")?.textContent).toBe("llm_unavailable");
    expect(banner.textContent).toContain("Provider returned 503");
    expect(banner.textContent).toContain("Try again in a moment.");
    expect(screen.getByTestId("message-user").textContent).toBe("hello");
    await fireEvent.click(screen.getByTestId("retry"));
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("recovered"));
    expect(screen.queryByTestId("error-banner")).toBeNull();
  });

  it("offers Settings beside Retry when the window has them", async () => {
    const failing: Turn = (emit) =>
      emit({ type: "error", error: { code: "llm_auth", message: "invalid x-api-key", hint: "Check the key in Settings.", retryable: false, details: {} } });
    const onSettings = vi.fn();
    const t = setup([failing], onSettings);
    await t.loop.send("hello");
    await tick();
    await fireEvent.click(screen.getByTestId("error-settings"));
    expect(onSettings).toHaveBeenCalledTimes(1);
  });

  it("renders approval cards whose buttons drive the loop", async () => {
    const w = use("write_file", { path: "a.txt", content: "hi\n" });
    const t = setup([callTools(w), say("written")]);
    t.ipc.checkCall.mockResolvedValue({
      ticket: TICKET,
      decision: "ask",
      reason: "writes need approval",
      preview: { path: "a.txt", before: "", after: "hi\n", diff: "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+hi\n", base: "absent" },
    });
    t.ipc.callTool.mockImplementation(async (_name, input) => ({ path: input.path, bytes: 3, created: true }));
    void t.loop.send("write a");
    await vi.waitFor(() => expect(screen.getByTestId("approval").dataset.tool).toBe("write_file"));
    // The approval area sits outside the message log, under it.
    const log = document.querySelector(".log");
    expect(log?.contains(screen.getByTestId("approval"))).toBe(false);
    expect(log?.contains(screen.getByTestId("tool-card"))).toBe(true);
    expect(screen.getByTestId("tool-card").querySelectorAll("button")).toHaveLength(0);
    expect(screen.getByTestId("approval").querySelector("[data-testid=diff]")?.textContent).toContain("+hi");
    const once = screen.getByTestId("approve-once") as HTMLButtonElement;
    await vi.waitFor(() => expect(once.disabled).toBe(false), { timeout: 2000 });
    await fireEvent.mouseDown(once);
    await fireEvent.click(once, { detail: 1 });
    await vi.waitFor(() => expect(screen.queryByTestId("approval")).toBeNull());
    await vi.waitFor(() => expect(screen.getByTestId("tool-card").dataset.status).toBe("done"));
    expect(t.ipc.callTool).toHaveBeenCalledWith(
      "write_file",
      w.input,
      { ticket: TICKET, approval: { scope: "once" } },
      expect.objectContaining({ call_id: expect.any(String) }),
    );
  });

  it("keeps a stopped command's streamed output and says it was stopped, and after how long", async () => {
    const t = setup([callTools(use("exec_shell", { command: "npm", args: ["test"] })), say("stopped it")]);
    hangingShell(t.ipc, [{ stream: "stdout", data: "\x1b[32mPASS\x1b[0m a.test.ts\nRUNS b.test.ts\n" }], 800);
    void t.loop.send("test");
    await vi.waitFor(() => expect(screen.getByTestId("command-stop")).toBeTruthy());
    await fireEvent.click(screen.getByTestId("command-stop"));
    await vi.waitFor(() => expect(screen.getByTestId("tool-card").dataset.status).toBe("cancelled"));
    const panel = screen.getByTestId("command-panel");
    expect(screen.getByTestId("command-stopped").textContent).toBe("stopped");
    expect(panel.textContent).toContain("after 800 ms");
    expect(screen.getByTestId("command-output").textContent).toContain("RUNS b.test.ts");
    expect(screen.queryByTestId("command-stop")).toBeNull();
    await vi.waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("stopped it"));
  });
});
