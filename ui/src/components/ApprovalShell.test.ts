import { fireEvent, render, screen } from "@testing-library/svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToolItem } from "../lib/agent/state";
import { ARM_DELAY_MS } from "../lib/approvalGuard";
import ApprovalDock from "./ApprovalDock.svelte";

const shell: ToolItem = { kind: "tool", id: "c1", callId: "t1", name: "exec_shell", input: { command: "npm", args: ["test", "--", "--watch=false"] }, risk: "shell", status: "waiting", reason: "commands need approval" };

function dock(item: Partial<ToolItem> = {}) {
  const onDecide = vi.fn();
  render(ApprovalDock, { props: { item: { ...shell, ...item }, root: "/p/app", onDecide } });
  return { onDecide };
}

async function armedClick(testid: string): Promise<void> {
  const button = screen.getByTestId(testid) as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false));
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

afterEach(() => vi.useRealTimers());

describe("ApprovalDock for a command", () => {
  it("offers to always allow the rule it would save, and once with the network", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { onDecide } = dock();
    expect(screen.getByTestId("approve-always").textContent).toBe("Always allow “npm test” in this project");
    expect(screen.queryByTestId("approval-network")).toBeNull();
    vi.advanceTimersByTime(ARM_DELAY_MS);
    await armedClick("approve-always");
    await armedClick("approve-network");
    expect(onDecide.mock.calls.map((c) => c[0])).toEqual(["always", "network"]);
  });

  it("names the network when the call asks for it, and offers no second network button", () => {
    dock({ input: { command: "npm", args: ["ci"] }, network: true });
    expect(screen.getByTestId("approval-network").textContent).toContain("runs with the network");
    expect(screen.getByTestId("approve-once").textContent).toBe("Approve once, with network");
    expect(screen.queryByTestId("approve-network")).toBeNull();
  });

  it("offers neither to other tools", () => {
    dock({ name: "write_file", input: { path: "a.txt", content: "x" }, risk: "write" });
    expect(screen.queryByTestId("approve-always")).toBeNull();
    expect(screen.queryByTestId("approve-network")).toBeNull();
  });
});
