// A tiny observable value. It follows Svelte's store contract (subscribe
// calls back at once and returns an unsubscriber), so components can read it
// with `$store`, while the agent loop stays free of framework imports.

export interface Readable<T> {
  subscribe(run: (value: T) => void): () => void;
  get(): T;
}

export interface Writable<T> extends Readable<T> {
  set(value: T): void;
  update(change: (value: T) => T): void;
}

export function writable<T>(initial: T): Writable<T> {
  let value = initial;
  const subscribers = new Set<(value: T) => void>();
  return {
    get: () => value,
    subscribe(run) {
      subscribers.add(run);
      run(value);
      return () => subscribers.delete(run);
    },
    set(next) {
      value = next;
      for (const run of [...subscribers]) run(value);
    },
    update(change) {
      this.set(change(value));
    },
  };
}
