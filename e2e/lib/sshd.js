// An OpenSSH server of the test's own on 127.0.0.1, for a remote project
// (as crates/corral-testkit/src/sshd.rs starts one for the Rust tests): a
// host key and a user key made for the test, the client's known_hosts
// holding that host key (host checking stays on), and a client config
// reaching it as the host alias `corral-test`. Give the app
// `CORRAL_SSH_CONFIG: sshd.config`. SetEnv gives the remote side its own
// cache (where a copied corral-cli goes), data folder and PATH. The
// "remote" is this machine: the test reads what changed there directly.

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const SSH_HOST = "corral-test";
const SSHD = "/usr/sbin/sshd";

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function listening(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

/** Why an sshd cannot be started here, or null. */
export function sshdMissing() {
  if (!fs.existsSync(SSHD)) return "OpenSSH's server is not installed (Debian package openssh-server): run `scripts/setup.sh --test`.";
  for (const tool of ["ssh", "ssh-keygen"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `\`${tool}\` is not installed (Debian package openssh-client).`;
    }
  }
  return null;
}

/**
 * Starts the server in `dir` (made here); `{ config, port, installed, stop }`.
 * `installed`: where the remote keeps a corral-cli of `version` it was given.
 */
export async function startSshd(dir, version) {
  const missing = sshdMissing();
  if (missing) throw new Error(`e2e: cannot start sshd: ${missing}`);
  fs.mkdirSync(dir, { recursive: true });
  for (const key of ["host_key", "user_key"]) {
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, key)]);
  }
  fs.copyFileSync(path.join(dir, "user_key.pub"), path.join(dir, "authorized_keys"));
  for (const folder of ["remote-cache", "remote-data", "remote-bin"]) fs.mkdirSync(path.join(dir, folder));
  const port = await freePort();
  const remotePath = `${path.join(dir, "remote-bin")}:/usr/local/bin:/usr/bin:/bin`;
  fs.writeFileSync(
    path.join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${path.join(dir, "host_key")}`,
      `PidFile ${path.join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${path.join(dir, "authorized_keys")}`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "LogLevel ERROR",
      `SetEnv XDG_CACHE_HOME=${path.join(dir, "remote-cache")} XDG_DATA_HOME=${path.join(dir, "remote-data")} PATH=${remotePath}`,
      "",
    ].join("\n"),
  );
  const hostKey = fs.readFileSync(path.join(dir, "host_key.pub"), "utf8");
  fs.writeFileSync(path.join(dir, "known_hosts"), `[127.0.0.1]:${port} ${hostKey}`);
  const user = os.userInfo().username;
  fs.writeFileSync(
    path.join(dir, "ssh_config"),
    [
      `Host ${SSH_HOST}`,
      "  HostName 127.0.0.1",
      `  Port ${port}`,
      `  User ${user}`,
      `  IdentityFile ${path.join(dir, "user_key")}`,
      "  IdentitiesOnly yes",
      `  UserKnownHostsFile ${path.join(dir, "known_hosts")}`,
      "  GlobalKnownHostsFile /dev/null",
      "  StrictHostKeyChecking yes",
      "",
    ].join("\n"),
  );
  // Run as root (as CI does), sshd wants its privilege separation folder.
  if (user === "root") fs.mkdirSync("/run/sshd", { recursive: true });
  const log = fs.openSync(path.join(dir, "sshd.log"), "a");
  const server = spawn(SSHD, ["-D", "-e", "-f", path.join(dir, "sshd_config")], { stdio: ["ignore", log, log] });
  fs.closeSync(log);
  let exited = null;
  const exit = new Promise((resolve) => server.once("exit", (code, signal) => resolve((exited = { code, signal }))));
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (exited) throw new Error(`e2e: sshd exited at start (${JSON.stringify(exited)}); see ${path.join(dir, "sshd.log")}`);
    if (Date.now() > deadline) throw new Error(`e2e: sshd did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const config = path.join(dir, "ssh_config");
  return {
    config,
    /**
     * Ends the connection ssh keeps open for the app's runtime folder
     * `runtime` (corral-remote's ControlPersist would keep it a minute).
     */
    closeShared(runtime) {
      const controlPath = path.join(runtime, `corral-ssh-${process.getuid()}`, "%C");
      try {
        execFileSync("ssh", ["-F", config, "-o", `ControlPath=${controlPath}`, "-O", "exit", SSH_HOST], { stdio: "ignore" });
      } catch {
        // none was open
      }
    },
    port,
    installed: path.join(dir, "remote-cache", "corral", "bin", `corral-cli-${version}`),
    async stop() {
      if (!exited) server.kill("SIGTERM");
      await exit;
    },
  };
}
