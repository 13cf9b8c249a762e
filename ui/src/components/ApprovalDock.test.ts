import { fireEvent, render, screen } from "@testing-library/svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import { ARM_DELAY_MS } from "../lib/approvalGuard";
import ApprovalDock from "./ApprovalDock.svelte";
import { displayOf } from "../test/fakeIpc";

const shell: ToolItem = { kind: "tool", id: "c1", callId: "t1", name: "exec_shell", input: { command: "node", args: ["-e", "x"] }, risk: "shell", status: "waiting", reason: "commands need approval" };

function dock(item: Partial<ToolItem> = {}) {
  const onDecide = vi.fn();
  render(ApprovalDock, { props: { item: { ...shell, display: displayOf(item.name ?? shell.name), ...item }, onDecide } });
  return { onDecide, root: screen.getByTestId("approval") };
}

/** A click as the mouse makes it: a press on the control, then the click. */
async function mouseClick(testid: string): Promise<void> {
  const button = screen.getByTestId(testid);
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

afterEach(() => vi.useRealTimers());

describe("ApprovalDock", () => {
  it("draws the pieces Rust marked for the question, not its own marking, and marks a field's name", () => {
    // Rust's pieces win: a marker where Rust put one, styled apart, even
    // where the text itself would be drawn differently here.
    const shown = {
      reason: [{ text: "commands need " }, { text: "⟨U+202E⟩", mark: "U+202E right-to-left override" }, { text: "approval" }],
      fields: [
        { name: "command", key: [{ text: "command" }], value: [{ text: "node" }] },
        {
          name: "args",
          key: [{ text: "args" }],
          value: [{ text: "[…]" }],
          items: [[{ text: "-e" }], [{ text: "x" }, { text: "⟨U+E000⟩", mark: "U+E000" }]],
        },
        { name: "evil\u202Ekey", key: [{ text: "evil" }, { text: "⟨U+202E⟩", mark: "U+202E" }, { text: "key" }], value: [{ text: "1" }] },
      ],
      paths: [],
    };
    dock({ input: { command: "node", args: ["-e", "x"], "evil\u202Ekey": 1 }, shown });
    const args = [...screen.getByTestId("call-args").querySelectorAll("li")];
    expect(args.map((li) => li.textContent)).toEqual(["-e", "x⟨U+E000⟩"]);
    expect(args[1]?.querySelector(".mark")?.getAttribute("title")).toBe("U+E000");
    const names = [...screen.getByTestId("call-details").querySelectorAll("dt")].map((dt) => dt.textContent);
    expect(names).toContain("evil⟨U+202E⟩key");
    expect(screen.getByTestId("approval").querySelector(".reason")?.textContent).toBe("commands need ⟨U+202E⟩approval");
  });

  it("draws a change's rows as Rust marked their lines, and the lines it left out as they are", () => {
    const before = "keep\nold\n";
    const after = "keep\nnew \u2066x\n";
    const shown = {
      reason: [{ text: "edit_file changes `a.txt`" }],
      fields: [],
      paths: [],
      change: { before: {}, after: { 1: [{ text: "new " }, { text: "⟨U+2066⟩", mark: "Rust's marker" }, { text: "x" }] } },
    };
    dock({ name: "edit_file", input: { path: "a.txt" }, risk: "write", preview: { kind: "diff", path: "a.txt", before, after }, shown });
    const rows = [...screen.getAllByTestId("diff-row")].map((row) => row.querySelector(".text")?.textContent);
    expect(rows).toEqual([" keep", "-old", "+new ⟨U+2066⟩x"]);
    // The marker is the one Rust made, not one made here.
    expect(screen.getAllByTestId("diff-row")[2]?.querySelector(".mark")?.getAttribute("title")).toBe("Rust's marker");
  });

  it("shows the program and every argument whole, forty empty lines as one row of markers", () => {
    const script = `console.log('tidy')${"\n".repeat(40)}require('fs').rmSync('src', { recursive: true })`;
    const { root } = dock({ input: { command: "node", args: ["-e", script] } });
    expect(root.dataset.tool).toBe("exec_shell");
    expect(screen.getByTestId("call-program").textContent).toBe("node");
    const args = [...screen.getByTestId("call-args").querySelectorAll("li")].map((li) => li.textContent);
    expect(args).toEqual(["-e", `console.log('tidy')${"↵".repeat(40)}\nrequire('fs').rmSync('src', { recursive: true })`]);
    expect(root.querySelector("header")?.textContent).toBe("approval needed exec_shell commands need approval");
  });

  it("shows a file name's bidi override as a marker and the path as the ticket says the tool resolves it", () => {
    const typed = "./docs/../invoice\u202Etxt.exe";
    dock({ name: "delete_file", input: { path: typed }, risk: "write", paths: [{ typed, inside: "invoice\u202Etxt.exe" }] });
    expect(screen.getByTestId("call-path").textContent).toBe("./docs/../invoice⟨U+202E⟩txt.exe");
    expect(screen.getByTestId("call-resolved").textContent).toBe("invoice⟨U+202E⟩txt.exe");
  });

  it("adds no row when the path leads where it says", () => {
    dock({ name: "read_file", input: { path: "src/a.rs" }, risk: "read", paths: [{ typed: "src/a.rs", inside: "src/a.rs" }] });
    expect(screen.getByTestId("call-path").textContent).toBe("src/a.rs");
    expect(screen.queryByTestId("call-resolved")).toBeNull();
  });

  it("shows a write's diff, and its content only there", () => {
    dock({
      name: "write_file",
      input: { path: "a.txt", content: "one\nTWO\n" },
      risk: "write",
      preview: { kind: "diff", path: "a.txt", before: "one\ntwo\n", after: "one\nTWO\n" },
    });
    expect(screen.getByTestId("diff").querySelector(".add")?.textContent).toContain("+TWO");
    expect([...screen.getByTestId("call-details").querySelectorAll("dt")].map((dt) => dt.textContent)).toEqual(["path"]);
  });

  it("renders `code` in the reason", () => {
    const { root } = dock({ name: "write_file", input: { path: "src/greet.js", content: "" }, reason: "changes `src/greet.js`" });
    const reason = root.querySelector(".reason");
    expect(reason?.textContent).toBe("changes src/greet.js");
    expect(reason?.querySelector("code")?.textContent).toBe("src/greet.js");
  });

  it("marks a file name's bidi override in the reason too", () => {
    const { root } = dock({ name: "write_file", input: { path: "report\u202Etxt.js", content: "" }, reason: "write_file changes `report\u202Etxt.js`" });
    expect(root.querySelector(".reason")?.textContent).toBe("write_file changes report⟨U+202E⟩txt.js");
  });

  it("focuses the area as a group, never a button", () => {
    const { root } = dock();
    expect(document.activeElement).toBe(root);
  });

  it("leaves the focus in a text field the user is in", () => {
    const field = document.createElement("textarea");
    document.body.append(field);
    field.focus();
    dock();
    expect(document.activeElement).toBe(field);
    field.remove();
  });

  it("ignores clicks for a moment after it appears, then reports the choice", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { onDecide } = dock();
    const buttons = screen.getByTestId("approve-once").closest("[data-armed]") as HTMLElement;
    expect(buttons.dataset.armed).toBe("false");
    expect((screen.getByTestId("approve-once") as HTMLButtonElement).disabled).toBe(true);
    await mouseClick("approve-once");
    await mouseClick("deny");
    vi.advanceTimersByTime(ARM_DELAY_MS);
    await vi.waitFor(() => expect(buttons.dataset.armed).toBe("true"));
    await mouseClick("approve-once");
    await mouseClick("deny");
    expect(onDecide.mock.calls.map((c) => c[0])).toEqual(["once", "deny"]);
  });

  it("ignores a key's repeats on a button, takes a fresh press", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { onDecide } = dock();
    vi.advanceTimersByTime(ARM_DELAY_MS);
    const once = screen.getByTestId("approve-once");
    await vi.waitFor(() => expect((once as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.keyDown(once, { key: "Enter", repeat: true });
    await fireEvent.click(once, { detail: 0 });
    expect(onDecide).not.toHaveBeenCalled();
    await fireEvent.keyDown(once, { key: "Enter" });
    await fireEvent.click(once, { detail: 0 });
    expect(onDecide.mock.calls).toEqual([["once"]]);
  });

  it("holds Approve, not Deny, until the details box has been seen to its end", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    // jsdom lays nothing out: the details box is made 1000 px tall in a 200 px window.
    const tall = (el: HTMLElement): boolean => el.dataset.testid === "approval-details";
    const spies = [
      vi.spyOn(HTMLElement.prototype, "scrollHeight", "get").mockImplementation(function (this: HTMLElement) { return tall(this) ? 1000 : 0; }),
      vi.spyOn(HTMLElement.prototype, "clientHeight", "get").mockImplementation(function (this: HTMLElement) { return tall(this) ? 200 : 0; }),
    ];
    try {
      const after = "one\ntwo\n";
      const { onDecide } = dock({ name: "write_file", input: { path: "a.txt", content: after }, risk: "write", preview: { kind: "diff", path: "a.txt", before: "", after } });
      vi.advanceTimersByTime(ARM_DELAY_MS);
      const once = screen.getByTestId("approve-once") as HTMLButtonElement;
      await vi.waitFor(() => expect((screen.getByTestId("deny") as HTMLButtonElement).disabled).toBe(false));
      expect(once.disabled).toBe(true);
      expect(screen.getByTestId("approval-unseen").textContent).toBe("Approve waits until you have seen all of it: scroll to the end.");
      await mouseClick("approve-once");
      expect(onDecide).not.toHaveBeenCalled();

      const box = screen.getByTestId("approval-details");
      box.scrollTop = 400;
      await fireEvent.scroll(box);
      expect(once.disabled).toBe(true);
      box.scrollTop = 800;
      await fireEvent.scroll(box);
      await vi.waitFor(() => expect(once.disabled).toBe(false));
      // Scrolling back up does not take it back.
      box.scrollTop = 0;
      await fireEvent.scroll(box);
      expect(once.disabled).toBe(false);
      expect(screen.queryByTestId("approval-unseen")).toBeNull();
      await mouseClick("approve-once");
      expect(onDecide.mock.calls).toEqual([["once"]]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it("arms Approve at once for a change that fits", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    dock({ name: "write_file", input: { path: "a.txt", content: "one\n" }, risk: "write", preview: { kind: "diff", path: "a.txt", before: "", after: "one\n" } });
    vi.advanceTimersByTime(ARM_DELAY_MS);
    await vi.waitFor(() => expect((screen.getByTestId("approve-once") as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId("approval-unseen")).toBeNull();
  });

  it("states a change's size and wraps its rows instead of scrolling them sideways", () => {
    const after = `count = 10${" ".repeat(400)}import("node:fs")\n`;
    dock({ name: "write_file", input: { path: "a.js", content: after }, risk: "write", preview: { kind: "diff", path: "a.js", before: "", after } });
    expect(screen.getByTestId("diff-size").textContent).toBe("2 rows");
    const row = screen.getByTestId("diff-row");
    expect(row.querySelector(".text")?.textContent).toBe('+count = 10⟨400 spaces⟩import("node:fs")');
  });
});
