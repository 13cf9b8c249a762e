import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import DiffView from "./DiffView.svelte";

const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");
const texts = (): (string | undefined)[] => screen.getAllByTestId("diff-row").map((r) => r.querySelector(".text")?.textContent ?? undefined);

describe("DiffView", () => {
  it("never cuts silently: states the size, shows the rest a page at a time, says when all is drawn", async () => {
    const onWhole = vi.fn();
    render(DiffView, { props: { path: "big.txt", before: "", after: lines(25), page: 10, whole: true, onWhole } });
    // 25 added rows and the hunk header.
    expect(screen.getByTestId("diff-size").textContent).toBe("26 rows, first 10 shown");
    expect(screen.getByTestId("diff-more").textContent).toContain("16 more rows not shown yet.");
    expect(texts()).toHaveLength(9);
    expect(onWhole).toHaveBeenLastCalledWith(false);
    await fireEvent.click(screen.getByTestId("diff-show-more"));
    expect(screen.getByTestId("diff-size").textContent).toBe("26 rows, first 20 shown");
    expect(onWhole).toHaveBeenLastCalledWith(false);
    await fireEvent.click(screen.getByTestId("diff-show-all"));
    expect(screen.getByTestId("diff-size").textContent).toBe("26 rows");
    expect(screen.queryByTestId("diff-more")).toBeNull();
    expect(texts().at(-1)).toBe("+line 25");
    expect(onWhole).toHaveBeenLastCalledWith(true);
  });

  it("marks what a row hides: a long run of spaces, a lone CR, a line separator, bidi controls", () => {
    const after = [`count = 10${" ".repeat(400)}import("node:fs")`, "// note\rrun()", "// note\u2028run()", 'if (a != "user\u202E \u2066// admin\u2069 \u2066") {', "ok\r"].join("\n") + "\n";
    render(DiffView, { props: { path: "a.js", before: "", after } });
    expect(texts()).toEqual([
      '+count = 10⟨400 spaces⟩import("node:fs")',
      "+// note⟨U+000D⟩run()",
      "+// note⟨U+2028⟩run()",
      '+if (a != "user⟨U+202E⟩ ⟨U+2066⟩// admin⟨U+2069⟩ ⟨U+2066⟩") {',
      "+ok␍",
    ]);
  });

  it("marks a file name's hidden characters in its header", () => {
    render(DiffView, { props: { path: "invoice\u202Etxt.exe", before: "", after: "x\n" } });
    expect(screen.getByTestId("diff").querySelector(".path")?.textContent).toBe("invoice⟨U+202E⟩txt.exe");
  });
});
