// docs/ipc.md is the contract with the Rust app. Its command tables and
// commands.ts are generated from the Rust command list (a Rust test checks
// both); this test fails when the client (ipc.ts, with the agent loop's
// commands in agent/agentIpc.ts) leaves a command out, or
// when a type named in docs/ipc.md is missing from types.ts (which
// re-exports the types wire.ts generates from the Rust ones).
import { describe, expect, it } from "vitest";
import contract from "../../../docs/ipc.md?raw";
import { COMMAND_NAMES } from "./commands";
import agentIpcSource from "./agent/agentIpc.ts?raw";
import ipcSource from "./ipc.ts?raw";
import typesOwn from "./types.ts?raw";
import wireSource from "./wire.ts?raw";

const typesSource = `${typesOwn}\n${wireSource}`;

describe("docs/ipc.md", () => {
  it("documents exactly the commands the app registers", () => {
    const documented = contract.split("\n").flatMap((line) => /^\|\s*`(\w+)`\s*\|/.exec(line)?.[1] ?? []);
    expect(documented).toContain("llm_stream");
    expect([...documented].sort()).toEqual([...COMMAND_NAMES].sort());
  });

  it("has every registered command called by a function of ipc.ts or agentIpc.ts", () => {
    const called = new Set([...`${ipcSource}\n${agentIpcSource}`.matchAll(/\bcall\("(\w+)"/g)].map((m) => m[1]));
    expect(COMMAND_NAMES.filter((name) => !called.has(name))).toEqual([]);
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
