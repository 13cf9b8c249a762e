import { describe, expect, it } from "vitest";
import { describeGrant, grantChoicesOf, offeredPattern, parsePattern, patternText } from "./grants";
import type { Grant, Ticket } from "./types";

const command = (command: string, args: string[], more: boolean): Extract<Grant, { kind: "command" }> => ({ kind: "command", command, args, more });

// As Rust sends them for `node -e console.log(1)`: its argv, then the
// program and its first words, each followed by any further arguments.
const COVERING: Grant[] = [
  command("node", ["-e", "console.log(1)"], false),
  command("node", [], true),
  command("node", ["-e"], true),
  command("node", ["-e", "console.log(1)"], true),
];

describe("grants", () => {
  it("keeps the ticket's choices, those it has, for the card", () => {
    const ticket: Ticket = {
      ticket: "t",
      decision: "ask",
      reason: "writes ask",
      exact_grant: { kind: "path", tool: "write_file", path: "src/a.js" },
      grant_folders: ["src", "."],
    };
    expect(grantChoicesOf(ticket)).toEqual({ exact_grant: ticket.exact_grant, grant_folders: ["src", "."] });
    expect(grantChoicesOf({ ticket: "t", decision: "ask", reason: "secret", one_at_a_time: true })).toBeUndefined();
    const link = grantChoicesOf({ ticket: "t", decision: "ask", reason: "r", grant_link: "vendor/pkg", grant_folders: ["."] });
    expect(link).toEqual({ grant_link: "vendor/pkg", grant_folders: ["."] });
  });

  it("reads a pattern as words and a last * for any further arguments, and writes it back", () => {
    expect(parsePattern("cargo  test *")).toEqual(command("cargo", ["test"], true));
    expect(parsePattern("cargo * test")).toEqual(command("cargo", ["*", "test"], false));
    expect(parsePattern("   ")).toBeUndefined();
    expect(patternText(command("node", ["-e"], true))).toBe("node -e *");
    expect(patternText(command("node", ["-e", "x"], false))).toBe("node -e x");
  });

  it("offers an edited pattern only when it is one Rust says covers the call", () => {
    const offered = (text: string) => {
      const parsed = parsePattern(text);
      return parsed && offeredPattern(parsed, COVERING);
    };
    expect(offered("node -e *")).toEqual(command("node", ["-e"], true));
    expect(offered("node  -e console.log(1)")).toEqual(command("node", ["-e", "console.log(1)"], false));
    expect(offered("node *")).toEqual(command("node", [], true));
    expect(offered("node -e")).toBeUndefined();
    expect(offered("node -x *")).toBeUndefined();
    expect(offered("npm *")).toBeUndefined();
    expect(offered("node -e console.log(1) x")).toBeUndefined();
    expect(offeredPattern(command("node", [], true), undefined)).toBeUndefined();
  });

  it("says what each grant covers", () => {
    expect(describeGrant(command("node", ["-e", "console.log(1)"], false))).toBe("the command node -e console.log(1)");
    expect(describeGrant(command("cargo", ["test"], true))).toBe("commands starting with cargo test");
    expect(describeGrant({ kind: "folder", tool: "write_file", folder: "src" })).toBe("write_file in src/");
    expect(describeGrant({ kind: "folder", tool: "write_file", folder: "." })).toBe("write_file anywhere in the project");
    expect(describeGrant({ kind: "path", tool: "edit_file", path: "a.txt" })).toBe("edit_file on a.txt");
    expect(describeGrant({ kind: "call", tool: "srv__tool", input: {} })).toBe("srv__tool with exactly the input shown");
  });
});
