import { describe, expect, it } from "vitest";
import { anchoredTop, anchorAt, offsetsOf } from "./virtualRange";

describe("the row that keeps its place", () => {
  const ids = ["a", "b", "c", "d"];
  const offsets = offsetsOf([100, 50, 200, 80]);

  it("is the row the view's top is in, and how far into it", () => {
    expect(anchorAt(ids, offsets, 0)).toEqual({ id: "a", into: 0 });
    expect(anchorAt(ids, offsets, 120)).toEqual({ id: "b", into: 20 });
    expect(anchorAt(ids, offsets, 150)).toEqual({ id: "c", into: 0 });
    // Past the end (the browser would not go there): the last row.
    expect(anchorAt(ids, offsets, 1000)).toEqual({ id: "d", into: 650 });
    expect(anchorAt([], offsetsOf([]), 10)).toBeNull();
  });

  it("stays where it was when earlier rows come in above it", () => {
    // The view's top 30 px into "c"; 500 rows of an estimated 90 px come in above, then are measured.
    const anchor = anchorAt(ids, offsets, 180);
    expect(anchor).toEqual({ id: "c", into: 30 });
    const earlier = Array.from({ length: 500 }, (_, i) => `e${i}`);
    const estimated = offsetsOf([...earlier.map(() => 90), 100, 50, 200, 80]);
    expect(anchoredTop([...earlier, ...ids], estimated, anchor!)).toBe(500 * 90 + 150 + 30);
    const measured = offsetsOf([...earlier.map((_, i) => (i % 2 === 0 ? 40 : 130)), 100, 50, 200, 80]);
    expect(anchoredTop([...earlier, ...ids], measured, anchor!)).toBe(250 * 40 + 250 * 130 + 150 + 30);
  });

  it("stays where it was when rows above it grow or shrink, itself included", () => {
    const anchor = anchorAt(ids, offsets, 180)!;
    // "a" grew by 300 (a card's result came in), "b" shrank by 20: the view moves by 280.
    expect(anchoredTop(ids, offsetsOf([400, 30, 200, 80]), anchor)).toBe(180 + 280);
    // The anchor itself and the rows below it change nothing above it.
    expect(anchoredTop(ids, offsetsOf([100, 50, 900, 10]), anchor)).toBe(180);
  });

  it("is none once its row is gone", () => {
    expect(anchoredTop(["a", "b"], offsetsOf([100, 50]), { id: "c", into: 0 })).toBeNull();
  });
});
