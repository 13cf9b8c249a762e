import { describe, expect, it } from "vitest";
import type { Message } from "../types";
import {
  compactionBoundary,
  fitMaxTokens,
  summaryRequest,
  SUMMARY_HEADER,
  TokenEstimate,
  trimOldToolResults,
  withSummary,
} from "./context";

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const call = (id: string): Message => ({ role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path: "a" } }] });
const result = (id: string, content = "ok"): Message => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content }] });

describe("TokenEstimate", () => {
  it("estimates from the request's characters and learns from the server's count", () => {
    const estimate = new TokenEstimate();
    const request = { system: "s".repeat(400), messages: [user("x".repeat(3_600))], tools: [] };
    const first = estimate.tokens(request);
    expect(first).toBeGreaterThan(900);
    expect(first).toBeLessThan(1_100);
    // The server counted twice as many tokens: the next estimate follows.
    estimate.calibrate(request, first * 2);
    expect(estimate.tokens(request)).toBeGreaterThan(first * 1.9);
    // One absurd report is clamped.
    estimate.calibrate(request, 1);
    estimate.calibrate(request, 100_000);
    expect(estimate.ratio).toBe(2);
  });

  it("a count of the prefix alone may make the estimate larger, never smaller", () => {
    const request = { system: "s".repeat(4_000), messages: [], tools: [] };
    const sparse = new TokenEstimate();
    sparse.calibrate(request, 500, false);
    expect(sparse.ratio).toBe(4);
    const dense = new TokenEstimate();
    dense.calibrate(request, 1_300, false);
    expect(dense.ratio).toBeLessThan(4);
  });
});

describe("fitMaxTokens", () => {
  it("keeps the reply to a quarter of a small window", () => {
    expect(fitMaxTokens(8_192, 4_096)).toBe(1_024);
    expect(fitMaxTokens(8_192, 200_000)).toBe(8_192);
    expect(fitMaxTokens(8_192, 512)).toBe(256);
  });
});

describe("trimOldToolResults", () => {
  it("trims large old results, keeps head and tail, and leaves recent ones whole", () => {
    const big = `HEAD${"x".repeat(10_000)}TAIL`;
    const messages = [user("go"), call("a"), result("a", big), call("b"), result("b", big)];
    const out = trimOldToolResults(messages, 2, 1_000);
    const old = out[2].content[0];
    expect(old.type === "tool_result" && old.content.length).toBeLessThan(1_200);
    expect(old.type === "tool_result" && old.content).toMatch(/^HEAD[\s\S]*characters trimmed[\s\S]*TAIL$/);
    expect(out[4]).toBe(messages[4]);
    expect(trimOldToolResults(out, 2, 1_000)).toBe(out);
  });
});

describe("compactionBoundary", () => {
  it("never starts the kept part with tool results", () => {
    const messages = [user("go"), call("a"), result("a"), call("b"), result("b"), call("c"), result("c")];
    const at = compactionBoundary(messages, 2);
    expect(at).toBe(5);
    expect(messages[at].role).toBe("assistant");
    // Every call kept has its result kept.
    const kept = messages.slice(at);
    const uses = kept.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
    const results = kept.flatMap((m) => m.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])));
    expect(results.every((id) => uses.includes(id))).toBe(true);
  });

  it("is 0 when there is nothing before the recent part", () => {
    expect(compactionBoundary([user("hi")], 6)).toBe(0);
    expect(compactionBoundary([user("go"), call("a"), result("a")], 1)).toBe(1);
  });

  it("for random transcripts, the kept part never begins with an orphan result", () => {
    for (let seed = 1; seed < 200; seed++) {
      const messages: Message[] = [user("start")];
      let n = seed;
      for (let turn = 0; turn < (seed % 17) + 1; turn++) {
        n = (n * 1103515245 + 12345) % 2 ** 31;
        if (n % 3 === 0) messages.push({ role: "assistant", content: [{ type: "text", text: "done" }] }, user("more"));
        else messages.push(call(`c${turn}`), result(`c${turn}`));
      }
      const at = compactionBoundary(messages, (seed % 5) + 1);
      if (at === 0) continue;
      expect(messages[at].content.some((b) => b.type === "tool_result")).toBe(false);
    }
  });
});

describe("withSummary", () => {
  it("puts the summary first, as the user, merged with a kept user message", () => {
    const messages = [user("go"), call("a"), result("a"), user("next")];
    const out = withSummary(messages, 3, "did a");
    expect(out).toHaveLength(1);
    expect(out[0].role).toBe("user");
    expect(out[0].content[0]).toEqual({ type: "text", text: `${SUMMARY_HEADER}\n\ndid a` });
    expect(out[0].content[1]).toEqual({ type: "text", text: "next" });
    const fromCall = withSummary([user("go"), call("a"), result("a")], 1, "s");
    expect(fromCall.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });
});

describe("summaryRequest", () => {
  it("fits the older part into the window and asks for no tools", () => {
    const older = [user("go"), call("a"), result("a", "y".repeat(500_000))];
    const request = summaryRequest(older, 4_096, 4);
    expect(request.tools).toEqual([]);
    const text = request.messages[0].content[0];
    expect(text.type === "text" && text.text.length).toBeLessThan(4_096 * 4 * 0.6 + 200);
  });
});
