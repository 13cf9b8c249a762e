import { describe, expect, it } from "vitest";
import type { Item, ToolItem } from "./agent/state";
import { countsAt, describeCounts, problemsOf, reportOf } from "./problems";
import type { FileDiagnostics } from "./types";
import { displayOf } from "../test/fakeIpc";

const file = (path: string, errors: number, warnings = 0): FileDiagnostics => ({
  path,
  errors,
  warnings,
  diagnostics: Array.from({ length: errors }, (_, i) => ({ line: i + 1, column: 1, severity: "error" as const, message: "bad" })),
});

let n = 0;
const tool = (name: string, result: unknown, input: Record<string, unknown> = {}): Item => {
  const item: ToolItem = { kind: "tool", id: `t${++n}`, callId: `c${n}`, name, display: displayOf(name), input, risk: "write", status: "done", result };
  return item;
};

describe("problems", () => {
  it("reads a write's diagnostics and the diagnostics tool's report, nothing else", () => {
    expect(reportOf(displayOf("edit_file"), { diff: "", diagnostics: { files: [file("a.ts", 1)] } })?.files).toHaveLength(1);
    expect(reportOf(displayOf("diagnostics"), { files: [file("a.ts", 0)], notes: ["x"] })?.notes).toEqual(["x"]);
    expect(reportOf(displayOf("read_file"), { content: "x" })).toBeNull();
    expect(reportOf(displayOf("write_file"), { diagnostics: "nope" })).toBeNull();
    expect(reportOf(displayOf("write_file"), null)).toBeNull();
  });

  it("keeps the newest word on each file: a fix clears it, a delete forgets it", () => {
    const items = [
      tool("edit_file", { diagnostics: { files: [file("src/a.ts", 2)] } }),
      tool("write_file", { diagnostics: { files: [file("src/b.ts", 1, 1)] } }),
      tool("diagnostics", { files: [file("lib/c.py", 0, 3)] }),
      tool("edit_file", { diagnostics: { files: [file("src/a.ts", 0)] } }),
      tool("write_file", { diagnostics: { files: [file("gone.ts", 1)] } }),
      tool("delete_file", {}, { path: "gone.ts" }),
    ];
    const problems = problemsOf(items);
    expect([...problems.keys()].sort()).toEqual(["lib/c.py", "src/b.ts"]);
    expect(countsAt(problems, "src", true)).toEqual({ errors: 1, warnings: 1 });
    expect(countsAt(problems, ".", true)).toEqual({ errors: 1, warnings: 4 });
    expect(countsAt(problems, "src/b.ts", false)).toEqual({ errors: 1, warnings: 1 });
    expect(countsAt(problems, "sr", true)).toEqual({ errors: 0, warnings: 0 });
  });

  it("says the counts in words", () => {
    expect(describeCounts({ errors: 1, warnings: 2 })).toBe("1 error, 2 warnings");
    expect(describeCounts({ errors: 0, warnings: 1 })).toBe("1 warning");
    expect(describeCounts({ errors: 0, warnings: 0 })).toBe("no problems");
  });
});
