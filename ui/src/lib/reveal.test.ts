import { describe, expect, it } from "vitest";
import { reveal, revealed } from "./reveal";

describe("reveal", () => {
  it.each([
    ["plain text", "src/main.rs", "src/main.rs"],
    ["a right-to-left override", "invoice\u202Etxt.exe", "invoice⟨U+202E⟩txt.exe"],
    ["every bidi control", "a\u202Ab\u202Bc\u202Cd\u202De\u2066f\u2067g\u2068h\u2069i\u200Ej\u200Fk\u061Cl", "a⟨U+202A⟩b⟨U+202B⟩c⟨U+202C⟩d⟨U+202D⟩e⟨U+2066⟩f⟨U+2067⟩g⟨U+2068⟩h⟨U+2069⟩i⟨U+200E⟩j⟨U+200F⟩k⟨U+061C⟩l"],
    ["zero-width and odd spaces", "r\u200Bm\u00A0-\u2003rf\uFEFF", "r⟨U+200B⟩m⟨U+00A0⟩-⟨U+2003⟩rf⟨U+FEFF⟩"],
    ["C0 and C1 controls", "a\x1b[2Jb\x7f\x85c\rd\te", "a⟨U+001B⟩[2Jb⟨U+007F⟩⟨U+0085⟩c⟨U+000D⟩d⇥e"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a⟨U+2028⟩b⟨U+2029⟩c"],
    ["a line break", "one\ntwo", "one↵\ntwo"],
    ["forty empty lines: one row of markers, then the rest", `console.log(1)${"\n".repeat(40)}rmSync('src')`, `console.log(1)${"↵".repeat(40)}\nrmSync('src')`],
    ["lines of spaces count as empty", "a\n   \n \nb", "a↵   ↵ ↵\nb"],
    ["a long run of spaces is counted", `ok${" ".repeat(200)}rm`, "ok⟨200 spaces⟩rm"],
    ["sixteen spaces are drawn", `a${" ".repeat(16)}b`, `a${" ".repeat(16)}b`],
    ["astral characters stay", "😀 é 漢字", "😀 é 漢字"],
    ["a lone carriage return hides what follows it", "x = 1;\rrun()", "x = 1;⟨U+000D⟩run()"],
    ["a CRLF line end is marked quietly", "a\r\nb", "a␍↵\nb"],
    ["a long run of a hidden character is counted", `node${"\u2800".repeat(6000)}x`, "node⟨U+2800 ×6000⟩x"],
    ["a short run too", "a\u200B\u200Bb", "a⟨U+200B ×2⟩b"],
    ["seventeen tabs are counted", `a${"\t".repeat(17)}b`, "a⟨U+0009 ×17⟩b"],
    ["a long line feed-free line stays one line", `count = 10${" ".repeat(400)}import("node:fs")`, 'count = 10⟨400 spaces⟩import("node:fs")'],
  ])("%s", (_what, text, shown) => {
    expect(revealed(text)).toBe(shown);
  });

  // One example per property the decision rests on: none of them is named in the code.
  it.each([
    ["Cc: C0 control", 0x0001],
    ["Cc: C1 control", 0x0090],
    ["Cf: soft hyphen", 0x00ad],
    ["Cf: Arabic letter mark", 0x061c],
    ["Cf: Mongolian vowel separator", 0x180e],
    ["Cf: invisible times", 0x2062],
    ["Cf: interlinear annotation anchor", 0xfff9],
    ["Cf: musical symbol begin beam", 0x1d173],
    ["Cf: tag letter", 0xe0041],
    ["Zl: line separator", 0x2028],
    ["Zp: paragraph separator", 0x2029],
    ["Zs: ogham space mark", 0x1680],
    ["Zs: en quad", 0x2000],
    ["Zs: narrow no-break space", 0x202f],
    ["Zs: ideographic space", 0x3000],
    ["Co: private use", 0xe000],
    ["DI: Hangul choseong filler", 0x115f],
    ["DI: Hangul jungseong filler", 0x1160],
    ["DI: Hangul filler", 0x3164],
    ["DI: halfwidth Hangul filler", 0xffa0],
    ["DI: combining grapheme joiner", 0x034f],
    ["DI: Khmer vowel inherent aq", 0x17b4],
    ["DI: variation selector 16", 0xfe0f],
    ["DI: variation selector 256", 0xe01ef],
    ["DI: unassigned in a default-ignorable block", 0x2065],
    ["blank glyph: braille pattern blank", 0x2800],
  ])("%s is a marker", (_what, cp) => {
    const char = String.fromCodePoint(cp);
    const hex = cp.toString(16).toUpperCase().padStart(4, "0");
    expect(revealed(`a${char}b`)).toBe(`a⟨U+${hex}⟩b`);
  });

  it("keeps the visible neighbours of hidden ones", () => {
    for (const char of ["a", "-", "€", "ß", "\u00E9", "\u3042", "\u2801", "\u{1F600}"]) expect(revealed(char)).toBe(char);
  });

  it("a lone surrogate is a marker", () => {
    expect(revealed("a\uD800b")).toBe("a⟨U+D800⟩b");
  });

  it.each([
    ["one accent stays on its letter", "e\u0301", "e\u0301"],
    ["three marks stay (some scripts stack them)", "a\u0301\u0302\u0303", "a\u0301\u0302\u0303"],
    ["a stack of one mark is counted", `a${"\u0336".repeat(40)}b`, "a⟨U+0336 ×40⟩b"],
    ["a stack of mixed marks is counted", "a\u0301\u0302\u0303\u0304z", "a⟨4 combining marks⟩z"],
    ["a mark at the start has nothing to sit on", "\u0301x", "⟨U+0301⟩x"],
    ["a mark after a space has nothing to sit on", "x \u0301", "x ⟨U+0301⟩"],
  ])("combining marks: %s", (_what, text, shown) => {
    expect(revealed(text)).toBe(shown);
  });

  it("a diff row's trailing CR is a line end; elsewhere it is a lone CR", () => {
    expect(revealed("x\r", true)).toBe("x␍");
    expect(revealed("x\r")).toBe("x⟨U+000D⟩");
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
  });
});
