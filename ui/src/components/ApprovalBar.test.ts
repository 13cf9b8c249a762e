// The answers to an approval: Approve once and Deny first and alike for
// every kind of call; the wider answers apart, each opening a panel that
// shows what it would allow (a grant chosen and edited before it is
// given, a rule shown to confirm); no key acts unless on a control.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import type { GrantChoices } from "../lib/grants";
import type { Grant } from "../lib/types";
import ApprovalDock from "./ApprovalDock.svelte";
import { displayOf, serverDisplay } from "../test/fakeIpc";

/** A command grant: these words, and with `more` any further arguments. */
const words = (command: string, args: string[], more: boolean): Grant => ({ kind: "command", command, args, more });
/** What Rust's ticket offers for a command: its argv, and each of its prefixes then `*`. */
function commandChoices(command: string, args: string[], proposed: string[]): GrantChoices {
  const prefixes = Array.from({ length: args.length + 1 }, (_, n) => words(command, args.slice(0, n), true));
  return { exact_grant: words(command, args, false), proposed_pattern: words(command, proposed, true), covering_patterns: [words(command, args, false), ...prefixes] };
}

const base: ToolItem = {
  kind: "tool",
  id: "c1",
  callId: "t1",
  name: "exec_shell",
  input: { command: "npm", args: ["test", "--", "--watch=false"] },
  risk: "shell",
  status: "waiting",
  reason: "needs approval",
  proposedRule: "npm test",
  grantChoices: commandChoices("npm", ["test", "--", "--watch=false"], ["test"]),
};
const KINDS: Partial<ToolItem>[] = [
  {},
  { input: { command: "npm", args: ["ci"] }, network: true, grantChoices: commandChoices("npm", ["ci"], ["ci"]) },
  {
    name: "write_file",
    input: { path: "src/lib/a.js", content: "x" },
    risk: "write",
    grantChoices: { exact_grant: { kind: "path", tool: "write_file", path: "src/lib/a.js" }, grant_folders: ["src/lib", "src", "."] },
  },
  { name: "delete_file", input: { path: ".env" }, risk: "write", oneAtATime: true, grantChoices: undefined },
  {
    name: "github__search",
    input: { query: "x" },
    risk: null,
    display: serverDisplay("github", "search"),
    grantChoices: { exact_grant: { kind: "call", tool: "github__search", input: { query: "x" } } },
  },
];

function dock(item: Partial<ToolItem> = {}) {
  const onDecide = vi.fn();
  const view = render(ApprovalDock, { props: { item: { ...base, display: displayOf(item.name ?? base.name), ...item }, onDecide } });
  return { onDecide, unmount: view.unmount };
}

/** A click as the mouse makes it, once the control takes clicks. */
async function click(testid: string): Promise<void> {
  const button = screen.getByTestId(testid) as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

afterEach(() => vi.useRealTimers());

describe("ApprovalBar", () => {
  it("puts Approve once and Deny first, alike, for every kind of call, and nothing wider before them", () => {
    for (const kind of KINDS) {
      const { unmount } = dock(kind);
      const row = screen.getByTestId("approve-once").closest(".row") as HTMLElement;
      const buttons = [...row.querySelectorAll("button")];
      expect(buttons.slice(0, 2).map((b) => [b.dataset.testid, b.textContent])).toEqual([
        ["approve-once", "Approve once"],
        ["deny", "Deny"],
      ]);
      expect(buttons[0].parentElement).toBe(row.firstElementChild);
      expect(buttons[1].parentElement).toBe(row.firstElementChild);
      // The row is the bar's last part: a panel opens above it, never under it.
      expect(row.parentElement?.lastElementChild).toBe(row);
      unmount();
    }
  });

  it("saves a rule only after showing it, from its own panel", async () => {
    const { onDecide } = dock();
    expect(screen.getByTestId("approve-always").textContent).toBe("Always allow…");
    await click("approve-always");
    expect(onDecide).not.toHaveBeenCalled();
    expect(screen.getByTestId("rule-text").textContent).toBe("npm test");
    expect(screen.getByTestId("rule-confirm").textContent).toContain("in every conversation of this project");
    await click("rule-cancel");
    expect(screen.queryByTestId("rule-confirm")).toBeNull();
    await click("approve-always");
    await click("rule-save");
    expect(onDecide.mock.calls).toEqual([[{ rule: "npm test" }]]);
  });

  it("allows in the conversation the exact argv by default", async () => {
    const { onDecide } = dock({ input: { command: "node", args: ["-e", "console.log(1)"] }, grantChoices: commandChoices("node", ["-e", "console.log(1)"], ["-e"]) });
    await click("approve-conversation");
    expect(onDecide).not.toHaveBeenCalled();
    expect(screen.getByTestId("grant-chooser").textContent).toContain("this exact command: node -e console.log(1)");
    await click("grant-confirm");
    expect(onDecide.mock.calls).toEqual([[{ grant: { kind: "command", command: "node", args: ["-e", "console.log(1)"], more: false } }]]);
  });

  it("allows a pattern the user edits, shown parsed, and never one that misses the call", async () => {
    const { onDecide } = dock();
    await click("approve-conversation");
    const field = screen.getByTestId("grant-pattern-text") as HTMLInputElement;
    expect(field.value).toBe("npm test *");
    await fireEvent.focus(field);
    expect(screen.getByTestId("grant-pattern-meaning").textContent).toContain("commands starting with npm test, whatever follows");
    await fireEvent.input(field, { target: { value: "npm run *" } });
    expect(screen.getByTestId("grant-pattern-meaning").textContent).toContain("does not cover the command shown");
    expect((screen.getByTestId("grant-confirm") as HTMLButtonElement).disabled).toBe(true);
    // Enter in the field does nothing.
    await fireEvent.keyDown(field, { key: "Enter" });
    await fireEvent.input(field, { target: { value: "npm test -- *" } });
    await fireEvent.keyDown(field, { key: "Enter" });
    expect(onDecide).not.toHaveBeenCalled();
    await click("grant-confirm");
    expect(onDecide.mock.calls).toEqual([[{ grant: { kind: "command", command: "npm", args: ["test", "--"], more: true } }]]);
  });

  it("allows a write's file, or a folder the user picks among its own", async () => {
    const { onDecide } = dock(KINDS[2]);
    await click("approve-conversation");
    expect(screen.getByTestId("grant-chooser").textContent).toContain("write_file on this file only: src/lib/a.js");
    const options = [...(screen.getByTestId("grant-folder-choice") as HTMLSelectElement).options].map((o) => o.textContent);
    expect(options).toEqual(["src/lib/", "src/", "the whole project"]);
    await fireEvent.click(screen.getByTestId("grant-folder"));
    await fireEvent.change(screen.getByTestId("grant-folder-choice"), { target: { value: "src" } });
    await click("grant-confirm");
    expect(onDecide.mock.calls).toEqual([[{ grant: { kind: "folder", tool: "write_file", folder: "src" } }]]);
  });

  it("allows another tool's very call only", async () => {
    const { onDecide } = dock(KINDS[4]);
    expect(screen.queryByTestId("approve-always")).toBeNull();
    expect(screen.queryByTestId("approve-network")).toBeNull();
    await click("approve-conversation");
    await click("grant-confirm");
    expect(onDecide.mock.calls).toEqual([[{ grant: { kind: "call", tool: "github__search", input: { query: "x" } } }]]);
  });

  it("offers nothing wider than once for a call on a secret", () => {
    dock(KINDS[3]);
    expect(screen.queryByTestId("approve-conversation")).toBeNull();
    expect(screen.queryByTestId("approve-always")).toBeNull();
  });

  it("offers once with the network to a command, named on the call that asks for it", async () => {
    const { onDecide } = dock();
    expect(screen.queryByTestId("approval-network")).toBeNull();
    await click("approve-network");
    expect(onDecide.mock.calls).toEqual([["network"]]);
  });

  it("names the network when the call asks for it, with no second network button", () => {
    dock(KINDS[1]);
    expect(screen.getByTestId("approval-network").textContent).toContain("through Corral's proxy only");
    expect(screen.getByTestId("approve-once").textContent).toBe("Approve once");
    expect(screen.queryByTestId("approve-network")).toBeNull();
  });

  it("takes no key pressed on the area: only a control's own", async () => {
    const { onDecide } = dock();
    const area = screen.getByTestId("approval");
    await vi.waitFor(() => expect((screen.getByTestId("approve-once") as HTMLButtonElement).disabled).toBe(false), { timeout: 2000 });
    for (const key of ["Enter", " ", "y", "a", "Escape"]) {
      await fireEvent.keyDown(area, { key });
      await fireEvent.keyUp(area, { key });
      await fireEvent.keyDown(document.body, { key });
    }
    expect(onDecide).not.toHaveBeenCalled();
  });
});
