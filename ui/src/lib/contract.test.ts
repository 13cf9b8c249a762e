// docs/ipc.md is the contract with the Rust app. This test fails when a
// command or type named there is missing from ipc.ts / types.ts.
import { describe, expect, it } from "vitest";
import contract from "../../../docs/ipc.md?raw";
import ipcSource from "./ipc.ts?raw";
import typesSource from "./types.ts?raw";

describe("docs/ipc.md", () => {
  it("has every command it lists wrapped in ipc.ts", () => {
    const firstCells = contract.split("\n").flatMap((line) => /^\|\s*(`[^|]+)\|/.exec(line)?.[1] ?? []);
    const commands = firstCells.flatMap((cell) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]));
    // The file tools go through the generic callTool(name, input).
    const tools = new Set(firstCells.filter((cell) => cell.includes(",")).flatMap((cell) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1])));
    expect(commands).toContain("llm_stream");
    const missing = commands.filter((name) => !tools.has(name) && !ipcSource.includes(`"${name}"`));
    expect(missing).toEqual([]);
  });

  it("has every type it declares in types.ts", () => {
    const declared = [...contract.matchAll(/^type (\w+)/gm)].map((m) => m[1]);
    expect(declared.length).toBeGreaterThan(10);
    expect(declared).toContain("LlmEvent");
    const missing = declared.filter((name) => !new RegExp(`export type ${name}\\b`).test(typesSource));
    expect(missing).toEqual([]);
  });

  it("has every LlmEvent variant handled by types.ts", () => {
    const variants = [...contract.matchAll(/\{ type: "(\w+)"/g)].map((m) => m[1]);
    for (const variant of variants) expect(typesSource).toContain(`type: "${variant}"`);
  });
});
