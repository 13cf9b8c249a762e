import { describe, expect, it } from "vitest";
import { count, moment, oneDecimal, stamp } from "./format";

describe("the kept formatters", () => {
  it("write numbers grouped, as toLocaleString did", () => {
    expect(count(1234567)).toBe("1,234,567");
    expect(count(12)).toBe("12");
    expect(oneDecimal(1.25)).toBe((1.25).toLocaleString("en", { maximumFractionDigits: 1 }));
    expect(oneDecimal(2048.04)).toBe("2,048");
  });

  it("write dates as toLocaleString did", () => {
    const ms = Date.UTC(2026, 10, 29, 16, 52, 10);
    expect(stamp(ms)).toBe(new Date(ms).toLocaleString("en", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false }));
    expect(moment(ms)).toContain("2026");
    expect(moment(ms)).toMatch(/\d{1,2}:\d{2}:\d{2}/);
  });
});
