// A reply and the file viewer render at once with their code escaped, and
// again highlighted when the highlighter's chunk arrives (this file's modules
// start without it).
import { render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import type { ReadFileOutput } from "../lib/types";
import FileViewer from "./FileViewer.svelte";
import Markdown from "./Markdown.svelte";

const HOSTILE = "</code></pre><script>alert(1)</script><img src=x onerror=alert(1)>";

describe("code before and after the highlighter arrives", () => {
  it("renders escaped at once, then again highlighted; hostile code stays text", async () => {
    const text = "```rust\nfn main() {}\n```\n\n```nosuch\n" + HOSTILE + "\n```";
    const { container } = render(Markdown, { text });
    const file: ReadFileOutput = { path: "src/main.rs", content: "fn main() {}\n", start_line: 1, end_line: 1, total_lines: 1, truncated: false };
    render(FileViewer, { path: "src/main.rs", read: async () => file, onClose: () => {} });

    const blocks = container.querySelectorAll("pre code");
    expect(blocks[0].innerHTML).toBe("fn main() {}");
    expect(blocks[1].textContent).toBe(HOSTILE);
    expect(container.querySelector("script, img")).toBeNull();
    const viewed = await screen.findByTestId("file-viewer-code");

    await waitFor(() => expect(container.querySelector("code.language-rust .hljs-keyword")?.textContent).toBe("fn"));
    await waitFor(() => expect(viewed.querySelector(".hljs-keyword")?.textContent).toBe("fn"));
    expect(container.querySelector("code.language-nosuch")?.textContent).toBe(HOSTILE);
    expect(container.querySelector("script, img")).toBeNull();
  });
});
