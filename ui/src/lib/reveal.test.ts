import { describe, expect, it } from "vitest";
import { isHidden, isPlain, reveal, revealed } from "./reveal";
// The same table crates/corral-mcp/src/question.rs tests the MCP question with.
import table from "./reveal.cases.json?raw";

/** A string of the table: itself, or pieces with `[text, count]` for `text` repeated `count` times. */
type Spelled = string | (string | [string, number])[];
type Case = { what: string; text: Spelled; shown: Spelled };

function spell(value: Spelled): string {
  return typeof value === "string" ? value : value.map((p) => (typeof p === "string" ? p : p[0].repeat(p[1]))).join("");
}

const cases = (JSON.parse(table) as { cases: Case[] }).cases;

describe("reveal", () => {
  it.each(cases.map((c) => [c.what, spell(c.text), spell(c.shown)]))("%s", (_what, text, shown) => {
    expect(revealed(text)).toBe(shown);
  });

  it("the table covers every general category", () => {
    const categories = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"];
    const tested = cases.flatMap((c) => Array.from(spell(c.text)));
    for (const category of categories) expect(tested.some((c) => new RegExp(`^\\p{gc=${category}}$`, "u").test(c)), category).toBe(true);
  });

  it("a lone surrogate (Cs) is a marker", () => {
    expect(revealed("a\uD800b")).toBe("a⟨U+D800⟩b");
    expect(revealed("\uDFFF\uDFFF")).toBe("⟨U+DFFF ×2⟩");
  });

  it("draws a letter, number, punctuation, symbol or space as it is, and nothing else", () => {
    for (const char of ["a", " ", "7", "-", "€", "\u{1F600}"]) expect(isHidden(char)).toBe(false);
    for (const char of ["\t", "\n", "\u00A0", "\u0378", "\uFDD0", "\uFFFE", "\u{10FFFF}", "\u20DD", "\uFFFC", "\u{1D159}", "\u3164"]) expect(isHidden(char)).toBe(true);
  });

  it("a diff row's trailing CR is a line end; elsewhere it is a lone CR", () => {
    expect(revealed("x\r", true)).toBe("x␍");
    expect(revealed("x\r")).toBe("x⟨U+000D⟩");
  });

  it("a row with a blank-drawn symbol is not drawn as plain text", () => {
    expect(isPlain("let x = 1; // ok")).toBe(true);
    expect(isPlain("let 名 = '😀';")).toBe(true);
    expect(isPlain("a\uFFFCb")).toBe(false);
    expect(isPlain("a\u{1D159}b")).toBe(false);
    expect(isPlain("a\u0378b")).toBe(false);
  });

  it("says what each marker stands for", () => {
    expect(reveal("a\u202Eb\nc")).toEqual([
      { text: "a" },
      { text: "⟨U+202E⟩", mark: "U+202E right-to-left override" },
      { text: "b" },
      { text: "↵", mark: "U+000A line feed" },
      { text: "\nc" },
    ]);
    expect(reveal("\u2800\u2800\u2800")).toEqual([{ text: "⟨U+2800 ×3⟩", mark: "3 × U+2800 braille pattern blank" }]);
    expect(reveal("\uFFFC".repeat(8000))).toEqual([{ text: "⟨U+FFFC ×8000⟩", mark: "8000 × U+FFFC object replacement character" }]);
    expect(reveal("\u0378")).toEqual([{ text: "⟨U+0378⟩", mark: "U+0378 unassigned" }]);
    expect(reveal("\uFDD0")).toEqual([{ text: "⟨U+FDD0⟩", mark: "U+FDD0 noncharacter" }]);
    expect(reveal("\uE000")).toEqual([{ text: "⟨U+E000⟩", mark: "U+E000 private use" }]);
  });
});
