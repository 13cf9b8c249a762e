// No native tooltip on a control that opens a menu or a dialog: the window
// system draws it above everything, so it would lie over the menu or the
// dialog that control just opened (the model menu, the Fork dialog). What
// such a tooltip said, the menu or the dialog says itself.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { fakeIpc } from "../test/fakeIpc";
import { AgentLoop } from "../lib/agent/loop";
import { NO_INSTRUCTIONS } from "../lib/agent/instructions";
import type { Checkpoint, StoredEntry } from "../lib/types";
import Chat from "./Chat.svelte";
import ModelSwitcher from "./ModelSwitcher.svelte";

const text = (role: "user" | "assistant", value: string) => ({ role, content: [{ type: "text" as const, text: value }] });
const entries: StoredEntry[] = [
  { seq: 0, message: text("user", "Change the greeting"), items: [{ kind: "user", id: "u1", text: "Change the greeting" }] },
  { seq: 1, message: text("assistant", "Changed."), items: [{ kind: "assistant", id: "a1", text: "Changed.", streaming: false }] },
];
const checkpoint: Checkpoint = { id: "5", time: 1_700_000_000_000, tool: "edit_file", label: "greet.js", turn: "u1", call_id: "card-5", turn_start: true, files: 1, files_changed: { added: 0, modified: 1, removed: 0 }, too_large: [] };

/** The tooltips in `root`, by the element's test id. */
const tooltips = (root: ParentNode): string[] => [...root.querySelectorAll("[title]")].map((el) => `${el.getAttribute("data-testid")}: ${el.getAttribute("title")}`);

describe("controls that open a menu or a dialog", () => {
  it("Edit and resend, Fork from here and Restore to here carry no tooltip over the dialog they open", async () => {
    const fake = fakeIpc([]);
    const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
    loop.load({ summary: { id: "c1", project: "/p/app", title: "t", first_line: "t", created_ms: 0, updated_ms: 0, model: "m", input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, unpriced: 0, entries: 2 }, entries });
    const checkpointIpc = { listCheckpoints: vi.fn(async () => [checkpoint]), compareCheckpoints: vi.fn(), checkpointDiff: vi.fn(), restoreCheckpoint: vi.fn() };
    render(Chat, { props: { loop, onFork: vi.fn(), checkpointIpc: checkpointIpc as never } });
    await screen.findByTestId("restore-turn");
    for (const id of ["edit-message", "fork-message", "restore-turn"]) expect(screen.getByTestId(id).hasAttribute("title")).toBe(false);
  });

  it("the model switcher and its menu carry no tooltip; a model's display name is written beside its id", async () => {
    const source = {
      getSettings: async () => ({ provider: "anthropic", base_url: "https://api.anthropic.com", model: "claude-x", max_tokens: 1024, mode: "ask", notifications: true, has_api_key: true }),
      listModels: async () => [{ id: "claude-haiku-4-5", display_name: "Claude Haiku 4.5" }, { id: "claude-sonnet-4-5" }],
      detectLocalServers: async () => [],
    };
    render(ModelSwitcher, { props: { target: null, onChange: vi.fn(), source: source as never } });
    const button = screen.getByTestId("model-switcher");
    expect(button.hasAttribute("title")).toBe(false);
    await fireEvent.click(button);
    await vi.waitFor(() => expect(screen.getAllByTestId("model-option")).toHaveLength(2));
    expect(tooltips(screen.getByTestId("model-menu"))).toEqual([]);
    expect(screen.getAllByTestId("model-option")[0].textContent).toBe("claude-haiku-4-5 · Claude Haiku 4.5");
  });
});
