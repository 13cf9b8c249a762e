// The highlighter arrives in its own chunk: until then code is escaped, the
// first code with a language asks for it, `highlighterReady` turns when it is
// here, and hostile text is never HTML before or after.
import { get } from "svelte/store";
import { describe, expect, it, vi } from "vitest";

/** The modules as on a fresh window: the highlighter not yet imported. */
async function fresh() {
  vi.resetModules();
  const highlighting = await import("./highlighting");
  const { renderMarkdown } = await import("./markdown");
  const { highlightFile } = await import("./fileView");
  return { ...highlighting, renderMarkdown, highlightFile };
}

const HOSTILE = '</code></pre><script>alert(1)</script><img src=x onerror="alert(1)"><button class="primary">OK</button>';

/** The HTML as the window would hold it: no element beyond the highlighter's and Markdown's own, the text intact. */
function expectInert(html: string, text: string, what: string): void {
  const box = document.createElement("div");
  box.innerHTML = html;
  expect(box.querySelector("script, img, button, style, iframe"), what).toBeNull();
  expect(box.textContent, what).toContain(text);
}

describe("the lazy highlighter", () => {
  it("shows code escaped, asks for the highlighter, and highlights once it is here", async () => {
    const { renderMarkdown, highlighterReady } = await fresh();
    const seen: boolean[] = [];
    const stop = highlighterReady.subscribe((ready) => seen.push(ready));
    const source = "```js\nconst a = 1;\n```";
    expect(renderMarkdown(source)).toBe('<pre><code class="hljs language-js">const a = 1;</code></pre>\n');
    // Rendering the block asked for it; nothing else does here.
    await vi.waitFor(() => expect(get(highlighterReady)).toBe(true));
    expect(renderMarkdown(source)).toBe('<pre><code class="hljs language-js"><span class="hljs-keyword">const</span> a = <span class="hljs-number">1</span>;</code></pre>\n');
    expect(seen).toEqual([false, true]);
    stop();
  });

  it("is not asked for by text without a language", async () => {
    const { renderMarkdown, highlightFile, highlighterReady } = await fresh();
    expect(renderMarkdown("plain `code` and\n\n```\nno language\n```")).toContain(">no language</code>");
    expect(highlightFile("Makefile", "all:\n")).toBe("all:\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(get(highlighterReady)).toBe(false);
  });

  it("loads once: later calls share the first import", async () => {
    const { loadHighlighter, highlighterReady } = await fresh();
    const first = loadHighlighter();
    expect(loadHighlighter()).toBe(first);
    await first;
    expect(get(highlighterReady)).toBe(true);
  });

  it("leaves a language it does not know escaped, after it has arrived too", async () => {
    const { renderMarkdown, highlightFile, loadHighlighter } = await fresh();
    const source = "```brainfuck\n<b>+</b>[-]\n```";
    const before = renderMarkdown(source);
    await loadHighlighter();
    expect(renderMarkdown(source)).toBe(before);
    expect(before).toBe('<pre><code class="hljs language-brainfuck">&lt;b&gt;+&lt;/b&gt;[-]</code></pre>\n');
    const box = document.createElement("div");
    box.innerHTML = highlightFile("tape.bf", "<b>+</b>");
    expect(box.querySelector("b")).toBeNull();
    expect(box.textContent).toBe("<b>+</b>");
  });

  it("never lets hostile code out as HTML, before or after the highlighter arrives", async () => {
    const { renderMarkdown, highlightFile, loadHighlighter } = await fresh();
    const check = (when: string): void => {
      for (const lang of ["js", "html", "markdown", "nosuch", ""]) {
        expectInert(renderMarkdown("```" + lang + "\n" + HOSTILE + "\n```"), HOSTILE, `${when} \`\`\`${lang}`);
      }
      for (const path of ["page.html", "x.js", "README.md", "notes.nosuch", "Makefile"]) {
        expectInert(highlightFile(path, HOSTILE), HOSTILE, `${when} ${path}`);
      }
      // A language name is a class token, escaped too: it cannot close the attribute.
      expectInert(renderMarkdown('```js"><script>alert(1)</script>\nx\n```'), "x", `${when} a hostile language name`);
    };
    check("before");
    await loadHighlighter();
    check("after");
  });
});
