// The reply sanitizer against hostile input: the covers, fake cards and
// focus tricks a model could write, and DOMPurify's mutation-XSS classics.
// Each row pins the exact HTML that reaches the window.
import { beforeAll, describe, expect, it } from "vitest";
import { loadHighlighter } from "./highlighting";
import { renderMarkdown } from "./markdown";

const BACKDROP =
  '<div class="backdrop svelte-1x2y3z" inert style="position:fixed;inset:0;z-index:10">' +
  '<table width="1400" height="900" bgcolor="white"><tr><td align="center">Corral was updated <button class="primary">OK</button></td></tr></table></div>';
const FAKE_CARD =
  '<article class="card waiting svelte-x1" data-testid="tool-card" data-status="waiting"><header><span class="badge warn">waiting for approval</span></header>' +
  '<div class="approval svelte-y2" role="group"><button class="primary" data-testid="approve-once">Approve once</button>' +
  '<button class="danger" data-testid="deny">Deny</button></div></article>';

describe("renderMarkdown keeps only the allowlist", () => {
  // The rows pin the output once the highlighter has arrived (before, code is
  // escaped: highlighting.test.ts).
  beforeAll(() => loadHighlighter());

  it.each([
    // Covers: class, inert, style, sizing and colour go; the words stay inside a plain table.
    ["a full-window cover", BACKDROP, "<table><tbody><tr><td align=\"center\">Corral was updated OK</td></tr></tbody></table>"],
    ["a fake approval card", FAKE_CARD, "<span>waiting for approval</span>Approve onceDeny"],
    ["ids, names, style, tabindex, popovers, aria", '<p id="chat-input" name="x" style="position:fixed" tabindex="0" popover popovertarget="y" aria-label="Approve">hi</p>', "<p>hi</p>"],
    ["a popover and its trigger", '<div popover id="p">Press Enter to continue</div><button popovertarget="p" autofocus>go</button>', "Press Enter to continuego"],
    ["form controls and dialogs", '<input autofocus value=1><textarea>t</textarea><select><option>o</option></select><dialog open>d</dialog><form action="x">f</form>', "<p>to</p>df<p></p>\n"],
    ["details that toggle", "<details open ontoggle=alert(1)><summary>s</summary>d</details>", "sd"],
    ["legacy sizing and colour", "<font color=red size=7>f</font><center>c</center><marquee>m</marquee>", "<p>f</p>cm<p></p>\n"],
    ["a sized cell", "<td width=900 bgcolor=red>x</td>", "x"],
    ["class tokens other than the highlighter's", '<span class="hljs-keyword backdrop">k</span><code class="hljs language-rust primary">c</code>', '<p><span class="hljs-keyword">k</span><code class="hljs language-rust">c</code></p>\n'],
    ["an alignment that is not one", '<table><tr><td align="justify" valign="top">x</td></tr></table>', "<table><tbody><tr><td>x</td></tr></tbody></table>"],
    // Links and media.
    ["a javascript: link", '<a href="javascript:alert(1)" title="t" target="_top" id="x">x</a>', '<p><a title="javascript:alert(1)">x</a></p>\n'],
    ["a Markdown image", "![fake dialog](data:image/png;base64,AAAA)", "<p>fake dialog</p>\n"],
    ["an HTML image", "<img src=x onerror=alert(1)>", ""],
    ["frames, objects, embeds", '<iframe srcdoc="<script>alert(1)</script>"></iframe><object data="x"></object><embed src=x>', ""],
    ["base, meta refresh, stylesheet", '<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example/"><link rel="stylesheet" href="x.css">', ""],
    ["a style element", "<style>.send{display:none}</style>after", "after"],
    ["a script", "<script>alert(1)</script>after", "after"],
    // DOMPurify's mutation-XSS classics.
    ["svg/style namespace confusion", '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">', '<p></p>"&gt;<p></p>\n'],
    ["math/mglyph/style", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", "<p></p>"],
    ["noscript parsing", '<noscript><p title="</noscript><img src=x onerror=alert(1)>">', "<p></p><p></p>\n"],
    ["nested forms", "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>", ""],
    ["style inside svg", "<svg><style><img src=x onerror=alert(1)></style></svg>", "<p></p>\n"],
    ["template content", "<template><img src=x onerror=alert(1)></template>", "<p></p>\n"],
  ])("%s", (_what, source, expected) => {
    expect(renderMarkdown(source)).toBe(expected);
  });

  it.each([
    ["highlighted code", "```js\nconst a = 1;\n```", '<pre><code class="hljs language-js"><span class="hljs-keyword">const</span> a = <span class="hljs-number">1</span>;</code></pre>\n'],
    ["a task list", "- [x] done\n- [ ] todo", "<ul>\n<li>☑ done</li>\n<li>☐ todo</li>\n</ul>\n"],
    ["an aligned table", "| a | b |\n|:-:|--:|\n| 1 | 2 |", '<table>\n<thead>\n<tr>\n<th align="center">a</th>\n<th align="right">b</th>\n</tr>\n</thead>\n<tbody><tr>\n<td align="center">1</td>\n<td align="right">2</td>\n</tr>\n</tbody></table>\n'],
    ["a list that starts at 3", "3. three\n4. four", '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>\n'],
    ["emphasis, code, strike", "**b** *i* `c` ~~s~~", "<p><strong>b</strong> <em>i</em> <code>c</code> <del>s</del></p>\n"],
  ])("keeps Markdown's own output: %s", (_what, source, expected) => {
    expect(renderMarkdown(source)).toBe(expected);
  });
});
