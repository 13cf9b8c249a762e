import { render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import ToolCard from "./ToolCard.svelte";
import { displayOf } from "../test/fakeIpc";

const base: ToolItem = { kind: "tool", id: "c1", callId: "t1", name: "exec_shell", display: displayOf("exec_shell"), input: { command: "npm", args: ["run", "dev"], background: true }, risk: "shell", status: "done" };

describe("ToolCard for the shell's grants", () => {
  it("a command started in the background points to Processes, with no exit problem", () => {
    render(ToolCard, { props: { item: { ...base, result: { run_id: "bg-1", command: "npm", args: ["run", "dev"] } }, onStopCommand: vi.fn() } });
    expect(screen.getByTestId("tool-background").textContent).toContain("Processes");
    expect(screen.getByTestId("tool-status").textContent).not.toContain("exit");
  });

  it("names the rule that let a call through, and a refused connection", () => {
    const result = { command: "npm", args: ["ci"], stdout: "", stderr: "EAI_AGAIN", exit_code: 1, timed_out: false, duration_ms: 5, stdout_truncated_bytes: 0, stderr_truncated_bytes: 0, profile: "build", sandbox: "namespaces", sandboxed: true, network_refused: "`npm` ran without the network" };
    render(ToolCard, { props: { item: { ...base, input: { command: "npm", args: ["test"] }, rule: "npm test", result }, onStopCommand: vi.fn() } });
    expect(screen.getByTestId("tool-rule").textContent).toContain("npm test");
    expect(screen.getByTestId("network-refused").textContent).toContain("without the network");
  });
});
