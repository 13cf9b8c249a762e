// Images pasted or dropped into the composer: attached as thumbnails
// (removable) within the limits (PNG, JPEG, GIF, WebP; 5 MiB each; 4 a
// message), the others refused with the reason and the text kept; sent
// with the text; put back when a message is returned.
import { fireEvent, render, screen } from "@testing-library/svelte";
import { describe, expect, it, vi } from "vitest";
import { IMAGE_MAX_BYTES, readBase64, readImages, refusal } from "../lib/images";
import Composer from "./Composer.svelte";

const files = { list: async () => [], read: vi.fn() };
const PNG_BYTES = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const png = (name = "shot.png") => new File([PNG_BYTES], name, { type: "image/png" });

/** A file of `size` bytes that claims `type` (its bytes are never read when it is refused). */
function sized(name: string, type: string, size: number): File {
  const file = new File(["x"], name, { type });
  Object.defineProperty(file, "size", { value: size });
  return file;
}

function setup(draft: { text: string; images?: { type: "image"; media_type: string; data: string }[] } | null = null) {
  const onSend = vi.fn();
  const view = render(Composer, { props: { busy: false, draft, onSend, onStop: vi.fn(), files } });
  const box = screen.getByTestId("chat-input") as HTMLTextAreaElement;
  return { onSend, box, view };
}

const paste = (box: HTMLElement, list: File[], types: string[] = ["Files"]) => fireEvent.paste(box, { clipboardData: { files: list, items: [], types } });
const drop = (box: HTMLElement, list: File[]) => fireEvent.drop(box, { dataTransfer: { files: list, items: [], types: ["Files"], getData: () => "" } });

describe("images in the composer", () => {
  it("a pasted image becomes a thumbnail chip and goes with the text", async () => {
    const t = setup();
    await fireEvent.input(t.box, { target: { value: "What is this?" } });
    await paste(t.box, [png()]);
    await vi.waitFor(() => expect(screen.getAllByTestId("image-chip")).toHaveLength(1));
    const thumb = screen.getByTestId("image-chip").querySelector("img")!;
    expect(thumb.getAttribute("src")).toBe(`data:image/png;base64,${btoa(String.fromCharCode(...PNG_BYTES))}`);
    await fireEvent.click(screen.getByTestId("send"));
    await vi.waitFor(() => expect(t.onSend).toHaveBeenCalled());
    expect(t.onSend).toHaveBeenCalledWith("What is this?", [{ type: "image", media_type: "image/png", data: "iVBORw0KGgo=" }]);
    expect(screen.queryByTestId("image-chip")).toBeNull();
    expect(t.box.value).toBe("");
  });

  it("a dropped image is attached, can be removed, and an image alone can be sent", async () => {
    const t = setup();
    await drop(t.box, [png("a.png"), png("b.png")]);
    await vi.waitFor(() => expect(screen.getAllByTestId("image-chip")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("image-remove")[0]);
    expect(screen.getAllByTestId("image-chip")).toHaveLength(1);
    expect((screen.getByTestId("send") as HTMLButtonElement).disabled).toBe(false);
    await fireEvent.click(screen.getByTestId("send"));
    await vi.waitFor(() => expect(t.onSend).toHaveBeenCalledWith("", [expect.objectContaining({ media_type: "image/png" })]));
  });

  it("refuses other types, images over 5 MiB and more than 4, says why and keeps the text", async () => {
    const t = setup();
    await fireEvent.input(t.box, { target: { value: "keep me" } });
    await paste(t.box, [sized("doc.pdf", "application/pdf", 100), sized("huge.png", "image/png", IMAGE_MAX_BYTES + 1), png("1.png"), png("2.png"), png("3.png"), png("4.png"), png("5.png")]);
    await vi.waitFor(() => expect(screen.getAllByTestId("image-chip")).toHaveLength(4));
    const notice = screen.getByTestId("image-notice").textContent ?? "";
    expect(notice).toContain("doc.pdf: application/pdf is not an image that can be sent (PNG, JPEG, GIF or WebP)");
    expect(notice).toContain("huge.png: 5.0 MiB is over the 5 MiB limit per image");
    expect(notice).toContain("5.png: a message carries at most 4 images");
    expect(t.box.value).toBe("keep me");
  });

  it("two quick pastes together attach no more than 4", async () => {
    setup();
    const box = screen.getByTestId("chat-input");
    // The second paste comes before the first is read: both see no image attached.
    await Promise.all([paste(box, [png("1.png"), png("2.png"), png("3.png")]), paste(box, [png("4.png"), png("5.png"), png("6.png")])]);
    await vi.waitFor(() => expect(screen.getByTestId("image-notice").textContent).toContain("a message carries at most 4 images"));
    expect(screen.getAllByTestId("image-chip")).toHaveLength(4);
    expect(screen.getByTestId("image-notice").textContent).toContain("6.png: a message carries at most 4 images");
  });

  it("a paste of text alone is left to the text box", async () => {
    const t = setup();
    const event = new Event("paste", { bubbles: true, cancelable: true });
    Object.defineProperty(event, "clipboardData", { value: { files: [], items: [], types: ["text/plain"] } });
    t.box.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(false);
    expect(screen.queryByTestId("image-chip")).toBeNull();
  });

  it("a paste with no text and no files takes the clipboard's image from the app (WebKitGTK gives the page none)", async () => {
    const clipboardImage = vi.fn(async () => PNG_BYTES.buffer.slice(0) as ArrayBuffer);
    render(Composer, { props: { busy: false, onSend: vi.fn(), onStop: vi.fn(), files, clipboardImage } });
    const box = screen.getByTestId("chat-input");
    const event = new Event("paste", { bubbles: true, cancelable: true });
    Object.defineProperty(event, "clipboardData", { value: { files: [], items: [], types: [] } });
    box.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(screen.getAllByTestId("image-chip")).toHaveLength(1));
    expect(screen.getByTestId("image-chip").querySelector("img")?.getAttribute("src")).toBe(`data:image/png;base64,${btoa(String.fromCharCode(...PNG_BYTES))}`);
    expect(clipboardImage).toHaveBeenCalledTimes(1);

    // A paste of text never asks.
    await paste(box, [], ["text/plain"]);
    expect(clipboardImage).toHaveBeenCalledTimes(1);
  });

  it("says so when the clipboard holds no image, or cannot be read", async () => {
    const clipboardImage = vi.fn(async () => new ArrayBuffer(0));
    render(Composer, { props: { busy: false, onSend: vi.fn(), onStop: vi.fn(), files, clipboardImage } });
    const box = screen.getByTestId("chat-input");
    await paste(box, [], []);
    await vi.waitFor(() => expect(screen.getByTestId("image-notice").textContent).toContain("Nothing pasted: the clipboard holds no text and no image."));
    clipboardImage.mockRejectedValueOnce({ code: "io", message: "the clipboard could not be read: no display", hint: "Copy the image again.", retryable: false, details: {} });
    await paste(box, [], []);
    await vi.waitFor(() => expect(screen.getByTestId("image-notice").textContent).toContain("Nothing pasted: the clipboard could not be read: no display. Copy the image again."));
    expect(screen.queryByTestId("image-chip")).toBeNull();
  });

  it("a message given back holds its text and images again", async () => {
    setup({ text: "Look at this", images: [{ type: "image", media_type: "image/gif", data: "R0lGODlh" }] });
    expect((screen.getByTestId("chat-input") as HTMLTextAreaElement).value).toBe("Look at this");
    expect(screen.getAllByTestId("image-chip")).toHaveLength(1);
    expect((screen.getByTestId("send") as HTMLButtonElement).disabled).toBe(false);
  });
});

describe("image limits", () => {
  it("takes the four types up to 5 MiB", async () => {
    expect(["image/png", "image/jpeg", "image/gif", "image/webp"].map((type) => refusal({ type, size: IMAGE_MAX_BYTES }))).toEqual([null, null, null, null]);
    expect(refusal({ type: "image/svg+xml", size: 10 })).toContain("not an image that can be sent");
    expect(refusal({ type: "", size: 10 })).toContain("an unknown type");
    const read = await readImages([png()], 4);
    expect(read).toEqual({ images: [], names: [], refused: ["shot.png: a message carries at most 4 images"] });
  });

  it("reads an image as padded base64", async () => {
    const bytes = new Uint8Array(100_001).map((_, i) => i % 256);
    expect(await readBase64(new File([bytes], "big.png", { type: "image/png" }))).toBe(btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join("")));
  });
});

describe("drafts", () => {
  it("join what was typed and attached meanwhile, images up to the limit", async () => {
    const gif = { type: "image" as const, media_type: "image/gif", data: "R0lGODlh" };
    const t = setup();
    await fireEvent.input(t.box, { target: { value: "typed meanwhile" } });
    await paste(t.box, [png("1.png"), png("2.png")]);
    await vi.waitFor(() => expect(screen.getAllByTestId("image-chip")).toHaveLength(2));
    await t.view.rerender({ draft: { text: "Look at this", images: [gif, gif, gif] } });
    expect(t.box.value).toBe("Look at this\n\ntyped meanwhile");
    const chips = screen.getAllByTestId("image-chip").map((chip) => chip.querySelector("img")!.getAttribute("src"));
    expect(chips).toEqual([...Array(3).fill("data:image/gif;base64,R0lGODlh"), `data:image/png;base64,${btoa(String.fromCharCode(...PNG_BYTES))}`]);
    expect(screen.getByTestId("image-notice").textContent).toContain("1 image of those in the box");
  });

  it("are put in the box once each, not again when passed back", async () => {
    const first = { text: "edited question" };
    const returned = { text: "Look at this", images: [{ type: "image" as const, media_type: "image/gif", data: "R0lGODlh" }] };
    const t = setup(first);
    expect(t.box.value).toBe("edited question");
    await fireEvent.input(t.box, { target: { value: "" } });
    await t.view.rerender({ draft: returned });
    expect(t.box.value).toBe("Look at this");
    await fireEvent.input(t.box, { target: { value: "" } });
    await fireEvent.click(screen.getByTestId("image-remove"));
    // The returned message is gone from the loop's state: the earlier draft is passed again.
    await t.view.rerender({ draft: first });
    expect(t.box.value).toBe("");
    expect(screen.queryByTestId("image-chip")).toBeNull();
  });
});
