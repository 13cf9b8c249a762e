// The `/` menu of the message box: typing `/` lists Corral's built-ins and
// the custom commands with their argument hints; arrows choose, Tab or
// Enter completes the name into the box, Esc closes, and Enter on a name
// typed whole sends it.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { Customization } from "../lib/types";
import Composer from "./Composer.svelte";

const files = { list: async () => [], read: vi.fn() };
const LISTING: Customization = {
  commands: [{ source: "project", relative: "tracker/fix-bug.md", path: ".claude/commands/tracker/fix-bug.md", text: "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1 (priority $2)." }],
  skills: [],
  problems: [],
};

async function setup() {
  const onSend = vi.fn();
  render(Composer, { props: { busy: false, onSend, onStop: vi.fn(), files, commands: async () => LISTING } });
  const box = screen.getByTestId("chat-input") as HTMLTextAreaElement;
  const type = async (text: string) => {
    box.value = text;
    box.setSelectionRange(text.length, text.length);
    await fireEvent.input(box);
  };
  return { onSend, box, type };
}

const names = () => screen.getAllByTestId("slash-option").map((li) => li.getAttribute("data-name"));

describe("the / menu", () => {
  it("lists the built-ins and the project's commands, with description and argument hint", async () => {
    const { type } = await setup();
    await type("/");
    await vi.waitFor(() => expect(names()).toContain("tracker:fix-bug"));
    expect(names().slice(0, 4)).toEqual(["compact", "new", "model", "undo"]);
    const fix = screen.getAllByTestId("slash-option").find((li) => li.getAttribute("data-name") === "tracker:fix-bug");
    expect(fix?.textContent).toContain("[number] [priority]");
    expect(fix?.textContent).toContain("Fix a bug from the tracker");
  });

  it("completes the chosen name with the arrows and Tab, and closes with Esc", async () => {
    const { box, type, onSend } = await setup();
    await type("/tr");
    await vi.waitFor(() => expect(names()[0]).toBe("tracker:fix-bug"));
    await fireEvent.keyDown(box, { key: "Tab" });
    expect(box.value).toBe("/tracker:fix-bug ");
    expect(screen.queryByTestId("slash-menu")).toBeNull();
    await type("/c");
    expect(names().slice(0, 2)).toEqual(["compact", "changes"]);
    await fireEvent.keyDown(box, { key: "ArrowDown" });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("/changes ");
    expect(onSend).not.toHaveBeenCalled();
    await type("/n");
    await fireEvent.keyDown(box, { key: "Escape" });
    expect(screen.queryByTestId("slash-menu")).toBeNull();
  });

  it("sends a name typed whole on Enter", async () => {
    const { box, type, onSend } = await setup();
    await type("/compact");
    await fireEvent.keyDown(box, { key: "Enter" });
    await vi.waitFor(() => expect(onSend).toHaveBeenCalledWith("/compact", []));
  });
});
