// The workspace around the chat: @-mentions in the composer, the command
// palette and shortcuts, and the file viewer of the tree.
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { appendMention, DRAGGED_PATH } from "../lib/mentions";
import type { ReadFileOutput } from "../lib/types";
import Composer from "./Composer.svelte";
import FileViewer from "./FileViewer.svelte";
import Workspace from "./Workspace.svelte";

const out = (path: string, content: string): ReadFileOutput => ({
  path,
  content,
  start_line: 1,
  end_line: content.split("\n").length - 1,
  total_lines: content.split("\n").length - 1,
  truncated: false,
});

function composer() {
  const sent: string[] = [];
  const read = vi.fn(async (path: string) => {
    if (path === ".env") throw { code: "approval_required", message: "Reading .env needs approval." };
    return out(path, `// ${path}\nexport const x = 1;\n`);
  });
  const list = vi.fn(async () => ["README.md", "src/greet.js", "src/agent/greeting.ts", ".env"]);
  // Rust's answer for these paths (the secret_like command).
  const secretLike = vi.fn(async (paths: string[]) => paths.filter((path) => path === ".env"));
  render(Composer, { busy: false, onSend: (text: string) => sent.push(text), onStop: () => {}, files: { list, read, secretLike } });
  const input = screen.getByTestId("chat-input") as HTMLTextAreaElement;
  return { sent, read, list, secretLike, input };
}

async function type(input: HTMLTextAreaElement, value: string): Promise<void> {
  input.value = value;
  input.setSelectionRange(value.length, value.length);
  await fireEvent.input(input);
}

describe("@-mentions", () => {
  it("picks a file with the keyboard and attaches its text to what the model gets", async () => {
    const { sent, read, list, input } = composer();
    await type(input, "explain @src/gr");
    await waitFor(() => expect(screen.getAllByTestId("file-option")[0].textContent).toContain("src/greet.js"));
    await fireEvent.keyDown(input, { key: "ArrowDown" });
    await fireEvent.keyDown(input, { key: "ArrowUp" });
    await fireEvent.keyDown(input, { key: "Enter" });
    expect(input.value).toBe("explain @src/greet.js ");
    expect(screen.queryByTestId("file-picker")).toBeNull();
    expect(screen.getByTestId("mention-chip").textContent).toContain("src/greet.js");
    expect(sent).toEqual([]);
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(read).toHaveBeenCalledWith("src/greet.js");
    expect(list).toHaveBeenCalledTimes(1);
    expect(sent[0]).toBe("explain @src/greet.js \n\nAttached file src/greet.js:\n```\n// src/greet.js\nexport const x = 1;\n```");
  });

  it("marks secret-like files, and sends without one that cannot be read, saying so", async () => {
    const { sent, secretLike, input } = composer();
    await type(input, "@.en");
    await waitFor(() => expect(screen.getAllByTestId("file-option")[0].textContent).toContain("secret"));
    expect(screen.getAllByTestId("file-option")[0].textContent).toContain(".env");
    expect(secretLike).toHaveBeenCalledWith(["README.md", "src/greet.js", "src/agent/greeting.ts", ".env"]);
    await type(input, "@READ");
    await waitFor(() => expect(screen.getAllByTestId("file-option")).toHaveLength(1));
    expect(screen.getByTestId("file-option").textContent).not.toContain("secret");
    await type(input, "@.en");
    await waitFor(() => expect(screen.getAllByTestId("file-option")[0].textContent).toContain(".env"));
    await fireEvent.keyDown(input, { key: "Tab" });
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(sent).toEqual(["@.env "]));
    expect(screen.getByTestId("attach-notice").textContent).toContain(".env (approval_required");
  });

  it("closes on Esc without reaching the chat's Stop, and attaches nothing the text no longer names", async () => {
    const { sent, read, input } = composer();
    const windowEsc = vi.fn();
    window.addEventListener("keydown", windowEsc);
    await type(input, "@READ");
    await waitFor(() => expect(screen.getAllByTestId("file-option")).toHaveLength(1));
    await fireEvent.keyDown(input, { key: "Escape" });
    expect(screen.queryByTestId("file-picker")).toBeNull();
    expect(windowEsc).not.toHaveBeenCalled();
    window.removeEventListener("keydown", windowEsc);
    await type(input, "@READ");
    expect(screen.queryByTestId("file-picker")).toBeNull();
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(sent).toEqual(["@READ"]));
    expect(read).not.toHaveBeenCalled();
  });
});

describe("a message edited again", () => {
  it("comes back as its text with its files as chips", async () => {
    const message = "explain @src/greet.js \n\nAttached file src/greet.js:\n```\nx\n```";
    render(Composer, { busy: false, draft: { text: message }, onSend: () => {}, onStop: () => {}, files: { list: async () => [], read: async (p: string) => out(p, "") } });
    const input = screen.getByTestId("chat-input") as HTMLTextAreaElement;
    await waitFor(() => expect(input.value).toBe("explain @src/greet.js "));
    expect(screen.getByTestId("mention-chip").textContent).toContain("src/greet.js");
  });
});

describe("command palette and shortcuts", () => {
  function workspace(busy = false) {
    const run = { "new-conversation": vi.fn(), stop: vi.fn(), settings: vi.fn(), "close-project": vi.fn() };
    render(Workspace, { busy, run });
    return run;
  }

  it("opens on Ctrl+K and Ctrl+Shift+P, filters as you type, and runs the chosen action", async () => {
    const run = workspace();
    await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    // The palette is its own chunk: it appears once that has loaded.
    const input = (await screen.findByTestId("palette-input")) as HTMLInputElement;
    expect(document.activeElement).toBe(input);
    const titles = screen.getAllByTestId("palette-action").map((li) => li.textContent?.replace(/\s+/g, " ").trim());
    expect(titles).toContain("New conversation Ctrl+Shift+N");
    expect(titles).toContain("Pick a file Ctrl+P");
    expect(titles).toContain("Close project");
    await fireEvent.input(input, { target: { value: "new" } });
    expect(screen.getAllByTestId("palette-action")[0].textContent).toContain("New conversation");
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(screen.queryByTestId("command-palette")).toBeNull());
    expect(run["new-conversation"]).toHaveBeenCalledTimes(1);

    await fireEvent.keyDown(window, { key: "P", ctrlKey: true, shiftKey: true });
    const again = (await screen.findByTestId("palette-input")) as HTMLInputElement;
    await fireEvent.input(again, { target: { value: "sett" } });
    // The action first, then the slash command of the same name: down to it and back up.
    await fireEvent.keyDown(again, { key: "ArrowDown" });
    await fireEvent.keyDown(again, { key: "ArrowUp" });
    await fireEvent.keyDown(again, { key: "Enter" });
    await waitFor(() => expect(run.settings).toHaveBeenCalledTimes(1));

    await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    await screen.findByTestId("command-palette");
    await fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(screen.queryByTestId("command-palette")).toBeNull();
    expect(run.stop).not.toHaveBeenCalled();
  });

  it("leaves the keys to another dialog while one is open", async () => {
    const run = workspace();
    const other = document.createElement("div");
    other.setAttribute("aria-modal", "true");
    document.body.append(other);
    await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    await fireEvent.keyDown(window, { key: ",", ctrlKey: true });
    expect(screen.queryByTestId("command-palette")).toBeNull();
    expect(run.settings).not.toHaveBeenCalled();
    other.remove();
  });

  it("runs shortcuts without the palette, and not what the agent's state forbids", async () => {
    const run = workspace(true);
    await fireEvent.keyDown(window, { key: ",", ctrlKey: true });
    expect(run.settings).toHaveBeenCalledTimes(1);
    await fireEvent.keyDown(window, { key: "N", ctrlKey: true, shiftKey: true });
    expect(run["new-conversation"]).not.toHaveBeenCalled();
    await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    await fireEvent.input(await screen.findByTestId("palette-input"), { target: { value: "stop" } });
    await fireEvent.keyDown(screen.getByTestId("palette-input"), { key: "Enter" });
    await waitFor(() => expect(run.stop).toHaveBeenCalledTimes(1));
  });
});

describe("file viewer", () => {
  it("shows the file highlighted, escaped and numbered, and closes on Esc", async () => {
    const onClose = vi.fn();
    const read = vi.fn(async (path: string) => out(path, "# Title\n\n<button class=\"primary\">OK</button>\n"));
    render(FileViewer, { path: "README.md", read, onClose });
    const code = await screen.findByTestId("file-viewer-code");
    await waitFor(() => expect(code.querySelector(".hljs-section")?.textContent).toBe("# Title"));
    expect(code.querySelector("button")).toBeNull();
    expect(code.textContent).toContain('<button class="primary">OK</button>');
    expect(screen.getByTestId("file-viewer").querySelector(".gutter")?.textContent).toBe("1\n2\n3");
    await fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(onClose).toHaveBeenCalled();
  });

  it("says why a file cannot be shown", async () => {
    const read = vi.fn(async () => {
      throw { code: "not_text", message: "The file is not text." };
    });
    render(FileViewer, { path: "logo.png", read, onClose: () => {} });
    expect((await screen.findByTestId("file-viewer-error")).textContent).toContain("not_text");
    expect(screen.queryByTestId("file-viewer-changed")).toBeNull();
  });

  it("says when the conversation changed the file", async () => {
    render(FileViewer, { path: "a.txt", read: async (p: string) => out(p, "x\n"), onClose: () => {}, changed: true });
    expect((await screen.findByTestId("file-viewer-changed")).textContent).toBe("changed in this conversation");
  });
});

describe("a file dragged from the tree", () => {
  it("dropped on the message box is mentioned and attached like a picked one", async () => {
    const { sent, read, input } = composer();
    await type(input, "what is");
    const dataTransfer = { types: [DRAGGED_PATH], getData: (type: string) => (type === DRAGGED_PATH ? "src/greet.js" : "") };
    const over = new Event("dragover", { bubbles: true, cancelable: true });
    Object.assign(over, { dataTransfer });
    input.dispatchEvent(over);
    expect(over.defaultPrevented).toBe(true);
    await fireEvent.drop(input, { dataTransfer });
    expect(input.value).toBe("what is @src/greet.js ");
    expect(screen.getByTestId("mention-chip").textContent).toContain("src/greet.js");
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(read).toHaveBeenCalledWith("src/greet.js");
    expect(sent[0]).toContain("Attached file src/greet.js:");
  });

  it("anything else dropped is left to the box", async () => {
    const { input } = composer();
    const other = new Event("dragover", { bubbles: true, cancelable: true });
    Object.assign(other, { dataTransfer: { types: ["text/plain"], getData: () => "hello" } });
    input.dispatchEvent(other);
    expect(other.defaultPrevented).toBe(false);
    expect(appendMention("a", "b.txt")).toBe("a @b.txt ");
    expect(appendMention("", "b.txt")).toBe("@b.txt ");
  });
});
