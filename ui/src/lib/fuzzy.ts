// Fuzzy matching for the file picker and the command palette: the query's
// characters in order, anywhere in the text (case-insensitive), scored so
// that what a person means comes first: consecutive runs, matches at the
// start of a word or path segment, matches in the file name, short texts.

/** The score of `text` for `query` (higher is better), or null when it does not match. */
export function fuzzyScore(query: string, text: string): number | null {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  if (q === "") return 0;
  // The file name is where the last "/" ends.
  const nameStart = t.lastIndexOf("/") + 1;
  let score = 0;
  let at = 0;
  let previous = -2;
  for (const c of q) {
    const found = t.indexOf(c, at);
    if (found < 0) return null;
    let points = 1;
    if (found === previous + 1) points += 5;
    const before = found === 0 ? "/" : t[found - 1];
    if (/[/_\-. ]/.test(before)) points += 4;
    else if (text[found] !== t[found] && text[found - 1] === t[found - 1]) points += 3; // a capital after a small letter
    if (found >= nameStart) points += 2;
    score += points;
    previous = found;
    at = found + 1;
  }
  // A whole prefix of the text or of its name counts most.
  if (t.startsWith(q)) score += 10;
  else if (t.slice(nameStart).startsWith(q)) score += 8;
  return score - t.length / 100;
}

/** The texts that match `query`, best first (ties keep their order), at most `limit`. */
export function rank<T>(query: string, items: readonly T[], textOf: (item: T) => string, limit = Infinity): T[] {
  return items
    .map((item, index) => ({ item, index, score: fuzzyScore(query, textOf(item)) }))
    .filter((entry): entry is { item: T; index: number; score: number } => entry.score !== null)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((entry) => entry.item);
}
