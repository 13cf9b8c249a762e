import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import type { ShellOutput } from "../lib/types";
import { OutputBuffer } from "../lib/outputBuffer";
import { displayOf, shellCancelled } from "../test/fakeIpc";
import ToolCard from "./ToolCard.svelte";

const base: ToolItem = { kind: "tool", id: "c1", callId: "t1", name: "read_file", input: { path: "src/lib.rs" }, risk: "read", status: "queued" };

/** A finished exec_shell result: exit 0, nothing dropped, unless overridden. */
function shellResult(over: Partial<ShellOutput> & Pick<ShellOutput, "command" | "args">): ShellOutput {
  return { stdout: "", stderr: "", exit_code: 0, timed_out: false, duration_ms: 900, stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true, ...over };
}

function card(item: Partial<ToolItem>) {
  const onStopCommand = vi.fn();
  const name = item.name ?? base.name;
  const view = render(ToolCard, { props: { item: { ...base, display: displayOf(name), ...item }, onStopCommand } });
  return { ...view, onStopCommand, root: screen.getByTestId("tool-card") };
}

describe("ToolCard", () => {
  it("says which hook blocked a call, changed its input or added context, with every character of its command", () => {
    const { root } = card({
      name: "write_file",
      input: { path: "drafts/a.md", content: "x" },
      modelInput: { path: "a.md", content: "x" },
      status: "done",
      result: { path: "drafts/a.md" },
      hooks: [
        { event: "PreToolUse", kind: "modified", by: "sh .claude/hooks/move.sh" },
        { event: "PostToolUse", kind: "context", by: "sh .claude/hooks/after.sh\u202e", text: "a.md is generated" },
      ],
    });
    const notes = [...root.querySelectorAll("[data-testid=tool-hooks] li")].map((li) => li.textContent?.replace(/\s+/g, " ").trim());
    expect(notes[0]).toBe('Input changed by the PreToolUse hook sh .claude/hooks/move.sh; the model asked for {"path":"a.md","content":"x"}');
    expect(notes[1]).toContain("Context added by the PostToolUse hook sh .claude/hooks/after.sh");
    expect(notes[1]).toContain("a.md is generated");
    // The bidi control in the command is marked, not obeyed.
    expect(notes[1]).toContain("U+202E");
  });

  it("says which hook blocked a call and why", () => {
    const blocked = card({ name: "exec_shell", status: "denied", reason: "Blocked by the hook `no-rm.sh`: not here", hooks: [{ event: "PreToolUse", kind: "blocked", by: "no-rm.sh", text: "not here" }] }).root;
    expect(blocked.querySelector("[data-testid=tool-hooks] li")?.getAttribute("data-kind")).toBe("blocked");
    expect(blocked.textContent).toContain("Blocked by the PreToolUse hook no-rm.sh: not here");
  });

  it("shows tool, subject and status as attributes", () => {
    const { root } = card({ status: "done", result: { path: "src/lib.rs", content: "fn main() {}\n", start_line: 1, end_line: 1, total_lines: 1, truncated: false } });
    expect(root.dataset.tool).toBe("read_file");
    expect(root.dataset.status).toBe("done");
    expect(root.textContent).toContain("src/lib.rs");
    expect(root.textContent).toContain("lines 1–1 of 1");
    expect(root.querySelector("pre.result")?.textContent).toContain("fn main() {}");
  });

  it("has no approval controls while it waits: it points at the approval area, and shows the diff once answered", async () => {
    const item: ToolItem = {
      ...base,
      name: "write_file",
      input: { path: "a.txt", content: "one\nTWO\n" },
      risk: "write",
      status: "waiting",
      reason: "writes need approval",
      preview: { kind: "diff", path: "a.txt", before: "one\ntwo\n", after: "one\nTWO\n" },
    };
    const { root, rerender } = card(item);
    expect(root.dataset.status).toBe("waiting");
    expect(root.querySelectorAll("button")).toHaveLength(0);
    expect(root.querySelector(".waiting-note")?.textContent).toBe("Waiting for your answer below the conversation.");
    expect(screen.queryByTestId("diff")).toBeNull();
    await rerender({ item: { ...item, status: "done", result: { path: "a.txt", bytes: 8, created: false } } });
    expect(screen.getByTestId("diff").querySelector(".add")?.textContent).toContain("+TWO");
  });

  it("shows hidden characters of its subject as markers", () => {
    const { root } = card({ name: "delete_file", display: displayOf("delete_file"), input: { path: "invoice\u202Etxt.exe" }, risk: "write", status: "done", result: {} });
    expect(root.querySelector(".subject")?.textContent).toBe("invoice⟨U+202E⟩txt.exe");
    expect(root.querySelector(".subject .mark")?.getAttribute("title")).toBe("U+202E right-to-left override");
  });

  it("shows a failed call's code, message and hint", () => {
    card({
      status: "failed",
      error: { code: "path_outside_root", message: "`../x` resolves outside the project folder", hint: "Use a path inside the project.", retryable: false, details: {} },
    });
    expect(screen.getByTestId("tool-card").dataset.status).toBe("failed");
    expect(screen.getByTestId("error-code").textContent).toBe("path_outside_root");
    expect(screen.getByTestId("error-message").textContent).toBe("../x resolves outside the project folder");
    expect(screen.getByTestId("error-message").querySelector("code")?.textContent).toBe("../x");
    expect(screen.getByTestId("error-hint").textContent).toContain("Use a path inside the project.");
  });

  it("shows a denial without approval buttons", () => {
    card({ name: "write_file", status: "denied", reason: "You denied this call." });
    expect(screen.getByTestId("tool-card").dataset.status).toBe("denied");
    expect(screen.queryByTestId("approve-once")).toBeNull();
    expect(screen.getByTestId("tool-card").textContent).toContain("You denied this call.");
  });

  it("renders a finished command from its result after a restart", () => {
    card({
      name: "exec_shell", display: displayOf("exec_shell"),
      input: { command: "cargo", args: ["test"] },
      status: "done",
      result: shellResult({ command: "cargo", args: ["test"], stdout: "ok\n", exit_code: 101, duration_ms: 1500 }),
    });
    const panel = screen.getByTestId("command-panel");
    expect(panel.dataset.exitCode).toBe("101");
    expect(screen.getByTestId("command-output").textContent).toContain("ok");
    expect(screen.queryByTestId("command-stop")).toBeNull();
  });

  it("shows the end of a huge output from the result once the app stopped streaming it", async () => {
    const output = new OutputBuffer((run) => run());
    output.push({ stream: "stdout", data: "x".repeat(100) + "\n" });
    output.push({ stream: "stdout", data: "\n[live output stopped after 8 MiB; the result keeps the first and last 64 KiB of each stream]\n" });
    const result = shellResult({ command: "node", args: ["big.js"], stdout: "x\n[… 12582912 bytes dropped …]\nTHE END\n", stdout_truncated_bytes: 12_582_912 });
    const { rerender } = render(ToolCard, {
      props: { item: { ...base, name: "exec_shell", display: displayOf("exec_shell"), input: { command: "node", args: ["big.js"] }, status: "running" }, output, onStopCommand: vi.fn() },
    });
    expect(screen.getByTestId("command-output").textContent).toContain("live output stopped");
    await rerender({ item: { ...base, name: "exec_shell", display: displayOf("exec_shell"), input: { command: "node", args: ["big.js"] }, status: "done", result }, output, onStopCommand: vi.fn() });
    expect(screen.getByTestId("command-output").textContent).toContain("THE END");
  });

  it("keeps the live output of a finished command that was streamed whole", () => {
    const output = new OutputBuffer((run) => run());
    output.push({ stream: "stdout", data: "every line\n" });
    const result = shellResult({ command: "ls", args: [], stdout: "every line\n", duration_ms: 5 });
    render(ToolCard, { props: { item: { ...base, name: "exec_shell", display: displayOf("exec_shell"), input: { command: "ls", args: [] }, status: "done", result }, output, onStopCommand: vi.fn() } });
    expect(output.cut).toBe(false);
    expect(screen.getByTestId("command-output").textContent).toContain("every line");
  });

  it("shows a command stopped by the user with its partial output and run time after a restart", () => {
    const input = { command: "cargo", args: ["build"] };
    const { root } = card({ name: "exec_shell", display: displayOf("exec_shell"), input, risk: "shell", status: "cancelled", error: shellCancelled(input, "", "Compiling corral\n", 4200) });
    expect(root.dataset.status).toBe("cancelled");
    expect(screen.getByTestId("tool-status").textContent).toBe("cancelled");
    expect(screen.getByTestId("command-stopped").textContent).toBe("stopped");
    expect(screen.getByTestId("command-panel").textContent).toContain("after 4.20 s");
    expect(screen.getByTestId("command-output").textContent).toContain("Compiling corral");
    expect(screen.queryByTestId("error-code")).toBeNull();
    expect(screen.queryByTestId("command-stop")).toBeNull();
  });

  it("shows a call cancelled before it ran as cancelled, without a command panel", () => {
    const { root } = card({ name: "exec_shell", display: displayOf("exec_shell"), input: { command: "ls" }, risk: "shell", status: "cancelled", error: { code: "cancelled", message: "Cancelled by the user.", hint: "", retryable: false, details: {} } });
    expect(root.dataset.status).toBe("cancelled");
    expect(root.textContent).toContain("Cancelled by the user.");
    expect(screen.queryByTestId("command-panel")).toBeNull();
    expect(screen.queryByTestId("error-code")).toBeNull();
  });

  it("marks a command that exited non-zero with a warning, not as failed", () => {
    const { root } = card({
      name: "exec_shell", display: displayOf("exec_shell"),
      input: { command: "npm", args: ["test"] },
      risk: "shell",
      status: "done",
      result: shellResult({ command: "npm", args: ["test"], stderr: "1 failing\n", exit_code: 1 }),
    });
    expect(root.dataset.status).toBe("done");
    const status = screen.getByTestId("tool-status");
    expect(status.textContent).toBe("exit 1");
    expect(status.classList.contains("warn")).toBe(true);
    expect(root.classList.contains("exit-problem")).toBe(true);
    expect(screen.getByTestId("exit-code").classList.contains("warn")).toBe(true);
    expect(screen.queryByTestId("error-code")).toBeNull();
  });

  it("shows a command that exited 0 as done", () => {
    const { root } = card({
      name: "exec_shell", display: displayOf("exec_shell"),
      input: { command: "npm", args: ["test"] },
      risk: "shell",
      status: "done",
      result: shellResult({ command: "npm", args: ["test"], stdout: "ok\n" }),
    });
    expect(screen.getByTestId("tool-status").textContent).toBe("done");
    expect(screen.getByTestId("tool-status").classList.contains("ok")).toBe(true);
    expect(root.classList.contains("exit-problem")).toBe(false);
  });
});
