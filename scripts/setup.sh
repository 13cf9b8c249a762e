#!/usr/bin/env bash
# Installs whatever is missing on a Debian machine, and nothing twice:
# system packages (apt-get), the UI's npm packages (npm ci from the
# committed lockfile) and, with --test, the cargo tools the tests use.
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=false
[ "${1:-}" = "--test" ] && want_test=true

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)

# Build: Tauri 2 on Linux needs WebKitGTK 4.1 (pulls gtk, soup, jsc).
# Run: bubblewrap builds the namespaces every command runs in.
packages=(build-essential pkg-config curl file libwebkit2gtk-4.1-dev xvfb xauth bubblewrap)
# Tests: the WebDriver for the end-to-end suite, ripgrep for the search
# benchmark, venv for the MCP test client (the official Python SDK).
$want_test && packages+=(webkit2gtk-driver ripgrep python3-venv)
# Remote projects are tested against a real OpenSSH server on 127.0.0.1.
$want_test && packages+=(openssh-server openssh-client)
# Tasks in containers are tested with a real engine (Podman, as root, with runc) on an image made from Debian's packages (mmdebstrap).
$want_test && packages+=(podman runc mmdebstrap)
# The e2e notification test: a private session bus (dbus-daemon), a real
# notification service on the private display (dunst), another window to
# take the focus (xmessage, in x11-utils; xdotool gives it the focus) and
# a picture of the whole screen (imagemagick's `import`). Every e2e test
# takes its screenshots of the window with xdotool and `import` too; xclip
# puts an image on the X clipboard for the paste test.
$want_test && packages+=(dbus-daemon dunst x11-utils xdotool imagemagick xclip)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null || { echo "setup: a Rust toolchain (cargo 1.85+) is needed; install it with rustup" >&2; exit 1; }

# npm packages, reinstalled only when the lockfile changed.
stamp=ui/node_modules/.corral-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s ui/package-lock.json "$stamp"; then
  echo "setup: npm ci in ui/"
  (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  cp ui/package-lock.json "$stamp"
fi

# The MCP server is tested with an independent client: the official Python
# MCP SDK, pinned, in a venv of its own (reinstalled when the pin changes).
mcp_dir=crates/corral-cli/tests/mcp
if $want_test && ! cmp -s "$mcp_dir/requirements.txt" "$mcp_dir/.venv/.corral-requirements"; then
  echo "setup: the MCP test client (Python venv)"
  rm -rf "$mcp_dir/.venv"
  python3 -m venv "$mcp_dir/.venv"
  "$mcp_dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$mcp_dir/requirements.txt"
  cp "$mcp_dir/requirements.txt" "$mcp_dir/.venv/.corral-requirements"
fi
# ... and with the MCP Inspector's command-line mode, pinned by its lockfile.
if $want_test && ! cmp -s "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.corral-lock-stamp"; then
  echo "setup: npm ci in $mcp_dir (the MCP Inspector)"
  (cd "$mcp_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.corral-lock-stamp"
fi
# Both SDK lines, old and new, both ways: the Python SDK 1.x in a venv of
# its own, and the TypeScript SDKs 1.x and 2.x, pinned by their lockfile.
if $want_test && ! cmp -s "$mcp_dir/v1/requirements.txt" "$mcp_dir/v1/.venv/.corral-requirements"; then
  echo "setup: the MCP Python SDK 1.x (Python venv)"
  rm -rf "$mcp_dir/v1/.venv"
  python3 -m venv "$mcp_dir/v1/.venv"
  "$mcp_dir/v1/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$mcp_dir/v1/requirements.txt"
  cp "$mcp_dir/v1/requirements.txt" "$mcp_dir/v1/.venv/.corral-requirements"
fi
if $want_test && ! cmp -s "$mcp_dir/ts/package-lock.json" "$mcp_dir/ts/node_modules/.corral-lock-stamp"; then
  echo "setup: npm ci in $mcp_dir/ts (the MCP TypeScript SDKs)"
  (cd "$mcp_dir/ts" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$mcp_dir/ts/package-lock.json" "$mcp_dir/ts/node_modules/.corral-lock-stamp"
fi

# A task's Kubernetes manifests are validated offline against the
# published schemas (kubernetes-validate, jsonschema for the agent-sandbox
# CRD), pinned, in a venv of their own (reinstalled when the pin changes).
kube_dir=crates/corral-host/tests/kube
if $want_test && ! cmp -s "$kube_dir/requirements.txt" "$kube_dir/.venv/.corral-requirements"; then
  echo "setup: the Kubernetes schema validator (Python venv)"
  rm -rf "$kube_dir/.venv"
  python3 -m venv "$kube_dir/.venv"
  "$kube_dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$kube_dir/requirements.txt"
  cp "$kube_dir/requirements.txt" "$kube_dir/.venv/.corral-requirements"
fi

# The official ACP SDK, the editor's side of the `corral-cli acp` tests.
acp_dir=crates/corral-cli/tests/acp
if $want_test && ! cmp -s "$acp_dir/package-lock.json" "$acp_dir/node_modules/.corral-lock-stamp"; then
  echo "setup: npm ci in $acp_dir (the ACP SDK)"
  (cd "$acp_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$acp_dir/package-lock.json" "$acp_dir/node_modules/.corral-lock-stamp"
fi

# The end-to-end suite's one npm package (axe-core, for its accessibility
# checks), pinned by its lockfile.
if $want_test && ! cmp -s e2e/package-lock.json e2e/node_modules/.corral-lock-stamp; then
  echo "setup: npm ci in e2e/ (axe-core)"
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
  cp e2e/package-lock.json e2e/node_modules/.corral-lock-stamp
fi

# The language servers corral-lsp's and corral-tools' tests run for real
# (typescript-language-server with typescript, and pyright), pinned by
# their lockfile, in a test-only folder.
lsp_dir=crates/corral-lsp/tests/servers
if $want_test && ! cmp -s "$lsp_dir/package-lock.json" "$lsp_dir/node_modules/.corral-lock-stamp"; then
  echo "setup: npm ci in $lsp_dir (the test language servers)"
  (cd "$lsp_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$lsp_dir/package-lock.json" "$lsp_dir/node_modules/.corral-lock-stamp"
fi

# TypeScript 7 with typescript-language-server, as npm installs them now,
# for the tests of TypeScript 7's own server (tsc --lsp --stdio).
ts7_dir=crates/corral-lsp/tests/ts7
if $want_test && ! cmp -s "$ts7_dir/package-lock.json" "$ts7_dir/node_modules/.corral-lock-stamp"; then
  echo "setup: npm ci in $ts7_dir (TypeScript 7)"
  (cd "$ts7_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$ts7_dir/package-lock.json" "$ts7_dir/node_modules/.corral-lock-stamp"
fi

if $want_test && ! command -v tauri-driver >/dev/null; then
  echo "setup: cargo install tauri-driver"
  cargo install tauri-driver --version '^2' --locked --quiet
fi
