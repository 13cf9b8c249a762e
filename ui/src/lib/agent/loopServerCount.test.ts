// The loop on llama.cpp, whose server counts tokens with the model's own
// template and tokenizer: the fixed prefix is counted once per model and
// the estimate corrected by it before the first request is sized.
import { describe, expect, it } from "vitest";
import { fakeIpc, say } from "../../test/fakeIpc";
import type { LlmRequest } from "../types";
import { replyLimit, TokenEstimate } from "./context";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop } from "./loop";

const WINDOW = 4_096;

function setup(countsTokens: boolean, count: (request: LlmRequest) => number | null) {
  const fake = fakeIpc([say("One."), say("Two.")]);
  fake.ipc.modelInfo.mockResolvedValue({ context_window: WINDOW, source: "server", ...(countsTokens ? { counts_tokens: true } : {}) });
  fake.ipc.countPromptTokens.mockImplementation(async (request) => count(request));
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  return { ...fake, loop };
}

/** A tokenizer a third denser than the estimate's default: what the server counts of a request. */
const denser = (request: LlmRequest) => Math.round(new TokenEstimate().tokens(request) * 1.3);

describe("a server that counts tokens", () => {
  it("counts the prefix once, and the first request is sized by the corrected estimate", async () => {
    const t = setup(true, denser);
    await t.loop.send("hi");
    expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(1);
    const [prefix] = t.ipc.countPromptTokens.mock.calls[0];
    const [first] = t.requests;
    // The prefix the requests send: their system prompt and tools, no messages.
    expect(prefix).toEqual({ system: first.system, messages: [], tools: first.tools });

    const corrected = new TokenEstimate();
    corrected.calibrate(prefix, denser(prefix));
    expect(corrected.ratio).toBeLessThan(new TokenEstimate().ratio);
    const sent = { ...first, max_tokens: undefined };
    delete sent.max_tokens;
    // The meter shows the corrected estimate (the server reported no usage), and the reply's room follows it.
    expect(t.loop.state.get().context?.used).toBe(corrected.tokens(sent));
    expect(first.max_tokens).toBe(replyLimit(WINDOW, corrected.tokens(sent)));
    expect(first.max_tokens).toBeLessThan(replyLimit(WINDOW, new TokenEstimate().tokens(sent)));

    await t.loop.send("again");
    expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(1);
  });

  it("asks again after the model changed", async () => {
    const t = setup(true, denser);
    await t.loop.send("hi");
    t.loop.resetModel();
    await t.loop.send("again");
    expect(t.ipc.countPromptTokens).toHaveBeenCalledTimes(2);
  });

  it("leaves the estimate as it is when the server cannot count", async () => {
    const t = setup(true, () => null);
    await t.loop.send("hi");
    const [first] = t.requests;
    const sent = { ...first };
    delete sent.max_tokens;
    expect(t.loop.state.get().context?.used).toBe(new TokenEstimate().tokens(sent));
  });

  it("is not asked of a server that does not say it counts", async () => {
    const t = setup(false, denser);
    await t.loop.send("hi");
    expect(t.ipc.countPromptTokens).not.toHaveBeenCalled();
  });
});
