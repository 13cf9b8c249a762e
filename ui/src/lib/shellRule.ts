// The rule "Always allow" proposes for a command, as Rust saves it
// (corral-tools shell/saved.rs, SavedRule::proposed): the program and its
// leading words made of letters, digits and -_+@ only, up to the first
// other one, a `--`, or past two. `npm test -- x` → `npm test`.

const WORD = /^[A-Za-z0-9_+@-]+$/;

export function proposedRule(input: Record<string, unknown>): string | undefined {
  const command = input.command;
  if (typeof command !== "string" || command === "") return undefined;
  const args = Array.isArray(input.args) ? input.args : [];
  const words: string[] = [];
  for (const arg of args) {
    if (words.length === 2 || typeof arg !== "string" || arg === "--" || !WORD.test(arg)) break;
    words.push(arg);
  }
  return [command, ...words].join(" ");
}
