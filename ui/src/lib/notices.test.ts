// When a desktop notification is sent: a run that ends or an approval that
// waits while the window is not focused, and only with the setting on.
import { describe, expect, it, vi } from "vitest";
import { emptyState, type AgentState, type ToolItem } from "./agent/state";
import { watchNotices } from "./notices";
import { writable } from "./store";

const waitingCall = (id: string): ToolItem => ({ kind: "tool", id, name: "exec_shell", input: {}, status: "waiting" }) as unknown as ToolItem;

function setup(focused: boolean, enabled = true) {
  const state = writable<AgentState>(emptyState());
  const notify = vi.fn(async () => true);
  const stop = watchNotices(state, { notify, enabled: async () => enabled, focused: () => focused });
  const set = (change: Partial<AgentState>): void => state.set({ ...state.get(), ...change });
  return { notify, set, stop };
}

describe("notifications", () => {
  it("says the agent finished and that an approval waits, when the window is not focused", async () => {
    const { notify, set } = setup(false);
    set({ busy: true });
    expect(notify).not.toHaveBeenCalled();
    set({ items: [waitingCall("a")] });
    await vi.waitFor(() => expect(notify).toHaveBeenCalledWith("approval"));
    set({ items: [waitingCall("a")] });
    set({ busy: false, items: [] });
    await vi.waitFor(() => expect(notify).toHaveBeenCalledWith("finished"));
    expect(notify.mock.calls).toEqual([["approval"], ["finished"]]);
  });

  it("sends nothing while the window is focused", async () => {
    const { notify, set } = setup(true);
    set({ busy: true });
    set({ items: [waitingCall("a")] });
    set({ busy: false });
    await new Promise((r) => setTimeout(r, 10));
    expect(notify).not.toHaveBeenCalled();
  });

  it("sends nothing when the setting is off, or once unsubscribed", async () => {
    const off = setup(false, false);
    off.set({ busy: true });
    off.set({ busy: false });
    const gone = setup(false);
    gone.stop();
    gone.set({ busy: true });
    gone.set({ busy: false });
    await new Promise((r) => setTimeout(r, 10));
    expect(off.notify).not.toHaveBeenCalled();
    expect(gone.notify).not.toHaveBeenCalled();
  });
});
