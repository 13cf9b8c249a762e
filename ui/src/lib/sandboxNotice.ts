/**
 * What the window says, once, when commands ran without the namespaces
 * sandbox (no bubblewrap, or user namespaces disabled): every command then
 * asks, and Landlock confines only their writes.
 */
export function sandboxNotice(result: unknown): string | null {
  if (typeof result !== "object" || result === null) return null;
  const { sandbox, sandbox_note: note } = result as { sandbox?: unknown; sandbox_note?: unknown };
  if (sandbox === undefined || sandbox === "namespaces") return null;
  const why = typeof note === "string" && note !== "" ? ` (${note})` : "";
  return sandbox === "landlock"
    ? `Commands run without their full sandbox here${why}. Every command will ask first; only their writes are confined.`
    : `Commands run with no sandbox here${why}. Every command will ask first.`;
}
