// The slash commands as the box's completion and the palette list them.
// The command files restate, in our own words, Claude Code's documented
// kinds: a description and an argument hint in the front matter, a body
// with $ARGUMENTS or $1 $2, and one with no front matter at all.
import { describe, expect, it } from "vitest";
import { builtInOf } from "./agent/builtIns";
import { completeWith, matching, menuEntries, slashQuery } from "./slashMenu";
import type { CommandFile } from "./types";

const file = (source: CommandFile["source"], relative: string, text: string): CommandFile => ({ source, relative, path: relative, text });

const LISTING = {
  commands: [
    file("project", "tracker/fix-bug.md", "---\ndescription: Fix a bug from the tracker\nargument-hint: [number] [priority]\n---\nFix bug #$1 (priority $2)."),
    file("project", "review.md", "Review the staged changes for mistakes.\n"),
    file("user", "review.md", "---\ndescription: My own review\n---\nReview."),
    file("user", "compact.md", "---\ndescription: A command named like a built-in\n---\nx"),
    file("codex", "draft.md", "---\ndescription: Draft a plan\nargument-hint: <topic>\n---\nDraft $ARGUMENTS."),
  ],
};

describe("the slash menu", () => {
  it("lists the built-ins, then the project's, the user's and Codex's commands with description and hint", () => {
    const entries = menuEntries(LISTING);
    expect(entries.slice(0, 8).map((e) => [e.name, e.kind])).toEqual([
      ["compact", "built-in"],
      ["new", "built-in"],
      ["model", "built-in"],
      ["undo", "built-in"],
      ["changes", "built-in"],
      ["settings", "built-in"],
      ["task", "built-in"],
      ["usage", "built-in"],
    ]);
    expect(entries.slice(8)).toEqual([
      { name: "tracker:fix-bug", description: "Fix a bug from the tracker", argumentHint: "[number] [priority]", kind: "project" },
      { name: "review", description: "Review the staged changes for mistakes.", kind: "project" },
      { name: "review", description: "My own review", kind: "user", shadowed: true },
      { name: "compact", description: "A command named like a built-in", kind: "user", shadowed: true },
      { name: "prompts:draft", description: "Draft a plan", argumentHint: "<topic>", kind: "codex" },
    ]);
    expect(menuEntries(null).map((e) => e.name)).toEqual(["compact", "new", "model", "undo", "changes", "settings", "task", "usage"]);
  });

  it("shows what the typed name starts with first, then what it fuzzily matches", () => {
    const entries = menuEntries(LISTING);
    expect(matching(entries, "c").map((e) => e.name).slice(0, 3)).toEqual(["compact", "changes", "compact"]);
    expect(matching(entries, "fix")[0].name).toBe("tracker:fix-bug");
    expect(matching(entries, "tr:fb").map((e) => e.name)).toContain("tracker:fix-bug");
    expect(matching(entries, "zzz")).toEqual([]);
  });

  it("opens only while the first word is being typed", () => {
    expect(slashQuery("/", 1)).toBe("");
    expect(slashQuery("/tra", 4)).toBe("tra");
    expect(slashQuery("/tracker:fix-bug 12", 19)).toBeNull();
    expect(slashQuery("please /compact", 15)).toBeNull();
    expect(slashQuery("/src/app.ts is odd", 3)).toBeNull();
  });

  it("completes the name and keeps what followed it", () => {
    expect(completeWith("/tra", "tracker:fix-bug")).toEqual({ text: "/tracker:fix-bug ", caret: 17 });
    expect(completeWith("/tr 123 high", "tracker:fix-bug")).toEqual({ text: "/tracker:fix-bug 123 high", caret: 17 });
  });
});

describe("a built-in typed as text", () => {
  it("is one only by its exact name and with nothing after it", () => {
    expect(builtInOf("/compact")?.name).toBe("compact");
    expect(builtInOf("  /new  ")?.name).toBe("new");
    expect(builtInOf("/compact now please")).toBeNull();
    expect(builtInOf("/compacted")).toBeNull();
    expect(builtInOf("compact")).toBeNull();
  });
});
