// How the conversation list says things: a conversation's age, and a search
// snippet's matches (marked by Rust with U+0002 … U+0003) as plain text parts.

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 d ago", then the date. */
export function age(thenMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (s < 60) return "just now";
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ago`;
  const d = Math.floor(h / 24);
  if (d === 1) return "yesterday";
  if (d < 30) return `${d} d ago`;
  return new Date(thenMs).toISOString().slice(0, 10);
}

export type SnippetPart = { text: string; match: boolean };

/** A snippet as text parts, the matches flagged; never markup. */
export function snippetParts(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let match = false;
  let text = "";
  const flush = () => {
    if (text !== "") parts.push({ text, match });
    text = "";
  };
  for (const ch of snippet.replace(/\s+/g, " ")) {
    if (ch === "\u0002" || ch === "\u0003") {
      flush();
      match = ch === "\u0002";
    } else {
      text += ch;
    }
  }
  flush();
  return parts;
}
