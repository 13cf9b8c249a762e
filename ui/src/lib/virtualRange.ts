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

/** Where each row of a list of varied heights starts; the last entry is the total height. */
export function offsetsOf(heights: readonly number[]): number[] {
  const offsets = new Array<number>(heights.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < heights.length; i++) offsets[i + 1] = offsets[i] + heights[i];
  return offsets;
}

/**
 * Which rows of a list of varied heights (`offsets` from `offsetsOf`) are on
 * screen, plus `overscan` pixels above and below.
 */
export function variableRange(offsets: readonly number[], scrollTop: number, viewport: number, overscan = 600): Range {
  const count = offsets.length - 1;
  if (count <= 0) return { start: 0, end: 0 };
  // As the browser does: the view cannot go past the end.
  const at = Math.max(0, Math.min(scrollTop, offsets[count] - viewport));
  const top = Math.max(0, at - overscan);
  const bottom = at + Math.max(viewport, 1) + overscan;
  // The last row starting at or above `top`, and the first starting at or below `bottom`.
  const start = Math.min(count - 1, Math.max(0, lastAtOrBelow(offsets, top)));
  const end = Math.max(start + 1, Math.min(count, lastAtOrBelow(offsets, bottom - 1) + 1));
  return { start, end };
}

/** The greatest i with offsets[i] <= y (binary search; offsets ascend). */
function lastAtOrBelow(offsets: readonly number[], y: number): number {
  let lo = 0;
  let hi = offsets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= y) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Measured row heights by row id; rows not measured yet count as `estimate`. */
export class RowHeights {
  private readonly heights = new Map<string, number>();
  constructor(readonly estimate: number) {}

  get(id: string): number {
    return this.heights.get(id) ?? this.estimate;
  }

  /** Records a height; returns the one it replaces, or null when nothing changed. */
  set(id: string, height: number): number | null {
    const before = this.heights.get(id);
    if (height <= 0 || before === height) return null;
    this.heights.set(id, height);
    return before ?? this.estimate;
  }
}

/**
 * The row at the top of a view, and how far the view's top is below that
 * row's top: what stays in place while rows above it are put in, taken out
 * or measured (WebKit has no CSS scroll anchoring to do it).
 */
export type Anchor = { id: string; into: number };

/** The anchor of a view whose top is at `scrollTop` (`offsets` from `offsetsOf`, one id per row); null for no rows. */
export function anchorAt(ids: readonly string[], offsets: readonly number[], scrollTop: number): Anchor | null {
  if (ids.length === 0) return null;
  const index = Math.min(ids.length - 1, lastAtOrBelow(offsets, Math.max(0, scrollTop)));
  return { id: ids[index], into: scrollTop - offsets[index] };
}

/** Where the view's top goes to show `anchor`'s row where it was, by rows' new `offsets`; null once the row is gone. */
export function anchoredTop(ids: readonly string[], offsets: readonly number[], anchor: Anchor): number | null {
  const index = ids.indexOf(anchor.id);
  return index < 0 ? null : offsets[index] + anchor.into;
}
