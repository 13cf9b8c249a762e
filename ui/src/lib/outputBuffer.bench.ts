// How fast command output is taken in and drawn: 100k coloured lines
// folded into an OutputBuffer in 100 chunks (as the shell Channel delivers
// them), and one screenful of rows rendered to HTML. `npm run bench`;
// figures in docs/benchmarks.md.
import { bench, describe } from "vitest";
import { ansiLineToHtml } from "./ansi";
import { OutputBuffer } from "./outputBuffer";

const LINES = 100_000;
const text = Array.from({ length: LINES }, (_, i) => `\x1b[32mok\x1b[0m line ${i} of the build output`).join("\n") + "\n";
const chunks = Array.from({ length: 100 }, (_, i) => text.slice((i * text.length) / 100, ((i + 1) * text.length) / 100));

describe("command output", () => {
  bench("fold 100k lines in 100 chunks", () => {
    const buffer = new OutputBuffer((run) => run());
    for (const data of chunks) buffer.push({ stream: "stdout", data });
  });

  const full = new OutputBuffer((run) => run());
  for (const data of chunks) full.push({ stream: "stdout", data });
  bench("render the 60 visible rows at line 50,000", () => {
    for (let i = 50_000; i < 50_060; i++) ansiLineToHtml(full.lines[i].text, full.lines[i].sgr);
  });
});
