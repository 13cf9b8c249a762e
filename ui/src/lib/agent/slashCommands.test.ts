import { describe, expect, it } from "vitest";
import { commandName, expandCommand, parseCommand, parseInvocation, splitArguments } from "./slashCommands";

// The command files below restate, in our own words, the kinds of examples
// Claude Code's documentation gives: a plain prompt, one using all the
// arguments, one using positional ones, and one with every front matter key.

describe("command names", () => {
  it("are the file's name, with each subfolder as a prefix", () => {
    expect(commandName("speedup.md", "project")).toBe("speedup");
    expect(commandName("web/check.md", "user")).toBe("web:check");
    expect(commandName("draft.md", "codex")).toBe("prompts:draft");
  });

  it("refuse what is not a Markdown file or climbs out", () => {
    expect(commandName("notes.txt", "project")).toBeNull();
    expect(commandName("../up.md", "project")).toBeNull();
    expect(commandName("two words.md", "project")).toBeNull();
    expect(commandName(".md", "project")).toBeNull();
  });
});

describe("front matter", () => {
  const commit = [
    "---",
    "allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)",
    "argument-hint: [message]",
    'description: "Record the staged work as a commit"',
    "model: small-fast-model",
    "---",
    "",
    "Look at the staged changes and commit them with the message: $ARGUMENTS",
  ].join("\n");

  it("gives every key Claude Code documents and the body after it", () => {
    expect(parseCommand("commit.md", "project", ".claude/commands/commit.md", commit)).toEqual({
      name: "commit",
      source: "project",
      path: ".claude/commands/commit.md",
      allowedTools: ["Bash(git add:*)", "Bash(git status:*)", "Bash(git commit:*)"],
      argumentHint: "[message]",
      description: "Record the staged work as a commit",
      model: "small-fast-model",
      body: "Look at the staged changes and commit them with the message: $ARGUMENTS",
    });
  });

  it("reads a tool list written as YAML lines or in brackets", () => {
    expect(parseCommand("a.md", "project", "a.md", "---\nallowed-tools:\n  - Read\n  - Grep\n---\nbody")?.allowedTools).toEqual(["Read", "Grep"]);
    expect(parseCommand("a.md", "project", "a.md", "---\nallowed-tools: [Read, 'Bash(ls:*, cat:*)']\n---\nbody")?.allowedTools).toEqual(["Read", "Bash(ls:*, cat:*)"]);
  });
});

describe("expansion", () => {
  it("puts all the arguments where $ARGUMENTS stands", () => {
    expect(expandCommand("Fix bug #$ARGUMENTS the way our guide says.", "123 urgent")).toBe("Fix bug #123 urgent the way our guide says.");
  });

  it("puts each argument where its number stands, quotes grouping words", () => {
    expect(expandCommand("Review change $1 at priority $2 for $3.", '456 high "Ana Lima"')).toBe("Review change 456 at priority high for Ana Lima.");
    expect(expandCommand("Only $1 and $2.", "one")).toBe("Only one and .");
  });

  it("keeps arguments a body does not ask for, on a line after it", () => {
    expect(expandCommand("Find slow loops in this code.\n", "src/main.rs")).toBe("Find slow loops in this code.\n\nARGUMENTS: src/main.rs");
    expect(expandCommand("Find slow loops in this code.", "  ")).toBe("Find slow loops in this code.");
  });

  it("does not read a dollar amount or a longer name as a placeholder", () => {
    expect(expandCommand("Costs $ARGUMENTSX and $0.", "5")).toBe("Costs $ARGUMENTSX and $0.\n\nARGUMENTS: 5");
  });
});

describe("invocations", () => {
  it("split the name from the arguments", () => {
    expect(parseInvocation("/web:check  src/app.ts now")).toEqual({ name: "web:check", args: "src/app.ts now" });
    expect(parseInvocation("/compact")).toEqual({ name: "compact", args: "" });
  });

  it("are only text that starts with a slash and a name", () => {
    expect(parseInvocation("please /compact")).toBeNull();
    expect(parseInvocation("/")).toBeNull();
    expect(parseInvocation("/etc/passwd is odd")).toBeNull();
  });

  it("split quoted arguments as one", () => {
    expect(splitArguments(`a "b c" 'd e' f`)).toEqual(["a", "b c", "d e", "f"]);
  });
});
