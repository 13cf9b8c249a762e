// Parts of the window that are not on its first screen (the file viewer, the
// command palette) live in their own chunks: imported the first time they
// are needed, or earlier when the browser has nothing else to do, so that
// opening them does not wait.

/** A module imported once, on the first `load()`; a failed import is tried again on the next. */
export type Lazy<T> = { load: () => Promise<T> };

export function lazy<T>(importer: () => Promise<T>): Lazy<T> {
  let loading: Promise<T> | null = null;
  return {
    load() {
      loading ??= importer().catch((error: unknown) => {
        loading = null;
        throw error;
      });
      return loading;
    },
  };
}

/**
 * Runs `work` when the browser is idle (after at most `within` ms), or after
 * a short pause where there is no idle callback. Returns what cancels it.
 */
export function whenIdle(work: () => void, within = 2000): () => void {
  if (typeof requestIdleCallback === "function") {
    const handle = requestIdleCallback(() => work(), { timeout: within });
    return () => cancelIdleCallback(handle);
  }
  const timer = setTimeout(work, 200);
  return () => clearTimeout(timer);
}

/** Imports `part` when the browser is idle (a failure is left to the first real use). Returns what cancels it. */
export function preload(part: Lazy<unknown>): () => void {
  return whenIdle(() => void part.load().catch(() => {}));
}
