// Desktop notifications: when a reply finishes or an approval waits while
// the window is not focused, the app shows one (the `notify_user` command,
// with the app's own words; the `notifications` setting turns them off).
import type { AgentState } from "./agent/state";
import { ipc } from "./ipc";
import type { Readable } from "./store";
import type { Notice } from "./types";

export type NoticeDeps = {
  /** Shows the notification (Rust checks the setting too). */
  notify: (notice: Notice) => Promise<unknown>;
  /** Whether the user wants them (the `notifications` setting). */
  enabled: () => Promise<boolean>;
  /** Whether the window has the focus: then nothing is shown. */
  focused: () => boolean;
};

const real: NoticeDeps = {
  notify: (notice) => ipc.notifyUser(notice),
  enabled: async () => (await ipc.getSettings()).notifications,
  focused: () => document.hasFocus(),
};

const waiting = (state: AgentState): number => state.items.filter((i) => i.kind === "tool" && i.status === "waiting").length;

/** Follows the agent's state: a run that ends, or one more call waiting for approval, notifies when the window is not focused. Returns the unsubscriber. */
export function watchNotices(state: Readable<AgentState>, deps: NoticeDeps = real): () => void {
  let busy = state.get().busy;
  let approvals = waiting(state.get());
  const send = (notice: Notice): void => {
    if (deps.focused()) return;
    void deps
      .enabled()
      .then((on) => (on ? deps.notify(notice) : undefined))
      .catch(() => undefined);
  };
  return state.subscribe((now) => {
    const waits = waiting(now);
    if (waits > approvals) send("approval");
    else if (busy && !now.busy) send("finished");
    busy = now.busy;
    approvals = waits;
  });
}
