// Whether the path a grant would name reaches its place through a link.
// Rust holds a grant for a file or a folder only where its name leads
// there itself (`vendor/pkg -> ..` makes `vendor/pkg/src/greet.js` the
// project's own `src/greet.js`: refused "through a link"), and a folder
// only when the call's path really lies inside it. So where a link lies on
// the way, "Allow in this conversation" offers neither that file alone nor
// any of its folders, only the whole project. The chooser looks once, with
// `list_directory` as the file tree does; Rust judges again when it holds
// the grant, so a link made after the look is still refused.
import type { DirEntry } from "./types";

/** A folder's entries, one level (`list_directory` of `.` for the project). */
export type Lister = (folder: string) => Promise<{ entries: DirEntry[]; truncated?: boolean }>;

/** The path's parts as its text names them: `.` and empty parts gone, `..` climbing (as folderChoices reads it). */
function partsOf(path: string): string[] {
  const parts: string[] = [];
  for (const part of path.split(/[/\\]/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return parts;
}

/**
 * The first part of `path` that is a link (`vendor/pkg`), null when none
 * is (the rest not created yet counts as none), undefined when it could
 * not be told (a folder not listed whole, a listing refused).
 */
export async function linkOnPath(path: string, list: Lister): Promise<string | null | undefined> {
  const parts = partsOf(path);
  for (let n = 1; n <= parts.length; n++) {
    const folder = n === 1 ? "." : parts.slice(0, n - 1).join("/");
    const here = parts.slice(0, n).join("/");
    let listing: Awaited<ReturnType<Lister>>;
    try {
      listing = await list(folder);
    } catch {
      return undefined;
    }
    const entry = listing.entries.find((e) => e.path === here);
    if (entry === undefined) return listing.truncated ? undefined : null;
    if (entry.kind === "symlink") return here;
    if (entry.kind !== "dir") return null;
  }
  return null;
}
