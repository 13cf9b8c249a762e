// A reply renders at once with its code escaped, and again highlighted when
// the highlighter's chunk arrives (this file's modules start without it).
import { render, waitFor } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import Markdown from "./Markdown.svelte";

const HOSTILE = "</code></pre><script>alert(1)</script><img src=x onerror=alert(1)>";

describe("code before and after the highlighter arrives", () => {
  it("renders escaped at once, then again highlighted; hostile code stays text", async () => {
    const text = "```rust\nfn main() {}\n```\n\n```nosuch\n" + HOSTILE + "\n```";
    const { container } = render(Markdown, { text });

    const blocks = container.querySelectorAll("pre code");
    expect(blocks[0].innerHTML).toBe("fn main() {}");
    expect(blocks[1].textContent).toBe(HOSTILE);
    expect(container.querySelector("script, img")).toBeNull();

    await waitFor(() => expect(container.querySelector("code.language-rust .hljs-keyword")?.textContent).toBe("fn"));
    expect(container.querySelector("code.language-nosuch")?.textContent).toBe(HOSTILE);
    expect(container.querySelector("script, img")).toBeNull();
  });
});
