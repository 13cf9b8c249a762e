// What a conversation changed in the project: from the checkpoint taken
// before its first change to the project as it is now.
import { forkCheckpoint, type CheckpointIpc } from "./checkpoints";
import type { Comparison } from "./types";

/**
 * The files changed since the conversation's first change, given its user
 * messages in order (`turns`); null when it changed none (no checkpoint
 * belongs to its turns).
 */
export async function conversationChanges(ipc: CheckpointIpc, turns: string[]): Promise<Comparison | null> {
  if (turns.length === 0) return null;
  const list = await ipc.listCheckpoints();
  const first = forkCheckpoint(list, turns, turns[0], "edit");
  return first ? ipc.compareCheckpoints(first.id) : null;
}

/** The paths a comparison lists, for marking them (the tree). */
export function changedPaths(comparison: Comparison | null): Set<string> {
  return new Set((comparison?.changes ?? []).map((change) => change.path));
}
