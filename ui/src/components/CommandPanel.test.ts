import { fireEvent, render, screen } from "@testing-library/svelte";
import { tick } from "svelte";
import { describe, expect, it, vi } from "vitest";
import { OutputBuffer } from "../lib/outputBuffer";
import type { ShellOutput } from "../lib/types";
import CommandPanel from "./CommandPanel.svelte";

const result = (over: Partial<ShellOutput> = {}): ShellOutput => ({
  command: "npm", args: ["test"], stdout: "", stderr: "", exit_code: 0, timed_out: false, duration_ms: 2300,
  stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true, ...over,
});

describe("CommandPanel", () => {
  it("streams live output, renders ANSI colours, escapes HTML, and stops", async () => {
    const buffer = new OutputBuffer((run) => run());
    const onStop = vi.fn();
    render(CommandPanel, { props: { input: { command: "npm", args: ["test"] }, buffer, running: true, onStop } });
    buffer.push({ stream: "stdout", data: "\x1b[32mPASS\x1b[0m src/a.test.ts\n<script>alert(1)</script>\n" });
    await tick();
    const output = screen.getByTestId("command-output");
    const green = output.querySelector(".ansi-green-fg");
    expect(green?.textContent).toBe("PASS");
    expect(output.querySelector("script")).toBeNull();
    expect(output.textContent).toContain("<script>alert(1)</script>");
    expect(screen.getByTestId("command-panel").dataset.exitCode).toBeUndefined();
    await fireEvent.click(screen.getByTestId("command-stop"));
    expect(onStop).toHaveBeenCalledOnce();
  });

  it("keeps a colour across lines until it is reset", async () => {
    const buffer = new OutputBuffer((run) => run());
    render(CommandPanel, { props: { input: { command: "make", args: [] }, buffer, running: true, onStop: () => {} } });
    buffer.push({ stream: "stdout", data: "\x1b[31mred\nstill red\x1b[0m\nplain\n" });
    await tick();
    const lines = [...screen.getByTestId("command-output").querySelectorAll(".line")];
    expect(lines.map((l) => l.querySelector(".ansi-red-fg")?.textContent ?? null)).toEqual(["red", "still red", null]);
    expect(lines[2].textContent).toBe("plain");
  });

  it("shows exit code, duration, timed-out and truncation badges", () => {
    const out = result({ exit_code: 1, timed_out: true, stderr: "boom\n", stderr_truncated_bytes: 4096 });
    render(CommandPanel, { props: { input: { command: "npm", args: ["test"] }, buffer: OutputBuffer.fromResult(out), result: out, running: false, onStop: () => {} } });
    const panel = screen.getByTestId("command-panel");
    expect(panel.dataset.exitCode).toBe("1");
    expect(panel.textContent).toContain("exit 1");
    expect(panel.textContent).toContain("2.30 s");
    expect(panel.textContent).toContain("timed out");
    expect(panel.textContent).toContain("4096 bytes dropped");
    expect(panel.textContent).toContain("$ npm test");
    expect(screen.queryByTestId("command-stop")).toBeNull();
  });

  it("keeps 100k lines out of the DOM except the visible rows", async () => {
    const buffer = new OutputBuffer((run) => run());
    render(CommandPanel, { props: { input: { command: "cargo", args: ["build"] }, buffer, running: true, onStop: () => {} } });
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`).join("\n") + "\n";
    for (let i = 0; i < 100; i++) buffer.push({ stream: "stdout", data: lines.slice(i * (lines.length / 100), (i + 1) * (lines.length / 100)) });
    await tick();
    expect(buffer.lines).toHaveLength(100_000);
    expect(buffer.lines[99_999].text).toBe("line 99999");
    const rows = screen.getByTestId("command-output").querySelectorAll(".line");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(100);
    expect(screen.getByTestId("command-panel").textContent).toContain("100000 lines");
  });

  it("collapses and expands the output", async () => {
    render(CommandPanel, { props: { input: { command: "ls", args: [] }, buffer: OutputBuffer.fromResult(result({ stdout: "a\nb\n" })), result: result(), running: false, onStop: () => {} } });
    const toggle = screen.getByRole("button", { name: "Collapse" });
    await fireEvent.click(toggle);
    expect(screen.queryByTestId("command-output")).toBeNull();
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    await fireEvent.click(toggle);
    expect(screen.getByTestId("command-output").textContent).toContain("b");
  });
});
