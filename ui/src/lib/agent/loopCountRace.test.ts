// The race between llama.cpp's count of the fixed prefix and the first
// send: the count decides whether a big paste goes inline or as an
// attachment, so a send made while it is on its way waits for it, a
// little while at most.
import { describe, expect, it, vi } from "vitest";
import { fakeIpc, say } from "../../test/fakeIpc";
import type { LlmRequest } from "../types";
import { TokenEstimate } from "./context";
import { resultShare } from "./fitting";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";

const WINDOW = 8_192;

/** A tokenizer denser than the estimate's default: the server counts more tokens, so less text fits. */
const denser = (request: LlmRequest) => Math.round(new TokenEstimate().tokens(request) * 1.3);

function setup(countWaitMs?: number) {
  const fake = fakeIpc([say("Read it."), say("Again.")]);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: WINDOW, source: "server", counts_tokens: true });
  const answers: Array<() => void> = [];
  fake.ipc.countPromptTokens.mockImplementation((request) => new Promise((resolve) => answers.push(() => resolve(denser(request)))));
  const options = { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run: () => void) => run(), instructions: NO_INSTRUCTIONS };
  const loop = new AgentLoop(fake.ipc, countWaitMs === undefined ? options : { ...options, countWaitMs });
  return { ...fake, loop, answer: () => answers.forEach((answer) => answer()) };
}

/** A paste small enough for its share by the default estimate, and too big once the server's count corrects it. */
function pasteBetween(prefix: LlmRequest): string {
  const guessed = new TokenEstimate();
  const counted = new TokenEstimate();
  counted.calibrate(prefix, denser(prefix), false);
  const [large, small] = [resultShare(WINDOW, guessed.tokens(prefix), guessed.ratio), resultShare(WINDOW, counted.tokens(prefix), counted.ratio)];
  expect(large).toBeGreaterThan(small + 100);
  const size = Math.floor((small + large) / 2);
  return Array.from({ length: Math.ceil(size / 30) }, (_, i) => `row ${String(i).padStart(4, "0")}: a line of pasted log\n`).join("").slice(0, size);
}

const ATTACHED = /^\[The user's message is [\d,]+ characters, more than fits/;

const firstText = (request: LlmRequest) => request.messages[0].content.map((b) => (b.type === "text" ? b.text : "")).join("");

describe("a send while the server's count is on its way", () => {
  it("waits for the count, so a paste that does not fit by it goes as an attachment", async () => {
    const t = setup();
    // The settings were just saved: the loop asks about the model and starts the count.
    const refreshing = t.loop.refreshModel();
    await vi.waitFor(() => expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(1));
    const [prefix] = t.ipc.countPromptTokens.mock.calls[0];
    const paste = pasteBetween(prefix);
    const sending = t.loop.send(paste);
    await new Promise((r) => setTimeout(r, 30));
    expect(t.requests).toHaveLength(0);
    t.answer();
    await Promise.all([sending, refreshing]);
    expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(1);
    expect(firstText(t.requests[0])).toMatch(ATTACHED);
  });

  it("waits no longer than the bound, then sizes by the estimate; the late count corrects the next send", async () => {
    const t = setup(80);
    const started = Date.now();
    const refreshing = t.loop.refreshModel();
    await vi.waitFor(() => expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(1));
    const paste = pasteBetween(t.ipc.countPromptTokens.mock.calls[0][0]);
    await t.loop.send(paste);
    await refreshing;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(firstText(t.requests[0])).toBe(paste);

    t.answer();
    await Promise.resolve();
    await t.loop.send(paste);
    // Its text follows the summary of the first send when that was compacted.
    const last = t.requests.at(-1)?.messages.at(-1)?.content.at(-1);
    expect(last?.type === "text" && last.text).toMatch(ATTACHED);
  });

  it("does not wait where the server cannot count", async () => {
    const t = setup();
    t.ipc.modelInfo.mockResolvedValue({ context_window: WINDOW, source: "server" });
    const started = Date.now();
    await t.loop.send("hi");
    expect(Date.now() - started).toBeLessThan(500);
    expect(t.ipc.countPromptTokens).not.toHaveBeenCalled();
  });
});
