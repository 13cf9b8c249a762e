// The model's replies and command output are untrusted: whatever they
// contain, the HTML made from them holds no markup of theirs and nothing
// that could navigate the app window away.
import { describe, expect, it } from "vitest";
import { ansiLineToHtml } from "./ansi";
import { renderMarkdown } from "./markdown";

/** Every element of the HTML that carries a link attribute, as tag names. */
function linked(html: string): string[] {
  const box = document.createElement("div");
  box.innerHTML = html;
  return [...box.querySelectorAll("*")]
    .filter((el) => [...el.attributes].some((a) => a.localName === "href" || a.name.endsWith(":href")))
    .map((el) => el.tagName);
}

describe("renderMarkdown", () => {
  it.each([
    ["an SVG link", '<svg><a href="https://evil.example/"><text>x</text></a></svg>'],
    ["an SVG xlink:href", '<svg><a xlink:href="https://evil.example/"><text>x</text></a></svg>'],
    ["an image map area", '<map name="m"><area href="https://evil.example/" shape="rect" coords="0,0,9,9"></map><img usemap="#m" src="x.png">'],
    ["a MathML xlink:href", '<math><mi xlink:href="https://evil.example/">x</mi></math>'],
    ["a Markdown link", "[site](https://evil.example/)"],
    ["an HTML link", '<a href="https://evil.example/" target="_top">x</a>'],
  ])("leaves no link attribute in %s", (_what, source) => {
    const html = renderMarkdown(source);
    expect(linked(html)).toEqual([]);
    expect(html).not.toMatch(/href=/i);
  });

  it("keeps a plain link's text and its URL as a title", () => {
    const box = document.createElement("div");
    box.innerHTML = renderMarkdown("see [the docs](https://example.org/docs)");
    const a = box.querySelector("a");
    expect(a?.textContent).toBe("the docs");
    expect(a?.getAttribute("title")).toBe("https://example.org/docs");
  });

  it("drops SVG and image maps", () => {
    const html = renderMarkdown('<svg><text>chart</text></svg> <map name="m"><area href="x"></map>');
    expect(html).not.toMatch(/<svg|<map|<area/);
  });
});

describe("ansiLineToHtml", () => {
  it("turns an OSC 8 hyperlink into plain text", () => {
    const html = ansiLineToHtml("see \x1b]8;;https://evil.example/\x07click\x1b]8;;\x07 here");
    expect(linked(html)).toEqual([]);
    expect(html).not.toContain("<a");
    expect(html).not.toContain("evil.example");
    expect(html).toContain("see click here");
  });

  it.each([
    // The inner marker, once dropped, used to leave an outer one whole;
    // an escape ends the outer one, as in a terminal, and the rest is text.
    ["a marker nested in another", "A\x1b]8;\x1b]8;;\x07;__proto__:/../index.html?x\x07B\x1b]8;\x1b]8;;\x07;\x07C", "A;__proto__:/../index.html?x\x07B;\x07C"],
    ["a scheme every object has", "\x1b]8;;__proto__:/../index.html?x\x07reload\x1b]8;;\x07", "reload"],
    ["constructor as a scheme", "\x1b]8;;constructor:x\x1b\\y\x1b]8;;\x1b\\", "y"],
    ["the C1 form", "\x9d8;;https://evil.example/\x9clink\x9d8;;\x9c", "link"],
    ["a window title and a clipboard write", "\x1b]0;Corral — approved\x07\x1b]52;c;cm0gLXJmIC4=\x07ok", "ok"],
    ["an unterminated marker", "before\x1b]8;;https://evil.example/ after", "before"],
    ["device control and application strings", "\x1bPq#0;2;0;0;0\x1b\\\x1b_G a=T\x1b\\text", "text"],
  ])("drops every OSC sequence: %s", (_what, line, text) => {
    const html = ansiLineToHtml(line);
    expect(html).toBe(text);
  });

  it("keeps the colour of a hyperlink's text (ESC \\ terminators too)", () => {
    const box = document.createElement("div");
    box.innerHTML = ansiLineToHtml("\x1b[32m\x1b]8;id=1;file:///etc/passwd\x1b\\ok\x1b]8;;\x1b\\\x1b[0m");
    expect(box.querySelector("a")).toBeNull();
    expect(box.querySelector(".ansi-green-fg")?.textContent).toBe("ok");
  });

  it("escapes HTML in coloured and plain text", () => {
    const html = ansiLineToHtml('\x1b[31m<img src=x onerror="alert(1)">\x1b[0m <a href="https://evil.example/">x</a>');
    const box = document.createElement("div");
    box.innerHTML = html;
    expect(box.querySelector("img, a")).toBeNull();
    expect(box.querySelector(".ansi-red-fg")?.textContent).toBe('<img src=x onerror="alert(1)">');
    expect(box.textContent).toContain('<a href="https://evil.example/">x</a>');
  });
});
