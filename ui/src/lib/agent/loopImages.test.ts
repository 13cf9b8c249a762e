// Images sent with a message: they go in the user message's content and
// are shown with it; stored once (in the message, not again in its item);
// a model refusing them takes the message back to the composer, and the
// conversation opened again leaves it out.
import { describe, expect, it } from "vitest";
import { assertConsistent, callTools, fakeIpc, say, use } from "../../test/fakeIpc";
import type { ImageBlock, NewEntry, StoredEntry, WireError } from "../types";
import { fromEntries } from "./conversation";
import { IMAGE_CHARS, TokenEstimate } from "./context";
import { NO_INSTRUCTIONS } from "./instructions";
import { AgentLoop, IMAGE_LEFT_OUT } from "./loop";

const png: ImageBlock = { type: "image", media_type: "image/png", data: "iVBORw0KGgo=" };
const gif: ImageBlock = { type: "image", media_type: "image/gif", data: "R0lGODlh" };

function setup(turns: Parameters<typeof fakeIpc>[0]) {
  const fake = fakeIpc(turns);
  const loop = new AgentLoop(fake.ipc, { projectRoot: "/p/app", newId: fake.newId, scheduleFrame: (run) => run(), instructions: NO_INSTRUCTIONS });
  return { ...fake, loop };
}

/** What the history holds after the appends so far, as it would be opened. */
function stored(appends: [string | null, NewEntry][]): StoredEntry[] {
  return appends.map(([, entry], seq) => ({ seq, message: entry.message ?? null, items: entry.items }));
}

const refusal: WireError = {
  code: "invalid_input",
  message: "The server refused the message's images (HTTP 400); the model may not accept images: Model does not support images.",
  hint: "Choose a model that accepts images (a vision model; llama.cpp needs its --mmproj) in the model switcher, or remove the images and send again.",
  retryable: false,
  details: { reason: "images_unsupported", status: 400 },
};

describe("images in a message", () => {
  it("go to the model after the text, are shown with the message and stored once", async () => {
    const t = setup([say("Two pictures.")]);
    await t.loop.send("What are these?", [png, gif]);
    expect(t.requests[0].messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "What are these?" }, png, gif] });
    expect(t.loop.state.get().items[0]).toMatchObject({ kind: "user", text: "What are these?", images: [png, gif] });

    const appends = t.ipc.appendEntry.mock.calls as [string | null, NewEntry][];
    const first = appends[0][1];
    expect(first.message?.content).toEqual([{ type: "text", text: "What are these?" }, png, gif]);
    // The item does not hold the data a second time.
    expect(JSON.stringify(first.items)).not.toContain(png.data);
    const opened = fromEntries(stored(appends));
    expect(opened.items[0]).toMatchObject({ kind: "user", text: "What are these?", images: [png, gif] });
    expect(opened.messages[0].content).toEqual([{ type: "text", text: "What are these?" }, png, gif]);
  });

  it("may be sent without text", async () => {
    const t = setup([say("A dot.")]);
    await t.loop.send("", [png]);
    expect(t.requests[0].messages.at(-1)).toEqual({ role: "user", content: [png] });
  });

  it("refused by the model take the message back to the composer, and the history leaves it out", async () => {
    const t = setup([say("Hello."), (emit) => emit({ type: "error", error: refusal }), say("Without the picture, then.")]);
    await t.loop.send("Hi");
    await t.loop.send("Look at this", [png]);
    const state = t.loop.state.get();
    expect(state.error).toEqual(refusal);
    expect(state.returned).toEqual({ text: "Look at this", images: [png] });
    expect(state.items.map((i) => i.kind)).toEqual(["user", "assistant"]);
    expect(t.loop.transcript).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi" }] },
      { role: "assistant", content: [{ type: "text", text: "Hello." }] },
    ]);

    // Sent again without the image: the model gets no trace of the refused one.
    await t.loop.send("Look at this");
    expect(t.requests[2].messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "Look at this" }] });
    expect(t.loop.state.get().returned).toBeNull();

    const opened = fromEntries(stored(t.ipc.appendEntry.mock.calls as [string | null, NewEntry][]));
    expect(opened.messages.map((m) => m.content)).toEqual([
      [{ type: "text", text: "Hi" }],
      [{ type: "text", text: "Hello." }],
      [{ type: "text", text: "Look at this" }],
      [{ type: "text", text: "Without the picture, then." }],
    ]);
    expect(opened.items.filter((i) => i.kind === "user").map((i) => i.kind === "user" && i.text)).toEqual(["Hi", "Look at this"]);
  });

  it("refused after a tool round in the same turn leave the transcript whole and only show the error", async () => {
    const read = use("read_file", { path: "shot.txt" });
    const t = setup([callTools(read), (emit) => emit({ type: "error", error: refusal })]);
    await t.loop.send("Look at this", [png]);
    const state = t.loop.state.get();
    expect(state.error).toEqual(refusal);
    expect(state.returned).toBeNull();
    expect(state.items[0]).toMatchObject({ kind: "user", text: "Look at this", images: [png] });
    const transcript = t.loop.transcript;
    assertConsistent(transcript);
    expect(transcript.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(transcript[0].content).toEqual([{ type: "text", text: "Look at this" }, png]);
    expect(transcript[2].content).toEqual([expect.objectContaining({ type: "tool_result", tool_use_id: read.id })]);
  });

  it("from earlier in the conversation are left out once the model refuses them, and the turn is sent again", async () => {
    const refuse = (emit: (e: { type: "error"; error: WireError }) => void) => emit({ type: "error", error: refusal });
    const t = setup([say("A dot."), refuse, say("Fine without it."), say("Still fine."), say("I see the dot again.")]);
    await t.loop.send("Look", [png]);
    // The model changed to one that takes no images.
    await t.loop.send("And now?");
    expect(t.loop.state.get().error).toBeNull();
    expect(t.requests).toHaveLength(3);
    const leftOut = [{ type: "text", text: "Look" }, { type: "text", text: IMAGE_LEFT_OUT }];
    expect(t.requests[2].messages[0].content).toEqual(leftOut);
    expect(t.requests[2].messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "And now?" }] });
    const items = t.loop.state.get().items;
    expect(items.some((i) => i.kind === "notice" && i.text.includes("takes no images"))).toBe(true);
    expect(items.filter((i) => i.kind === "assistant").map((i) => i.kind === "assistant" && i.text)).toEqual(["A dot.", "Fine without it."]);
    // The conversation keeps the image; later turns go on without it.
    expect(t.loop.transcript[0].content).toEqual([{ type: "text", text: "Look" }, png]);
    await t.loop.send("More?");
    expect(t.requests[3].messages[0].content).toEqual(leftOut);
    // Another model: it is sent the image again.
    t.loop.resetModel();
    await t.loop.send("Back to the dot.");
    expect(t.requests[4].messages[0].content).toEqual([{ type: "text", text: "Look" }, png]);
  });

  it("of this message refused with earlier ones: the message goes back to the box, and the next goes without any", async () => {
    const refuse = (emit: (e: { type: "error"; error: WireError }) => void) => emit({ type: "error", error: refusal });
    const t = setup([say("A dot."), refuse, refuse, say("Text only, then.")]);
    await t.loop.send("Look", [png]);
    await t.loop.send("And this", [gif]);
    // This message's images are the likely cause: nothing is sent again, earlier images are not given up.
    expect(t.requests).toHaveLength(2);
    expect(t.loop.state.get().error).toEqual(refusal);
    expect(t.loop.state.get().returned).toEqual({ text: "And this", images: [gif] });
    expect(t.loop.state.get().items.some((i) => i.kind === "notice")).toBe(false);
    // Without them, the earlier image is refused too: it is left out, and the turn sent again.
    await t.loop.send("And this");
    expect(t.requests).toHaveLength(4);
    expect(t.requests[2].messages[0].content).toContainEqual(png);
    expect(t.requests[3].messages.flatMap((m) => m.content).some((b) => b.type === "image")).toBe(false);
    expect(t.loop.state.get().error).toBeNull();
  });

  it("over the limits are refused before the message is recorded, and it goes back to the box", async () => {
    const t = setup([say("Hello.")]);
    await t.loop.send("Five of them", [png, png, png, gif, gif]);
    const state = t.loop.state.get();
    expect(state.error).toMatchObject({ code: "invalid_input", message: "The message carries 5 images; at most 4 can be sent with one message." });
    expect(state.returned).toEqual({ text: "Five of them", images: [png, png, png, gif, gif] });
    expect(state.items).toEqual([]);
    expect(t.loop.transcript).toEqual([]);
    expect(t.requests).toHaveLength(0);
    expect(t.ipc.appendEntry).not.toHaveBeenCalled();
  });

  it("count as a fixed size in the context estimate, not as their base64", () => {
    const big: ImageBlock = { type: "image", media_type: "image/png", data: "A".repeat(4_000_000) };
    const estimate = new TokenEstimate();
    const request = (images: ImageBlock[]) => ({ system: "", messages: [{ role: "user" as const, content: images }], tools: [] });
    const one = estimate.tokens(request([big]));
    expect(one).toBeLessThan(IMAGE_CHARS);
    expect(estimate.tokens(request([big, big]))).toBeGreaterThan(one);
  });
});
