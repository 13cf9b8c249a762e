import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import type { HookStatus } from "../lib/types";
import HookTrust from "./HookTrust.svelte";

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
    await fireEvent.click(screen.getByTestId("hook-trust-yes"));
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
});
