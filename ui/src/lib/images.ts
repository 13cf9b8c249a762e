// Images the person pastes or drops into the composer: which files are
// taken (PNG, JPEG, GIF, WebP; 5 MiB each; 4 a message; the Rust bridge
// checks type and size again, and 100 a request), read as the base64
// `image` blocks a user message carries, and why the others were refused.
// The limits are Rust's (corral-llm), generated into wire.ts.
import type { ImageBlock } from "./types";
import { IMAGE_MAX_BYTES, IMAGE_TYPES, IMAGES_PER_MESSAGE } from "./wire";

export { IMAGE_MAX_BYTES, IMAGE_TYPES, IMAGES_PER_MESSAGE, IMAGES_PER_REQUEST } from "./wire";

/** The files a paste or a drop carries (of any type: the limits are checked when they are read). */
export function filesOf(data: DataTransfer | null | undefined): File[] {
  if (!data) return [];
  const files = [...(data.files ?? [])];
  if (files.length > 0) return files;
  // Some platforms put a pasted image in `items` only.
  return [...(data.items ?? [])].flatMap((item) => {
    const file = item.kind === "file" ? item.getAsFile() : null;
    return file ? [file] : [];
  });
}

/** Whether a file may be attached as an image, and if not, why. */
export function refusal(file: Pick<File, "type" | "size">): string | null {
  if (!IMAGE_TYPES.includes(file.type)) return `${file.type || "an unknown type"} is not an image that can be sent (PNG, JPEG, GIF or WebP)`;
  if (file.size > IMAGE_MAX_BYTES) return `${mib(file.size)} is over the ${IMAGE_MAX_BYTES / (1024 * 1024)} MiB limit per image`;
  return null;
}

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/**
 * Reads the files that may be attached, after the `already` attached:
 * at most `IMAGES_PER_MESSAGE` in all. `names` names each image read, in
 * order; `refused` says why each other file was left out, by name.
 */
export async function readImages(files: File[], already: number): Promise<{ images: ImageBlock[]; names: string[]; refused: string[] }> {
  const images: ImageBlock[] = [];
  const names: string[] = [];
  const refused: string[] = [];
  for (const file of files) {
    const name = file.name || "pasted image";
    const why = refusal(file);
    if (why) {
      refused.push(`${name}: ${why}`);
    } else if (already + images.length >= IMAGES_PER_MESSAGE) {
      refused.push(`${name}: a message carries at most ${IMAGES_PER_MESSAGE} images`);
    } else {
      try {
        images.push({ type: "image", media_type: file.type, data: await readBase64(file) });
        names.push(name);
      } catch (e) {
        refused.push(`${name}: it could not be read (${e instanceof Error ? e.message : String(e)})`);
      }
    }
  }
  return { images, names, refused };
}

/** The file's bytes as standard, padded base64 (read as a `data:` URL, its prefix cut). */
export function readBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/** The image as a `data:` URL, for an `<img>` (the window's CSP allows `data:` images). */
export function dataUrl(image: ImageBlock): string {
  return `data:${image.media_type};base64,${image.data}`;
}

/** About how many bytes the image holds (its base64 is a third longer). */
export function imageBytes(image: ImageBlock): number {
  return Math.floor((image.data.length * 3) / 4);
}
