/** Splits a message on backticks: odd pieces are code (`path`, `command`). */
export function inlineCode(text: string): { text: string; code: boolean }[] {
  return text
    .split("`")
    .map((piece, i) => ({ text: piece, code: i % 2 === 1 }))
    .filter((piece) => piece.text !== "");
}
