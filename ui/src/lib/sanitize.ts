// What of a reply's HTML may reach the window: an explicit allowlist of
// tags and of attributes per tag, nothing else. The model writes this HTML
// (through Markdown or raw), so nothing in it may look like, sit on top of
// or take the focus from the app's own controls: no `class` but the
// highlighter's, no `id`/`name` (they would clobber globals and target
// popovers), no `style`, sizing or colour attributes, no `inert`,
// `popover*`, `tabindex`, `data-*` or `aria-*`, no controls, forms or
// dialogs, no links, images, SVG or MathML. Dropped elements keep their
// text, so a fake button reads as a word.
import DOMPurify from "dompurify";

/** Everything `marked` produces for Markdown, minus images, links' targets and task-list inputs. */
const ALLOWED_TAGS = [
  "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "kbd",
  "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
];

/** Attribute → the values it may keep (the kept value, or null to drop it), per tag. */
type Rule = (value: string) => string | null;
const oneOf =
  (...values: string[]): Rule =>
  (value) =>
    values.includes(value.toLowerCase()) ? value.toLowerCase() : null;
/** Class tokens the highlighter writes (`hljs-keyword`, `hljs-title function_`, `hljs language-rust`). */
const classes =
  (pattern: RegExp): Rule =>
  (value) => {
    const kept = value.split(/\s+/).filter((token) => pattern.test(token));
    return kept.length > 0 ? kept.join(" ") : null;
  };
const ATTRIBUTES: Record<string, Record<string, Rule>> = {
  a: { title: (value) => value },
  span: { class: classes(/^(hljs-[a-z0-9-]+|[a-z]+_+)$/) },
  code: { class: classes(/^(hljs|language-[\w+#.-]+)$/) },
  th: { align: oneOf("left", "center", "right") },
  td: { align: oneOf("left", "center", "right") },
  ol: { start: (value) => (/^\d{1,9}$/.test(value) ? value : null) },
};
const ALLOWED_ATTR = [...new Set(Object.values(ATTRIBUTES).flatMap((rules) => Object.keys(rules)))];

// An instance of our own, so these hooks apply to replies only.
const purify = DOMPurify(window);

// A link would navigate the app's own window away: an anchor keeps its URL
// as a title, readable but inert, and never an href.
purify.addHook("beforeSanitizeAttributes", (node) => {
  if (node.nodeName !== "A") return;
  const element = node as Element;
  const href = element.getAttribute("href");
  for (const name of [...element.getAttributeNames()]) if (name !== "title") element.removeAttribute(name);
  if (href) element.setAttribute("title", href);
  else element.removeAttribute("title");
});

purify.addHook("uponSanitizeAttribute", (node, data) => {
  const rule = Object.hasOwn(ATTRIBUTES, node.nodeName.toLowerCase()) ? ATTRIBUTES[node.nodeName.toLowerCase()] : undefined;
  const kept = rule && Object.hasOwn(rule, data.attrName) ? rule[data.attrName](data.attrValue) : null;
  if (kept === null) data.keepAttr = false;
  else data.attrValue = kept;
});

const CONFIG = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  KEEP_CONTENT: true,
};

/** The HTML of a reply with only the allowed tags and attributes left. */
export function sanitizeReply(html: string): string {
  return purify.sanitize(html, CONFIG);
}
