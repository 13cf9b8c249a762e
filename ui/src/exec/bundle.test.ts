// @vitest-environment node
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
// @ts-expect-error: a build script in plain JS, without types.
import { BUNDLE, bundle } from "../../exec.build.mjs";

it("the bundle corral-cli embeds is built from these sources (npm run build:exec)", async () => {
  const built: string = await bundle();
  expect(await readFile(BUNDLE, "utf8")).toBe(built);
}, 30_000);
