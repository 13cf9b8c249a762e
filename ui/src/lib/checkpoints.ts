// The project's checkpoints as the window offers them: "Restore to here" on
// each user turn (its first checkpoint: the state before the turn changed
// anything) and on each card of a call that changed something (the
// checkpoint taken just before it), and a summary of what each turn did.
import { writable, type Readable } from "svelte/store";
import { toWireError } from "./errors";
import type { ChangeCounts, Checkpoint, Comparison, WireError } from "./types";

export type CheckpointIpc = {
  listCheckpoints: () => Promise<Checkpoint[]>;
  compareCheckpoints: (from: string, to?: string) => Promise<Comparison>;
};

/** The checkpoint before the first change of `turn` (a user message's id). */
export function turnStart(list: Checkpoint[], turn: string): Checkpoint | undefined {
  return list.find((c) => c.turn === turn);
}

/** The checkpoint taken just before the call shown by card `callId`. */
export function beforeCall(list: Checkpoint[], callId: string): Checkpoint | undefined {
  return list.find((c) => c.call_id === callId);
}

/** The first checkpoint of the turn after `turn`: where its changes end (none: they go on to now). */
export function turnEnd(list: Checkpoint[], turn: string): Checkpoint | undefined {
  const start = list.findIndex((c) => c.turn === turn);
  if (start < 0) return undefined;
  return list.slice(start + 1).find((c) => c.turn !== turn);
}

/**
 * The checkpoint a fork from user message `turn` can take the files back to,
 * given the conversation's user messages in order (`turns`): for "edit"
 * (the fork ends before the message) the first checkpoint of it or of a
 * later message; for "here" (it ends after the work the message started)
 * the first of a later message. None: the conversation changed no file
 * after that point, so there is nothing to offer.
 */
export function forkCheckpoint(list: Checkpoint[], turns: string[], turn: string, mode: "edit" | "here"): Checkpoint | undefined {
  const at = turns.indexOf(turn);
  if (at < 0) return undefined;
  const after = new Set(turns.slice(mode === "edit" ? at : at + 1));
  return list.find((c) => c.turn !== undefined && after.has(c.turn));
}

/** "3 files changed, 1 created, 1 deleted"; "no files changed". */
export function describeCounts(counts: ChangeCounts): string {
  const total = counts.added + counts.modified + counts.removed;
  if (total === 0) return "no files changed";
  const parts = [`${total} ${total === 1 ? "file" : "files"} changed`];
  if (counts.added > 0) parts.push(`${counts.added} created`);
  if (counts.removed > 0) parts.push(`${counts.removed} deleted`);
  return parts.join(", ");
}

/** What a restore changes, in its own direction: "2 files changed back, 1 brought back, 1 removed". */
export function describeRestore(counts: ChangeCounts): string {
  const parts: string[] = [];
  if (counts.modified > 0) parts.push(`${counts.modified} ${counts.modified === 1 ? "file" : "files"} changed back`);
  if (counts.added > 0) parts.push(`${counts.added} brought back`);
  if (counts.removed > 0) parts.push(`${counts.removed} removed`);
  return parts.length === 0 ? "nothing to change" : parts.join(", ");
}

export type CheckpointState = {
  list: Checkpoint[];
  /** What each turn changed, by turn id, once compared. */
  summaries: Record<string, Comparison>;
  error: WireError | null;
};

/** The checkpoint list, refreshed after calls and restores, and each turn's summary. */
export class Checkpoints {
  private readonly store = writable<CheckpointState>({ list: [], summaries: {}, error: null });
  readonly state: Readable<CheckpointState> = this.store;
  /** Comparisons already made, by "from→to" (a turn that ended does not change). */
  private readonly compared = new Map<string, Comparison>();
  private refreshing: Promise<void> | null = null;
  private again = false;

  constructor(private readonly ipc: CheckpointIpc) {}

  /** Lists the checkpoints again and summarizes the turns (one refresh at a time; the last word wins). */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again);
      this.refreshing = null;
    })();
    return this.refreshing;
  }

  private async load(): Promise<void> {
    let list: Checkpoint[];
    try {
      list = await this.ipc.listCheckpoints();
    } catch (e) {
      this.store.update((s) => ({ ...s, error: toWireError(e) }));
      return;
    }
    this.store.update((s) => ({ ...s, list, error: null }));
    const summaries: Record<string, Comparison> = {};
    const turns = [...new Set(list.flatMap((c) => (c.turn ? [c.turn] : [])))];
    for (const turn of turns) {
      const start = turnStart(list, turn);
      if (!start) continue;
      const end = turnEnd(list, turn);
      const key = `${start.id}→${end?.id ?? "now"}`;
      let comparison = end ? this.compared.get(key) : undefined;
      if (!comparison) {
        try {
          comparison = await this.ipc.compareCheckpoints(start.id, end?.id);
        } catch {
          continue; // a checkpoint collected meanwhile: no summary for it
        }
        if (end) this.compared.set(key, comparison);
      }
      summaries[turn] = comparison;
    }
    this.store.update((s) => ({ ...s, summaries }));
  }
}
