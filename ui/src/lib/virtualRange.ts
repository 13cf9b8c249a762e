// Which rows of a fixed-row-height list are on screen (plus some overscan).
export type Range = { start: number; end: number };

export function visibleRange(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 10): Range {
  if (count === 0 || rowHeight <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const shown = Math.ceil(Math.max(viewport, rowHeight) / rowHeight);
  const start = Math.max(0, Math.min(count - 1, first) - overscan);
  const end = Math.min(count, first + shown + overscan);
  return { start, end };
}
