// Assistant replies as sanitized HTML: marked for Markdown, highlighting.ts
// for code (escaped until the highlighter has arrived), then the allowlist
// of sanitize.ts.
import { Marked } from "marked";
import { escapeHtml, highlight } from "./highlighting";
import { sanitizeReply } from "./sanitize";

const marked = new Marked({
  gfm: true,
  renderer: {
    code({ text, lang }) {
      const cls = lang ? ` language-${escapeHtml(lang.split(/\s+/)[0])}` : "";
      return `<pre><code class="hljs${cls}">${highlight(text, lang)}</code></pre>\n`;
    },
    // No image is fetched or drawn (a picture could be a fake window): its
    // alt text stands in. A task list's box is a character, not an input.
    image({ text }) {
      return escapeHtml(text);
    },
    checkbox({ checked }) {
      return checked ? "☑ " : "☐ ";
    },
  },
});

/**
 * The reply as sanitized HTML, at once. Its code is escaped while the
 * highlighter is on its way; render again when `highlighterReady` turns.
 */
export function renderMarkdown(source: string): string {
  return sanitizeReply(marked.parse(source, { async: false }));
}
