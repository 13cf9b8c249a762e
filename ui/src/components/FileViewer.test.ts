// The file viewer fetches the highlighter while it reads the file, so the
// text shows highlighted the first time (this file's modules start without
// the highlighter).
import { render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import type { ReadFileOutput } from "../lib/types";
import FileViewer from "./FileViewer.svelte";

const file = (path: string, content: string): ReadFileOutput => ({ path, content, start_line: 1, end_line: 1, total_lines: 1, truncated: false });

describe("the file viewer before the highlighter has arrived", () => {
  it("shows the file highlighted the first time, its markup escaped", async () => {
    const content = 'fn main() {}\n// </code><script>alert(1)</script><img src=x onerror="alert(1)">\n';
    render(FileViewer, { path: "src/main.rs", read: async (path: string) => file(path, content), onClose: () => {} });
    const code = await screen.findByTestId("file-viewer-code");
    expect(code.querySelector(".hljs-keyword")?.textContent).toBe("fn");
    expect(code.querySelector("script, img")).toBeNull();
    expect(code.textContent).toBe(content);
  });
});
