// The command palette lists the slash commands after the actions: Corral's
// built-ins and the project's own, filtered with the actions; choosing one
// puts `/name ` in the message box, ready for its arguments.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { requestComposer } from "../lib/actions";
import type { Customization } from "../lib/types";
import CommandPalette from "./CommandPalette.svelte";
import Composer from "./Composer.svelte";

const LISTING: Customization = {
  commands: [{ source: "project", relative: "tracker/fix-bug.md", path: ".claude/commands/tracker/fix-bug.md", text: "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1." }],
  skills: [],
  problems: [],
};

describe("slash commands in the command palette", () => {
  it("lists the built-ins and the project's commands after the actions, and gives the chosen one", async () => {
    const onCommand = vi.fn();
    const onRun = vi.fn();
    render(CommandPalette, { disabled: () => false, onRun, onCommand, onClose: vi.fn(), commands: async () => LISTING });
    await waitFor(() => expect(screen.getAllByTestId("palette-command").map((li) => li.dataset.name)).toContain("tracker:fix-bug"));
    const names = screen.getAllByTestId("palette-command").map((li) => li.dataset.name);
    expect(names.slice(0, 4)).toEqual(["compact", "new", "model", "undo"]);
    const fix = screen.getAllByTestId("palette-command").find((li) => li.dataset.name === "tracker:fix-bug")!;
    expect(fix.textContent).toContain("[number] [priority]");
    expect(fix.textContent).toContain("Fix a bug from the tracker");
    // The options follow the actions, one list for the arrows.
    const options = screen.getAllByRole("option");
    expect(options.indexOf(fix)).toBeGreaterThan(options.indexOf(screen.getAllByTestId("palette-action").at(-1)!));

    const input = screen.getByTestId("palette-input") as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "/tracker" } });
    expect(screen.queryAllByTestId("palette-action")).toHaveLength(0);
    expect(screen.getAllByTestId("palette-command")[0].dataset.name).toBe("tracker:fix-bug");
    await fireEvent.keyDown(input, { key: "Enter" });
    expect(onCommand).toHaveBeenCalledWith(expect.objectContaining({ name: "tracker:fix-bug" }));
    expect(onRun).not.toHaveBeenCalled();
  });

  it("the composer takes the chosen command into its box", async () => {
    render(Composer, { busy: false, onSend: vi.fn(), onStop: vi.fn(), files: { list: async () => [], read: vi.fn() }, commands: async () => LISTING });
    requestComposer("focus", "/tracker:fix-bug ");
    const box = screen.getByTestId("chat-input") as HTMLTextAreaElement;
    await waitFor(() => expect(box.value).toBe("/tracker:fix-bug "));
  });
});
