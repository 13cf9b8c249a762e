import { describe, expect, it } from "vitest";
import { describeGrant, exactGrant, folderChoices, parsePattern, patternCovers, proposedPattern } from "./grants";
import { displayOf, serverDisplay } from "../test/fakeIpc";

const writeFile = { name: "write_file", display: displayOf("write_file") };

const node = { name: "exec_shell", display: displayOf("exec_shell"), input: { command: "node", args: ["-e", "console.log(1)"] } };

describe("grants", () => {
  it("grants a call exactly: its argv, its path, or its input", () => {
    expect(exactGrant(node)).toEqual({ kind: "command", command: "node", args: ["-e", "console.log(1)"], more: false });
    expect(exactGrant({ ...writeFile, input: { path: "notes.txt", content: "x" } })).toEqual({ kind: "path", tool: "write_file", path: "notes.txt" });
    // A server's tool is granted call by call, whatever its arguments are called (its spec says whose it is).
    expect(exactGrant({ name: "srv__tool", input: { path: "x" }, display: serverDisplay("srv", "tool") })).toEqual({ kind: "call", tool: "srv__tool", input: { path: "x" } });
    expect(exactGrant({ name: "pathless", input: { path: "x" }, display: serverDisplay("srv", "pathless") })).toEqual({ kind: "call", tool: "pathless", input: { path: "x" } });
  });

  it("offers a path's own folders, nearest first, then the project", () => {
    expect(folderChoices({ ...writeFile, input: { path: "./src/lib/../ui/a.js" } })).toEqual(["src/ui", "src", "."]);
    expect(folderChoices({ ...writeFile, input: { path: "notes.txt" } })).toEqual(["."]);
    expect(folderChoices(node)).toEqual([]);
  });

  it("reads a pattern as words and a last * for any further arguments", () => {
    expect(parsePattern("cargo  test *")).toEqual({ kind: "command", command: "cargo", args: ["test"], more: true });
    expect(parsePattern("cargo * test")).toEqual({ kind: "command", command: "cargo", args: ["*", "test"], more: false });
    expect(parsePattern("   ")).toBeUndefined();
    expect(proposedPattern(node)).toBe("node -e *");
    expect(proposedPattern({ name: "exec_shell", display: displayOf("exec_shell"), input: { command: "npm", args: ["test", "--", "x"] } })).toBe("npm test *");
  });

  it("judges coverage as Rust does: the words as a prefix, or the whole argv", () => {
    const wide = parsePattern("node -e *");
    const exact = parsePattern("node -e console.log(1)");
    if (!wide || !exact) throw new Error("parsed");
    expect(patternCovers(wide, node)).toBe(true);
    expect(patternCovers(exact, node)).toBe(true);
    expect(patternCovers(exact, { name: "exec_shell", display: displayOf("exec_shell"), input: { command: "node", args: ["-e", "console.log(1)", "x"] } })).toBe(false);
    expect(patternCovers(wide, { name: "exec_shell", display: displayOf("exec_shell"), input: { command: "npm", args: ["-e"] } })).toBe(false);
    expect(patternCovers(wide, { name: "write_file", input: { path: "a" } })).toBe(false);
  });

  it("says what each grant covers", () => {
    expect(describeGrant(exactGrant(node))).toBe("the command node -e console.log(1)");
    expect(describeGrant({ kind: "command", command: "cargo", args: ["test"], more: true })).toBe("commands starting with cargo test");
    expect(describeGrant({ kind: "folder", tool: "write_file", folder: "src" })).toBe("write_file in src/");
    expect(describeGrant({ kind: "folder", tool: "write_file", folder: "." })).toBe("write_file anywhere in the project");
    expect(describeGrant({ kind: "path", tool: "edit_file", path: "a.txt" })).toBe("edit_file on a.txt");
  });
});
