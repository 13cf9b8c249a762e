// @vitest-environment node
import { expect, it } from "vitest";
// @ts-expect-error: a build script in plain JS, without types.
import { bundle, checkedIn } from "../../exec.build.mjs";

it("the bundle corral-cli embeds is built from these sources (npm run build:exec)", async () => {
  const built: string = await bundle();
  expect(await checkedIn()).toBe(built);
}, 30_000);
