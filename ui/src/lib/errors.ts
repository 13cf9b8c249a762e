import type { ErrorCode, WireError } from "./types";

/** Builds a standardized error on the UI side (for failures Rust never saw). */
export function wireError(code: ErrorCode, message: string, hint = "", details: Record<string, unknown> = {}): WireError {
  return { code, message, hint, retryable: false, details };
}

export function isWireError(value: unknown): value is WireError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as WireError).code === "string" &&
    typeof (value as WireError).message === "string"
  );
}

/**
 * Whatever an `invoke` rejected with, as a WireError. Rust always sends the
 * standardized shape; a bare string means the command itself was missing or
 * its arguments did not deserialize, which is a bug worth showing verbatim.
 */
export function toWireError(value: unknown): WireError {
  if (isWireError(value)) {
    return {
      code: value.code,
      message: value.message,
      hint: value.hint ?? "",
      retryable: value.retryable ?? false,
      details: value.details ?? {},
    };
  }
  const message = value instanceof Error ? value.message : String(value);
  return wireError("io", message, "This looks like a bug in Corral; please report it with this message.");
}

/**
 * An error as one line of prose: its message, then its hint as a sentence
 * of its own. Messages end without a stop (`… Name or service not known`),
 * so a bare join ran the two together (`known Check the …`).
 */
export function errorLine(error: WireError): string {
  const message = error.message.trim();
  const hint = error.hint.trim();
  if (hint === "") return message;
  const stop = /[.!?]$/.test(message) ? "" : ".";
  return `${message}${stop} ${hint}`;
}
