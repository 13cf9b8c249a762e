// No module imports one that imports it back: the UI's modules form a
// graph without cycles, so each can be read (and tested) from the bottom up.
import { describe, expect, it } from "vitest";

const sources = import.meta.glob("/src/**/*.{ts,svelte}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** The project files `file` imports (relative imports only; packages are leaves). */
function importsOf(file: string, source: string): string[] {
  const dir = file.slice(0, file.lastIndexOf("/"));
  const specifiers = [...source.matchAll(/(?:import|export)\s[^;]*?from\s+["'](\.[^"'?]+)["']|import\(\s*["'](\.[^"'?]+)["']\s*\)/g)].map((m) => m[1] ?? m[2]);
  return specifiers.flatMap((spec) => {
    const parts = `${dir}/${spec}`.split("/");
    const path: string[] = [];
    for (const part of parts) {
      if (part === "..") path.pop();
      else if (part !== ".") path.push(part);
    }
    const base = path.join("/");
    const found = [base, `${base}.ts`, `${base}/index.ts`].find((candidate) => candidate in sources);
    // A component that renders itself (a tree node) is recursion, not a cycle.
    return found && found !== file ? [found] : [];
  });
}

/** The first cycle found, as the list of files around it, or null. */
export function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "open") return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe("imports", () => {
  const graph = new Map(Object.entries(sources).map(([file, source]) => [file, importsOf(file, source)]));

  it("are read from every module", () => {
    expect(graph.size).toBeGreaterThan(20);
    expect(graph.get("/src/lib/agent/loop.ts")).toContain("/src/lib/agent/ports.ts");
  });

  it("finds a cycle when there is one", () => {
    const cyclic = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
    ]);
    expect(findCycle(cyclic)).toEqual(["a", "b", "c", "a"]);
    expect(findCycle(new Map([["a", ["b"]], ["b", []]]))).toBeNull();
  });

  it("have no cycle", () => {
    expect(findCycle(graph)).toBeNull();
  });
});
