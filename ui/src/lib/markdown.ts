// Assistant replies as sanitized HTML: marked for Markdown, highlight.js core
// with a handful of languages (the full build is ~1 MB), then the
// allowlist of sanitize.ts.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked } from "marked";
import { sanitizeReply } from "./sanitize";

const languages = { bash, css, diff, go, ini, javascript, json, markdown, python, rust, shell, typescript, xml, yaml };
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["rs"], { languageName: "rust" });
hljs.registerAliases(["py"], { languageName: "python" });
hljs.registerAliases(["html", "svelte", "vue"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function highlight(code: string, lang: string | undefined): string {
  const language = lang?.trim().split(/\s+/)[0]?.toLowerCase();
  if (language && hljs.getLanguage(language)) return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  return escapeHtml(code);
}

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

export function renderMarkdown(source: string): string {
  return sanitizeReply(marked.parse(source, { async: false }));
}
