import { describe, expect, it } from "vitest";
import { reveal, revealed, resolvePath } from "./reveal";

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
  ])("%s", (_what, text, shown) => {
    expect(revealed(text)).toBe(shown);
  });

  it("says what each marker stands for", () => {
    expect(reveal("a\u202Eb\nc")).toEqual([
      { text: "a" },
      { text: "⟨U+202E⟩", mark: "U+202E right-to-left override" },
      { text: "b" },
      { text: "↵", mark: "U+000A line feed" },
      { text: "\nc" },
    ]);
  });
});

describe("resolvePath", () => {
  it.each([
    ["src/main.rs", { path: "src/main.rs", outside: false }],
    ["./a/../b", { path: "b", outside: false }],
    ["a//b/./c/", { path: "a/b/c", outside: false }],
    ["a\\..\\b", { path: "b", outside: false }],
    ["/p/app/src/x", { path: "src/x", outside: false }],
    ["/p/app", { path: ".", outside: false }],
    ["/p/app-evil/x", { path: "/p/app-evil/x", outside: true }],
    ["../outside/secret.txt", { path: "../outside/secret.txt", outside: true }],
    ["a/../../x", { path: "a/../../x", outside: true }],
    ["invoice\u202Etxt.exe", { path: "invoice\u202Etxt.exe", outside: false }],
  ])("%s", (raw, expected) => {
    expect(resolvePath(raw, "/p/app")).toEqual(expected);
  });
});
