// The window's side of src-tauri/src/commands/channels.rs: the app queues
// each Channel message and tells the window, with one script that never
// changes, to come for them; each is handed to its channel as Tauri's own
// script would have (`{ message, index }`: a channel orders its messages
// by index, so drains whose answers cross reorder nothing).
export type Queued = [channel: number, index: number, message: unknown];

export type Internals = { runCallback: (id: number, payload: unknown) => void };

declare global {
  interface Window {
    __corralDrain?: () => void;
    __TAURI_INTERNALS__?: Internals;
  }
}

/** Hands every queued message to its channel. */
export async function drain(come: () => Promise<Queued[]>, internals: Internals): Promise<void> {
  for (const [channel, index, message] of await come()) internals.runCallback(channel, { message, index });
}

/** Installs the drain the app's script calls (`come` asks the app), and drains what was queued before it was there. */
export function installDrain(come: () => Promise<Queued[]>): void {
  const internals = window.__TAURI_INTERNALS__;
  if (!internals) return;
  window.__corralDrain = () => {
    drain(come, internals).catch((error: unknown) => console.error("corral: channel messages lost", error));
  };
  window.__corralDrain();
}
