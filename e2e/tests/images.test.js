// Images in a message, in the real app: an image pasted (or dropped) into
// the composer shows as a thumbnail chip, goes to the scripted server as
// the wire format's image block (OpenAI-compatible `image_url` data URL;
// Anthropic `image` with a base64 source), shows under the sent message,
// and is still there, and sent again, after a restart. A server refusing
// images gives the clear error, and the text and image are back in the box
// to send again.
// The paste and the drop are synthetic events in the page carrying a File.

import assert from "node:assert/strict";
import { test } from "node:test";
import { tid, withApp } from "../lib/app.js";
import { anthropic, openai } from "../lib/wire.js";

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/** Pastes (or drops, with `kind` "drop") a PNG file named `arguments[1]` on the chat input. */
const GIVE_IMAGE = `
  const [data, name, kind] = arguments;
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const file = new File([bytes], name, { type: "image/png" });
  const carried = { files: [file], items: [], types: ["Files"], getData: () => "" };
  const event = new Event(kind, { bubbles: true, cancelable: true });
  Object.defineProperty(event, kind === "drop" ? "dataTransfer" : "clipboardData", { value: carried });
  document.querySelector('[data-testid="chat-input"]').dispatchEvent(event);
  return event.defaultPrevented;`;

async function giveImage(app, kind, name = "dot.png") {
  await app.waitFor(tid("chat-input"), { what: "the chat input" });
  const taken = await app.session.execute(GIVE_IMAGE, [PNG, name, kind]);
  assert.equal(taken, true, `the composer takes the ${kind}`);
  await app.waitFor(tid("image-chip"), { what: "the image's thumbnail chip" });
}

const lastUser = (body) => body.messages.filter((m) => m.role === "user").at(-1);

test("a pasted image goes to an OpenAI-compatible server as an image_url part, and again after a restart", { timeout: 180_000 }, async (t) => {
  const script = [openai.text("A single dot."), openai.text("Still a dot.")];
  await withApp(t, { script }, async (app) => {
    await giveImage(app, "paste");
    await app.send("What is in this image?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("A single dot."), { what: "the reply" });
    await app.llm.waitForRequests(1);
    assert.deepEqual(lastUser(app.llm.requests[0].body).content, [
      { type: "text", text: "What is in this image?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
    ]);
    await app.waitFor(tid("message-image"), { check: (e) => e.attrs.src === `data:image/png;base64,${PNG}`, what: "the image under the sent message" });
    assert.equal((await app.query(tid("image-chip"))).length, 0, "the chip left the box with the message");
    await app.screenshot("sent");

    // Opened again: the image is shown and goes with the conversation's next request.
    await app.restart();
    await app.waitFor(tid("message-image"), { what: "the image after a restart" });
    await app.send("And now?");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Still a dot."), { what: "the second reply" });
    await app.llm.waitForRequests(2);
    const first = app.llm.requests[1].body.messages.find((m) => m.role === "user");
    assert.deepEqual(first.content[1], { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } });
  });
});

test("a dropped image goes to Anthropic as an image block with a base64 source", { timeout: 120_000 }, async (t) => {
  await withApp(t, { script: [anthropic.text("A dot.")], provider: "anthropic" }, async (app) => {
    await giveImage(app, "drop");
    await app.send("Describe it.");
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("A dot."), { what: "the reply" });
    await app.llm.waitForRequests(1);
    const content = lastUser(app.llm.requests[0].body).content;
    assert.deepEqual(content.slice(0, 2), [
      { type: "text", text: "Describe it." },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
    ]);
  });
});

test("a model refusing images gives the clear error and the message comes back to the box", { timeout: 120_000 }, async (t) => {
  const script = [openai.error(400, "Model does not support images. Please use a model that does.", "invalid_request_error"), openai.text("Without it, then.")];
  await withApp(t, { script }, async (app) => {
    await giveImage(app, "paste");
    await app.send("What is this?");
    const banner = await app.waitFor(tid("error-banner"), { what: "the error" });
    assert.match(banner.text, /refused the message's images \(HTTP 400\)/);
    assert.match(banner.text, /accepts images/);
    await app.waitFor(tid("chat-input"), { check: () => true });
    const box = await app.session.execute(`return document.querySelector('[data-testid="chat-input"]').value;`);
    assert.equal(box, "What is this?");
    await app.waitFor(tid("image-chip"), { what: "the image back in the box" });
    assert.equal((await app.query(tid("message-user"))).length, 0, "the refused message is taken back");
    await app.screenshot("refused");

    // Sent again without the image: the request holds the text once, and no image.
    await app.click(tid("image-remove"));
    await app.waitGone(tid("image-chip"));
    await app.click(tid("send"));
    await app.waitForAny(tid("message-assistant"), (e) => e.text.includes("Without it, then."), { what: "the reply" });
    await app.llm.waitForRequests(2);
    const users = app.llm.requests[1].body.messages.filter((m) => m.role === "user");
    assert.deepEqual(users, [{ role: "user", content: "What is this?" }]);
  });
});
