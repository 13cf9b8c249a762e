// The small pure pieces the components and the loop stand on.
import { describe, expect, it } from "vitest";
import type { ShellOutput, WireError } from "./types";
import { previewOf } from "./agent/preview";
import { diffRows } from "./diffRows";
import { OutputBuffer } from "./outputBuffer";
import { visibleRange } from "./virtualRange";
import { ansiLineToHtml, carrySgr, visibleText } from "./ansi";
import { exitProblem } from "./shellOutcome";
import { commandLine, resultSummary, resultText, subjectOf } from "./subject";
import { displayOf, serverDisplay } from "../test/fakeIpc";
import { renderMarkdown } from "./markdown";

describe("diffRows", () => {
  it("numbers old and new lines of a unified diff", () => {
    const { rows, added, removed } = diffRows("a\nb\nc\n", "a\nB\nc\nd\n");
    expect(rows).toEqual([
      { kind: "hunk", text: "@@ -1,3 +1,4 @@" },
      { kind: "context", old: 1, new: 1, text: "a" },
      { kind: "del", old: 2, new: null, text: "b" },
      { kind: "add", old: null, new: 2, text: "B" },
      { kind: "context", old: 3, new: 3, text: "c" },
      { kind: "add", old: null, new: 4, text: "d" },
    ]);
    expect([added, removed]).toEqual([2, 1]);
  });
});

// Edits are previewed in Rust by the code that makes them (crates/corral-tools
// tests/preview.rs); the UI only carries the answer to the card.
describe("previewOf", () => {
  it("shows check_call's preview as it came, byte for byte", () => {
    const preview = { path: "a.txt", before: "\ufeffone\r\n", after: "\ufefftwo\r\n", diff: "--- a/a.txt\n", base: "absent" };
    expect(previewOf({ decision: "ask", reason: "r", preview }, "./a.txt")).toEqual({
      kind: "diff",
      path: "a.txt",
      before: "\ufeffone\r\n",
      after: "\ufefftwo\r\n",
    });
  });

  it("says why there is none, and has nothing for tools without previews", () => {
    const error: WireError = { code: "no_match", message: "old_string was not found", hint: "", retryable: false, details: {} };
    expect(previewOf({ decision: "ask", reason: "r", preview_error: error }, "a.txt")).toEqual({
      kind: "unavailable",
      path: "a.txt",
      reason: "no_match: old_string was not found",
    });
    expect(previewOf({ decision: "allow" }, "a.txt")).toBeUndefined();
  });
});

describe("OutputBuffer", () => {
  it("joins chunks split mid-line and keeps streams apart", () => {
    const frames: (() => void)[] = [];
    const buffer = new OutputBuffer((run) => frames.push(run));
    buffer.push({ stream: "stdout", data: "hel" });
    buffer.push({ stream: "stderr", data: "warn\n" });
    buffer.push({ stream: "stdout", data: "lo\nworld" });
    expect(frames).toHaveLength(1);
    expect(buffer.lines).toHaveLength(0);
    frames[0]();
    expect(buffer.lines).toEqual([
      { stream: "stdout", text: "hello", sgr: "" },
      { stream: "stderr", text: "warn", sgr: "" },
      { stream: "stdout", text: "world", sgr: "" },
    ]);
    expect(buffer.text()).toBe("hello\nwarn\nworld");
  });
});

describe("ANSI colour across lines", () => {
  const html = (buffer: OutputBuffer, i: number) => {
    const box = document.createElement("div");
    box.innerHTML = ansiLineToHtml(buffer.lines[i].text, buffer.lines[i].sgr);
    return box;
  };

  it("keeps a colour set on one line until it is reset lines later, rendering each line alone", () => {
    const buffer = new OutputBuffer((run) => run());
    buffer.push({ stream: "stdout", data: "\x1b[31mred\nstill red\x1b[0m\nplain" });
    // Out of order, as the virtual list may render them.
    expect(html(buffer, 2).querySelector("[class]")).toBeNull();
    expect(html(buffer, 2).textContent).toBe("plain");
    expect(html(buffer, 1).querySelector(".ansi-red-fg")?.textContent).toBe("still red");
    expect(html(buffer, 0).querySelector(".ansi-red-fg")?.textContent).toBe("red");
  });

  it("carries state per stream, across chunks split mid-sequence and mid-line", () => {
    const buffer = new OutputBuffer((run) => run());
    buffer.push({ stream: "stdout", data: "\x1b[1;3" });
    buffer.push({ stream: "stdout", data: "2mok\n" });
    buffer.push({ stream: "stderr", data: "warning\n" });
    buffer.push({ stream: "stdout", data: "bold green\n" });
    expect(buffer.lines.map((l) => [l.stream, l.sgr])).toEqual([
      ["stdout", ""],
      ["stderr", ""],
      ["stdout", "\x1b[1;32m"],
    ]);
    expect(html(buffer, 2).querySelector(".ansi-green-fg")?.textContent).toBe("bold green");
  });

  it("reduces SGR sequences to the state they leave", () => {
    expect(carrySgr("", "no escapes")).toBe("");
    expect(carrySgr("\x1b[31m", "plain text")).toBe("\x1b[31m");
    expect(carrySgr("\x1b[1;31m", "a\x1b[39mb")).toBe("\x1b[1m");
    expect(carrySgr("", "\x1b[38;5;208;48;2;1;2;3mx")).toBe("\x1b[38;5;208;48;2;1;2;3m");
    expect(carrySgr("\x1b[4;44m", "\x1b[mx")).toBe("");
    expect(carrySgr("", "\x1b[3;2;22m")).toBe("\x1b[3m");
  });

  it("applies the colour of text overwritten by a carriage return", () => {
    expect(ansiLineToHtml("\x1b[33m10%\r50%")).toContain('<span class="ansi-yellow-fg">50%</span>');
  });
});

describe("small helpers", () => {
  it("computes visible rows", () => {
    expect(visibleRange(0, 180, 18, 100_000, 5)).toEqual({ start: 0, end: 15 });
    expect(visibleRange(18_000, 180, 18, 100_000, 5)).toEqual({ start: 995, end: 1015 });
    expect(visibleRange(0, 180, 18, 0)).toEqual({ start: 0, end: 0 });
  });

  it("shows the last redraw of a carriage-return line", () => {
    expect(visibleText("10%\r50%\r100%")).toBe("100%");
    expect(visibleText("done\r")).toBe("done");
  });

  it("names what went wrong with a command that ran", () => {
    const ran: ShellOutput = { command: "x", args: [], stdout: "", stderr: "", exit_code: 0, timed_out: false, duration_ms: 1, stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true };
    expect(exitProblem(ran)).toBeNull();
    expect(exitProblem({ ...ran, exit_code: 101 })).toBe("exit 101");
    expect(exitProblem({ ...ran, exit_code: null, timed_out: true })).toBe("timed out");
    expect(exitProblem(undefined)).toBeNull();
  });

  it("quotes command lines like a shell would show them", () => {
    expect(commandLine({ command: "grep", args: ["-rn", "two words", "src/"] })).toBe("grep -rn 'two words' src/");
  });

  it("says what a call is about from its spec's display hints, never from its name", () => {
    expect(subjectOf(displayOf("read_file"), { path: "src/a.rs", start_line: 3, end_line: 9 })).toBe("src/a.rs:3-9");
    expect(subjectOf(displayOf("search_files"), { query: "TODO", path: "src" })).toBe("TODO in src");
    expect(subjectOf(displayOf("glob"), { pattern: "**/*.rs" })).toBe("**/*.rs");
    expect(subjectOf(displayOf("list_directory"), {})).toBe(".");
    expect(subjectOf(displayOf("exec_shell"), { command: "npm", args: ["test"] })).toBe("npm test");
    expect(subjectOf(displayOf("web_fetch"), { url: "https://docs.rs/x", offset: 50000 })).toBe("https://docs.rs/x");
    expect(resultSummary(displayOf("web_fetch"), { total_chars: 1200, cached: true, truncated: false })).toBe("1200 characters (kept)");
    expect(resultText(displayOf("web_fetch"), { content: "Untrusted web content\n```\n# Docs\n```" })).toBe("Untrusted web content\n```\n# Docs\n```");
    // A server's tool named like one of Corral's is drawn as its server's, from its hints.
    const server = serverDisplay("fs", "read_file");
    expect(subjectOf(server, { path: "src/a.rs", start_line: 3 })).toBe("src/a.rs 3");
    expect(resultSummary(server, { start_line: 1, end_line: 2, total_lines: 2 })).toBe("");
    expect(resultSummary(displayOf("read_file"), { start_line: 1, end_line: 2, total_lines: 2 })).toBe("lines 1–2 of 2");
    expect(resultText(server, { content: "x" })).toBe('{\n  "content": "x"\n}');
    expect(resultText(displayOf("read_file"), { content: "x" })).toBe("x");
    // A card saved before specs carried hints shows its arguments.
    expect(subjectOf(undefined, { path: "a.txt", n: 2 })).toBe("a.txt 2");
  });

  it("sanitizes Markdown and never keeps navigating links", () => {
    const html = renderMarkdown("[site](https://example.org) <script>x()</script>");
    expect(html).not.toContain("<script");
    expect(html).not.toContain("href");
    expect(html).toContain('title="https://example.org"');
  });
});
