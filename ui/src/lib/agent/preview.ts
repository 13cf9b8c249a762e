// The would-be change of a write, edit or delete, computed in the UI before
// the call runs: current content (via read_file) against the new content.
import { isWireError } from "../errors";
import type { ReadFileOutput } from "../types";
import type { Preview } from "./state";

export type ReadTool = (input: Record<string, unknown>) => Promise<unknown>;

/** Large files are read in windows; previews stop after this many. */
const MAX_WINDOWS = 50;

/** The whole text of `path`, or null when it does not exist yet. */
export async function readWhole(read: ReadTool, path: string): Promise<string | null> {
  let content = "";
  let start = 1;
  for (let window = 0; window < MAX_WINDOWS; window++) {
    let out: ReadFileOutput;
    try {
      out = (await read({ path, start_line: start })) as ReadFileOutput;
    } catch (error) {
      if (isWireError(error) && error.code === "not_found") return null;
      throw error;
    }
    content += out.content;
    if (!out.truncated || out.end_line >= out.total_lines || out.end_line < start) return content;
    start = out.end_line + 1;
  }
  throw new Error(`\`${path}\` is too large to preview`);
}

type EditResult = { ok: true; after: string } | { ok: false; reason: string };

/** Applies edit_file's old→new replacement the way the tool will. */
export function applyEdit(content: string, oldString: string, newString: string, replaceAll: boolean): EditResult {
  let from = oldString;
  let to = newString;
  // The tool keeps CRLF files CRLF; match a LF old_string against them too.
  if (!content.includes(from) && content.includes("\r\n") && !from.includes("\r\n")) {
    from = from.replace(/\n/g, "\r\n");
    to = to.replace(/\n/g, "\r\n");
  }
  if (from === "") return { ok: false, reason: "old_string is empty" };
  const count = content.split(from).length - 1;
  if (count === 0) return { ok: false, reason: "old_string does not occur in the file; the edit will fail" };
  if (count > 1 && !replaceAll) {
    return { ok: false, reason: `old_string occurs ${count} times; the edit will fail without replace_all` };
  }
  return { ok: true, after: replaceAll ? content.split(from).join(to) : content.replace(from, () => to) };
}

export function hasPreview(tool: string): boolean {
  return tool === "write_file" || tool === "edit_file" || tool === "delete_file";
}

export async function computePreview(read: ReadTool, tool: string, input: Record<string, unknown>): Promise<Preview> {
  const path = String(input.path ?? "");
  let before: string | null;
  try {
    before = await readWhole(read, path);
  } catch (error) {
    const why = isWireError(error) ? `${error.code}: ${error.message}` : String(error);
    return { kind: "unavailable", path, reason: `Could not read the current content (${why})` };
  }
  if (tool === "write_file") return { kind: "diff", path, before: before ?? "", after: String(input.content ?? "") };
  if (tool === "delete_file") {
    if (before === null) return { kind: "unavailable", path, reason: "The file does not exist" };
    return { kind: "diff", path, before, after: "" };
  }
  if (before === null) return { kind: "unavailable", path, reason: "The file does not exist; the edit will fail" };
  const edit = applyEdit(before, String(input.old_string ?? ""), String(input.new_string ?? ""), input.replace_all === true);
  return edit.ok ? { kind: "diff", path, before, after: edit.after } : { kind: "unavailable", path, reason: edit.reason };
}
