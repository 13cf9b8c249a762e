// A remote folder's name as the welcome screen reads it. Rust reads it
// strictly (corral-remote's Remote::parse) and refuses a malformed one;
// this only names the host in the question about copying corral-cli.
import type { WireError } from "./types";

/** The host (with its user) a remote folder's name reaches, or null for a local path. */
export function remoteHost(name: string): string | null {
  const url = /^ssh:\/\/([^/]+)\//.exec(name);
  if (url) return url[1].replace(/:\d+$/, "");
  const scp = /^([^/:]+):\//.exec(name);
  return scp ? scp[1] : null;
}

/** The folder on the remote corral-cli would be copied to, when `error` asks for that. */
export function installFolder(error: WireError): string | null {
  if (error.code !== "approval_required") return null;
  const folder = error.details?.folder;
  return typeof folder === "string" ? folder : null;
}
