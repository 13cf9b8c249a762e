// docs/ipc.md is the contract with the Rust app. This test fails when a
// command or type named there is missing from ipc.ts / types.ts (which
// re-exports the types wire.ts generates from the Rust ones).
import { describe, expect, it } from "vitest";
import contract from "../../../docs/ipc.md?raw";
import ipcSource from "./ipc.ts?raw";
import typesOwn from "./types.ts?raw";
import wireSource from "./wire.ts?raw";

const typesSource = `${typesOwn}\n${wireSource}`;

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
    const exported = (name: string) => new RegExp(`export type ${name}\\b`).test(wireSource) ? new RegExp(`\\b${name},`).test(typesOwn) : new RegExp(`export type ${name}\\b`).test(typesOwn);
    const missing = declared.filter((name) => !exported(name));
    expect(missing).toEqual([]);
  });

  it("has every LlmEvent variant handled by types.ts", () => {
    const variants = [...contract.matchAll(/\{ type: "(\w+)"/g)].map((m) => m[1]);
    for (const variant of variants) expect(typesSource).toMatch(new RegExp(`"?type"?: "${variant}"`));
  });
});
