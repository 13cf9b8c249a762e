// Bundles `corral-cli exec`'s script (src/exec/main.ts: the agent loop and
// its entry) into one file the CLI embeds: `npm run build:exec`. The bundle
// is checked in, so that `cargo build` needs no Node; src/exec/bundle.test.ts
// fails when it is older than its sources.
import { build } from "esbuild";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** Where the CLI includes it from (crates/corral-cli/src/exec/engine.rs). */
export const BUNDLE = here("../crates/corral-cli/js/exec.js");

/** The bundle as checked in. */
export function checkedIn() {
  return readFile(BUNDLE, "utf8");
}

/** The bundle's text, as its sources build it now. */
export async function bundle() {
  const result = await build({
    entryPoints: [here("src/exec/main.ts")],
    bundle: true,
    format: "iife",
    // QuickJS takes ES2023.
    target: "es2022",
    legalComments: "none",
    logLevel: "warning",
    write: false,
  });
  return result.outputFiles[0].text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { writeFile } = await import("node:fs/promises");
  await writeFile(BUNDLE, await bundle());
}
