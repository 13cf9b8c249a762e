// The pricing and summing of model requests, and how a cost is shown.
import { describe, expect, it } from "vitest";
import { addUsage, costOf, costText, noUsage, requestUsage, tokensText, usageOfSummary, usageSince } from "./usage";

const SONNET = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

describe("a request's cost", () => {
  it("prices the input outside the cache, the cache reads and writes, and the output at their own rates", () => {
    // 200 plain input, 600 read, 200 written, 100 out.
    const counted = { input_tokens: 1000, output_tokens: 100, cache_read_tokens: 600, cache_write_tokens: 200 };
    expect(costOf(counted, SONNET)).toBeCloseTo((200 * 3 + 600 * 0.3 + 200 * 3.75 + 100 * 15) / 1e6, 12);
    expect(costOf({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, SONNET)).toBeCloseTo(18, 9);
  });

  it("is unknown without a price, or with cache tokens the price has no rate for", () => {
    expect(costOf({ input_tokens: 10, output_tokens: 1 }, null)).toBeNull();
    const noCache = { input: 1, output: 2 };
    expect(costOf({ input_tokens: 10, output_tokens: 1, cache_read_tokens: 5 }, noCache)).toBeNull();
    expect(costOf({ input_tokens: 10, output_tokens: 1 }, noCache)).toBeCloseTo(12 / 1e6, 12);
    // A model on this machine costs nothing, cache or not.
    const free = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
    expect(costOf({ input_tokens: 10, output_tokens: 1, cache_read_tokens: 5 }, free)).toBe(0);
  });

  it("adds up: an unpriced request counts, never as a guessed cost", () => {
    const priced = requestUsage({ input_tokens: 1_000_000, output_tokens: 0 }, SONNET);
    const unpriced = requestUsage({ input_tokens: 5, output_tokens: 5 }, null);
    const sum = addUsage(addUsage(noUsage(), priced), unpriced);
    expect(sum).toEqual({ input_tokens: 1_000_005, output_tokens: 5, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 3, unpriced: 1 });
    expect(usageSince(sum, priced)).toEqual({ ...unpriced });
    expect(usageSince(sum, sum)).toEqual(noUsage());
  });
});

describe("a cost shown", () => {
  const used = (cost: number, unpriced: number) => ({ ...noUsage(), input_tokens: 12_345, output_tokens: 678, cost_usd: cost, unpriced });

  it("is dollars when every request was priced, says what is unknown otherwise, and nothing when nothing was used", () => {
    expect(costText(used(0.0421, 0))).toBe("$0.042");
    expect(costText(used(12.5, 0))).toBe("$12.50");
    expect(costText(used(0.0421, 2))).toBe("$0.042 + unknown");
    expect(costText(used(0, 1))).toBe("cost unknown");
    expect(costText(noUsage())).toBe("");
    // A model on this machine: its tokens cost nothing.
    expect(costText(used(0, 0))).toBe("$0.000");
  });

  it("names the cached part of the input", () => {
    expect(tokensText(used(0, 0))).toBe("12.3k in, 678 out");
    expect(tokensText({ ...used(0, 0), cache_read_tokens: 8000, cache_write_tokens: 1200 })).toBe("12.3k in (8.0k cache read, 1.2k written), 678 out");
  });

  it("reads a conversation's stored totals", () => {
    expect(usageOfSummary({ input_tokens: 5, output_tokens: 6, cost_usd: 0.1, unpriced: 1 })).toEqual({ ...noUsage(), input_tokens: 5, output_tokens: 6, cost_usd: 0.1, unpriced: 1 });
  });
});
