// What a browser gives the agent loop and QuickJS does not: timers,
// crypto.randomUUID, TextEncoder (the loop only measures UTF-8 lengths) and
// a console. Timers are the host's, so a cleared one ends at once and
// leaves nothing for the engine to wait on.
import type { Host } from "./host";

type Timer = { cleared: boolean };

/** UTF-8 bytes of `text`, as TextEncoder.encode gives them. */
export function utf8(text: string): Uint8Array {
  const bytes: number[] = [];
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
  }
  return Uint8Array.from(bytes);
}

/** Puts what is missing on `scope` (globalThis in the engine), over `host`. */
export function installGlobals(host: Host, scope: Record<string, unknown>): void {
  const timers = new Map<number, Timer>();
  let next = 1;
  scope.setTimeout = (run: () => void, ms = 0, ...args: unknown[]): number => {
    const id = next++;
    const timer: Timer = { cleared: false };
    timers.set(id, timer);
    void host.timer(id, Math.max(0, Number(ms) || 0)).then(() => {
      timers.delete(id);
      if (!timer.cleared) run(...(args as []));
    });
    return id;
  };
  scope.clearTimeout = (id: number | undefined): void => {
    const timer = id === undefined ? undefined : timers.get(id);
    if (!timer) return;
    timer.cleared = true;
    host.clearTimer(id as number);
  };
  if (typeof scope.queueMicrotask !== "function") {
    scope.queueMicrotask = (run: () => void) => void Promise.resolve().then(run);
  }
  const crypto = (scope.crypto ?? {}) as Record<string, unknown>;
  crypto.randomUUID = () => host.uuid();
  scope.crypto = crypto;
  if (typeof scope.TextEncoder !== "function") {
    scope.TextEncoder = class {
      encode(text = ""): Uint8Array {
        return utf8(text);
      }
    };
  }
  // The loop logs nothing it needs; a stray log must not end up on stdout.
  const quiet = () => undefined;
  scope.console ??= { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet };
}
