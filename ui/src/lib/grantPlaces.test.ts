// Where a link lies on the way of a path a grant would name: each of its
// folders looked up in its parent's listing, in order, stopping at the
// first link, at a part not created yet, or when it cannot be told.
import { describe, expect, it, vi } from "vitest";
import { type Lister, linkOnPath } from "./grantPlaces";
import type { DirEntry } from "./types";

/** A project's folders: each folder's entries, by the folder's path. */
function project(folders: Record<string, DirEntry[]>, truncated: string[] = []): Lister & { mock: { calls: unknown[][] } } {
  return vi.fn(async (folder: string) => {
    const entries = folders[folder];
    if (entries === undefined) throw new Error(`no folder ${folder}`);
    return { entries, truncated: truncated.includes(folder) };
  });
}
const dir = (path: string): DirEntry => ({ path, kind: "dir" });
const file = (path: string): DirEntry => ({ path, kind: "file", size: 1 });
const link = (path: string): DirEntry => ({ path, kind: "symlink" });

describe("linkOnPath", () => {
  it("names the first link on the way (`vendor/pkg -> ..`) and looks no further", async () => {
    const list = project({ ".": [dir("src"), dir("vendor")], vendor: [link("vendor/pkg")] });
    expect(await linkOnPath("vendor/pkg/src/greet.js", list)).toBe("vendor/pkg");
    expect(list.mock.calls.map((c) => c[0])).toEqual([".", "vendor"]);
  });

  it("reads the path as its text names it (`.`, `..`, backslashes), as the folders offered are", async () => {
    const list = project({ ".": [dir("vendor")], vendor: [link("vendor/pkg")] });
    expect(await linkOnPath("./vendor/x/../pkg\\src/greet.js", list)).toBe("vendor/pkg");
  });

  it("names the file itself when it is a link", async () => {
    const list = project({ ".": [link("notes.txt")] });
    expect(await linkOnPath("notes.txt", list)).toBe("notes.txt");
  });

  it("finds none through real folders, to a file or to a part not created yet", async () => {
    const list = project({ ".": [dir("src")], src: [dir("src/lib"), file("src/greet.js")], "src/lib": [] });
    expect(await linkOnPath("src/greet.js", list)).toBeNull();
    expect(await linkOnPath("src/lib/new/deep.js", list)).toBeNull();
    expect(await linkOnPath("src/greet.js/x", list)).toBeNull();
  });

  it("cannot tell when a listing is cut or refused", async () => {
    expect(await linkOnPath("big/x.js", project({ ".": [dir("a")] }, ["."]))).toBeUndefined();
    expect(await linkOnPath("src/x.js", project({ ".": [dir("src")] }))).toBeUndefined();
  });
});
