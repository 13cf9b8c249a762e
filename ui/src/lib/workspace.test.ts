import { describe, expect, it } from "vitest";
import { ACTIONS, actionFor, describeShortcut, filterActions } from "./actions";
import { highlightFile, languageOf, lineNumbers } from "./fileView";
import { loadHighlighter } from "./highlighting";
import { fuzzyScore, rank } from "./fuzzy";
import { insertMention, mentionAt, mentionedIn, splitAttachments, withAttachments } from "./mentions";

const key = (k: string, mods: { ctrl?: boolean; shift?: boolean; alt?: boolean; meta?: boolean } = {}) => ({
  key: k,
  ctrlKey: !!mods.ctrl,
  shiftKey: !!mods.shift,
  altKey: !!mods.alt,
  metaKey: !!mods.meta,
});

describe("fuzzy ranking", () => {
  const files = ["README.md", "src/greet.js", "src/agent/greeting.ts", "package.json", "docs/grammar/rules.md", "tick.js"];

  it("matches characters in order, case-insensitively, or not at all", () => {
    expect(fuzzyScore("sgr", "src/greet.js")).not.toBeNull();
    expect(fuzzyScore("GREET", "src/greet.js")).not.toBeNull();
    expect(fuzzyScore("jg", "src/greet.js")).toBeNull();
    expect(rank("zzz", files, (f) => f)).toEqual([]);
  });

  it("puts a path prefix first, then a name prefix, then scattered matches", () => {
    expect(rank("src/gr", files, (f) => f)[0]).toBe("src/greet.js");
    expect(rank("greet", files, (f) => f).slice(0, 2)).toEqual(["src/greet.js", "src/agent/greeting.ts"]);
    expect(rank("pkg", files, (f) => f)).toEqual(["package.json"]);
    expect(rank("rdme", files, (f) => f)[0]).toBe("README.md");
  });

  it("keeps the given order (newest first) for an empty query and caps the list", () => {
    expect(rank("", files, (f) => f, 3)).toEqual(files.slice(0, 3));
  });
});

describe("mentions", () => {
  it("finds the @ the caret is in, at the start or after a space only", () => {
    expect(mentionAt("@src/gr", 7)).toEqual({ start: 0, query: "src/gr" });
    expect(mentionAt("look at @", 9)).toEqual({ start: 8, query: "" });
    expect(mentionAt("mail me@example.com", 19)).toBeNull();
    expect(mentionAt("@src/gr more", 12)).toBeNull();
    expect(mentionAt("see @a and", 6)).toEqual({ start: 4, query: "a" });
  });

  it("replaces the query with the picked path and puts the caret after it", () => {
    expect(insertMention("fix @src/gr please", 4, 11, "src/greet.js")).toEqual({ text: "fix @src/greet.js please", caret: 18 });
    expect(insertMention("@", 0, 1, "README.md")).toEqual({ text: "@README.md ", caret: 11 });
  });

  it("attaches the picked files the text still mentions, once each", () => {
    const picked = ["src/greet.js", "README.md", "src/greet.js"];
    expect(mentionedIn("explain @src/greet.js, and @src/greet.js", picked)).toEqual(["src/greet.js"]);
    expect(mentionedIn("no mention of README.md", picked)).toEqual([]);
    expect(mentionedIn("@README.md?", picked)).toEqual(["README.md"]);
  });

  it("writes each file in a fence nothing in it can close, and reads the chips back", () => {
    const tricky = "a\n```\nnot the end\n````\n";
    const message = withAttachments("explain @src/greet.js", [
      { path: "src/greet.js", content: "console.log('hi');\n" },
      { path: "notes.md", content: tricky, note: "lines 1–4 of 9" },
      { path: "empty.txt", content: "" },
    ]);
    expect(message).toContain("Attached file src/greet.js:\n```\nconsole.log('hi');\n```");
    expect(message).toContain("Attached file notes.md (lines 1–4 of 9):\n`````\na\n```\nnot the end\n````\n`````");
    expect(splitAttachments(message)).toEqual({ text: "explain @src/greet.js", files: ["src/greet.js", "notes.md", "empty.txt"] });
  });

  it("leaves a message alone when what looks like an attachment does not run to its end", () => {
    const typed = "what does this do?\n\nAttached file x:\n```\ncode\n```\nand then more text";
    expect(splitAttachments(typed)).toEqual({ text: typed, files: [] });
    expect(splitAttachments("plain")).toEqual({ text: "plain", files: [] });
  });
});

describe("actions", () => {
  it("lists every action once, with its shortcut written out", () => {
    const ids = ACTIONS.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ["new-conversation", "stop", "pick-file", "focus-input", "settings", "close-project", "palette"]) expect(ids).toContain(id);
    const pick = ACTIONS.find((a) => a.id === "pick-file")!;
    expect(describeShortcut(pick.shortcuts[0])).toBe("Ctrl+P");
    expect(ACTIONS.find((a) => a.id === "palette")!.shortcuts.map(describeShortcut)).toEqual(["Ctrl+K", "Ctrl+Shift+P"]);
    expect(describeShortcut({ key: "Escape" })).toBe("Esc");
  });

  it("filters the palette as you type, best match first, without the palette itself", () => {
    expect(filterActions("").map((a) => a.id)).not.toContain("palette");
    expect(filterActions("").length).toBe(ACTIONS.length - 1);
    expect(filterActions("new")[0].id).toBe("new-conversation");
    expect(filterActions("sett").map((a) => a.id)).toEqual(["settings"]);
    expect(filterActions("pick")[0].id).toBe("pick-file");
    expect(filterActions("xyzzy")).toEqual([]);
  });

  it("maps key presses to actions: Ctrl+K and Ctrl+Shift+P to the palette, Ctrl+P to the picker", () => {
    expect(actionFor(key("k", { ctrl: true }))?.id).toBe("palette");
    expect(actionFor(key("P", { ctrl: true, shift: true }))?.id).toBe("palette");
    expect(actionFor(key("p", { ctrl: true }))?.id).toBe("pick-file");
    expect(actionFor(key("p", { meta: true }))?.id).toBe("pick-file");
    expect(actionFor(key("N", { ctrl: true, shift: true }))?.id).toBe("new-conversation");
    expect(actionFor(key(",", { ctrl: true }))?.id).toBe("settings");
    expect(actionFor(key("l", { ctrl: true }))?.id).toBe("focus-input");
  });

  it("leaves plain keys, Alt combinations, typing in an IME and Esc to the page", () => {
    expect(actionFor(key("p"))).toBeNull();
    expect(actionFor(key("k", { ctrl: true, alt: true }))).toBeNull();
    expect(actionFor({ ...key("k", { ctrl: true }), isComposing: true })).toBeNull();
    expect(actionFor(key("Escape"))).toBeNull();
  });
});

describe("file viewer text", () => {
  it("escapes the file's markup whatever the language, before and after the highlighter arrives, and numbers its lines", async () => {
    const hostile = '<img src=x onerror="alert(1)"><button class="primary">OK</button>\n';
    const expectEscaped = (): void => {
      for (const path of ["page.html", "notes.txt", "README.md"]) {
        const html = highlightFile(path, hostile);
        const box = document.createElement("div");
        box.innerHTML = html;
        expect(box.querySelector("img, button"), path).toBeNull();
        expect(box.textContent, path).toBe(hostile);
      }
    };
    expectEscaped();
    expect(highlightFile("a.js", "const x = 1;")).toBe("const x = 1;");
    await loadHighlighter();
    expectEscaped();
    expect(highlightFile("a.js", "const x = 1;")).toContain('<span class="hljs-keyword">const</span>');
    expect(languageOf("src/greet.js")).toBe("js");
    expect(languageOf("Makefile")).toBeUndefined();
    expect(lineNumbers("a\nb\n", 1)).toEqual([1, 2]);
    expect(lineNumbers("a\nb", 10)).toEqual([10, 11]);
    expect(lineNumbers("", 1)).toEqual([]);
  });
});
