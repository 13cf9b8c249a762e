// Scripts run in the page (WebDriver `execute`) to measure what the user
// sees: where things are drawn, what a point of the window is.

/**
 * The app's own scoped class for a selector's first class, read from the
 * stylesheets (`backdrop` → `svelte-1abc2de`): a reply can write it as
 * well as we can.
 */
export const SCOPED_CLASS = `
  const [name] = arguments;
  const pattern = new RegExp("\\\\." + name + "\\\\.(svelte-[a-z0-9]+)");
  for (const sheet of document.styleSheets) {
    for (const rule of sheet.cssRules) {
      const match = pattern.exec(rule.selectorText ?? "");
      if (match) return match[1];
    }
  }
  return null;`;

/**
 * Elements inside `root` (arguments[0]) whose drawn box reaches outside
 * root's box (1 px of rounding allowed), as "tag: rect" strings.
 */
export const ESCAPING = `
  const [root] = arguments;
  const box = root.getBoundingClientRect();
  const out = [];
  for (const el of root.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1) {
      out.push(el.tagName + ": " + JSON.stringify([r.left, r.top, r.right, r.bottom]) + " outside " + JSON.stringify([box.left, box.top, box.right, box.bottom]));
    }
  }
  return out;`;

/**
 * Where the text `needle` is drawn inside `root` (arguments[0], [1]): its
 * rectangle and centre, or null.
 */
export const TEXT_RECT = `
  const [root, needle] = arguments;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.textContent.indexOf(needle);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + needle.length);
    const r = range.getBoundingClientRect();
    return { left: r.left, top: r.top, right: r.right, bottom: r.bottom, x: (r.left + r.right) / 2, y: (r.top + r.bottom) / 2 };
  }
  return null;`;

/** The rectangle of `el` (arguments[0]). */
export const RECT = `
  const r = arguments[0].getBoundingClientRect();
  return { left: r.left, top: r.top, right: r.right, bottom: r.bottom };`;

/** What is drawn at a point (x, y): its tag, test id and whether it lies inside `root` (arguments[2]). */
export const HIT = `
  const [x, y, root] = arguments;
  const el = document.elementFromPoint(x, y);
  return el && { tag: el.tagName, testid: el.closest("[data-testid]")?.dataset.testid ?? null, inside: root.contains(el) };`;

/** The focused element: its tag and test id (or its nearest ancestor's). */
export const FOCUSED = `
  const el = document.activeElement;
  return el && { tag: el.tagName, testid: el.closest("[data-testid]")?.dataset.testid ?? null };`;

/** Whether rectangle `inner` lies within `outer` (1 px of rounding allowed). */
export function within(inner, outer) {
  return inner.left >= outer.left - 1 && inner.top >= outer.top - 1 && inner.right <= outer.right + 1 && inner.bottom <= outer.bottom + 1;
}
