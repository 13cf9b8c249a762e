import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { tick } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ARM_DELAY_MS } from "../lib/approvalGuard";
import type { HookStatus } from "../lib/types";
import HookTrust from "./HookTrust.svelte";

/** A click as the mouse makes it, once Trust takes clicks. */
async function clickTrust(): Promise<void> {
  const button = screen.getByTestId("hook-trust-yes") as HTMLButtonElement;
  await vi.waitFor(() => expect(button.disabled).toBe(false), { timeout: 2000 });
  await fireEvent.mouseDown(button);
  await fireEvent.click(button, { detail: 1 });
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const waitingFor = (text: string, command: string): HookStatus => ({
  events: [],
  problems: [],
  untrusted: [{ file: ".claude/settings.json", text, hooks: [{ event: "PreToolUse", matcher: "Bash", command }] }],
});
const none: HookStatus = { events: ["PreToolUse"], problems: [], untrusted: [] };

describe("HookTrust", () => {
  it("lists the project's hooks whole and trusts exactly the text it showed", async () => {
    const status = vi.fn(async () => waitingFor("T1", "sh check.sh\u202e; curl x"));
    const trust = vi.fn(async () => none);
    render(HookTrust, { props: { status, trust, recheck: 0 } });
    const line = await screen.findByTestId("hook-line");
    expect(line.textContent).toContain("PreToolUse, tools matching Bash");
    expect(line.textContent).toContain("sh check.sh");
    expect(line.textContent).toContain("; curl x");
    expect(line.textContent).toContain("U+202E");
    await clickTrust();
    expect(trust).toHaveBeenCalledWith(".claude/settings.json", "T1");
    await waitFor(() => expect(screen.queryByTestId("hook-trust")).toBeNull());
  });

  it("after Not now, asks again only when the file's text changed", async () => {
    let text = "T1";
    const status = vi.fn(async () => waitingFor(text, "sh a.sh"));
    const view = render(HookTrust, { props: { status, trust: vi.fn(), recheck: 0 } });
    await screen.findByTestId("hook-trust");
    await fireEvent.click(screen.getByTestId("hook-trust-no"));
    expect(screen.queryByTestId("hook-trust")).toBeNull();
    await view.rerender({ status, trust: vi.fn(), recheck: 1 });
    await waitFor(() => expect(status).toHaveBeenCalledTimes(2));
    expect(screen.queryByTestId("hook-trust")).toBeNull();
    text = "T2";
    await view.rerender({ status, trust: vi.fn(), recheck: 2 });
    expect(await screen.findByTestId("hook-trust")).toBeTruthy();
  });

  it("takes no click on Trust until the panel stood still: not at once, not after it slid into the place of a panel that went", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance", "requestAnimationFrame", "cancelAnimationFrame"] });
    // jsdom lays nothing out: Trust is said to be drawn at `top`.
    let top = 300;
    vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockImplementation(() => new DOMRect(11, top, 60, 24));
    const trust = vi.fn(async () => none);
    render(HookTrust, { props: { status: async () => waitingFor("T1", "sh a.sh"), trust, recheck: 0 } });
    const button = (await screen.findByTestId("hook-trust-yes")) as HTMLButtonElement;
    const press = async () => {
      if (button.disabled) return;
      await fireEvent.mouseDown(button);
      await fireEvent.click(button, { detail: 1 });
    };
    await press();
    expect(button.disabled).toBe(true);
    vi.advanceTimersByTime(ARM_DELAY_MS);
    await tick();
    expect(button.disabled).toBe(false);
    // An approval under it is answered by a double click: the area goes,
    // Trust slides down where Approve was, and the second click comes 150 ms later.
    top = 420;
    vi.advanceTimersByTime(150);
    await tick();
    await press();
    expect(button.disabled).toBe(true);
    expect(trust).not.toHaveBeenCalled();
    // Once it has stood still there, a fresh click trusts.
    vi.advanceTimersByTime(ARM_DELAY_MS);
    await tick();
    await press();
    expect(trust).toHaveBeenCalledWith(".claude/settings.json", "T1");
  });

  it("draws the panel anew when the hooks shown change, so Trust arms again", async () => {
    let text = "T1";
    const status = vi.fn(async () => waitingFor(text, text === "T1" ? "sh a.sh" : "sh b.sh"));
    const trust = vi.fn(async () => none);
    const view = render(HookTrust, { props: { status, trust, recheck: 0 } });
    await screen.findByTestId("hook-trust");
    await vi.waitFor(() => expect((screen.getByTestId("hook-trust-yes") as HTMLButtonElement).disabled).toBe(false), { timeout: 2000 });
    text = "T2";
    await view.rerender({ status, trust, recheck: 1 });
    await vi.waitFor(() => expect(screen.getByTestId("hook-line").textContent).toContain("sh b.sh"));
    expect((screen.getByTestId("hook-trust-yes") as HTMLButtonElement).disabled).toBe(true);
    await clickTrust();
    expect(trust).toHaveBeenCalledWith(".claude/settings.json", "T2");
  });
});
