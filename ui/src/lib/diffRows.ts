// A unified diff as rows with old and new line numbers, from jsdiff.
import { structuredPatch } from "diff";

export type DiffRow =
  | { kind: "hunk"; text: string }
  | { kind: "context" | "add" | "del"; old: number | null; new: number | null; text: string };

export type DiffView = { rows: DiffRow[]; added: number; removed: number };

export function diffRows(before: string, after: string, context = 3): DiffView {
  const patch = structuredPatch("before", "after", before, after, undefined, undefined, { context });
  const rows: DiffRow[] = [];
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    rows.push({ kind: "hunk", text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@` });
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    for (const line of hunk.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === " ") rows.push({ kind: "context", old: oldNo++, new: newNo++, text });
      else if (mark === "-") {
        rows.push({ kind: "del", old: oldNo++, new: null, text });
        removed++;
      } else if (mark === "+") {
        rows.push({ kind: "add", old: null, new: newNo++, text });
        added++;
      }
      // "\ No newline at end of file" carries no content of its own.
    }
  }
  return { rows, added, removed };
}
