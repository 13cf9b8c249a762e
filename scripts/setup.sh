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

# npm packages from a folder's committed lockfile, and Python packages
# from its pinned requirements.txt in a venv of its own: each installed
# again only when its lockfile or pins changed (a copy kept as a stamp).
npm_pinned() { # folder, what it is
  if ! cmp -s "$1/package-lock.json" "$1/node_modules/.corral-lock-stamp"; then
    echo "setup: npm ci in $1 ($2)"
    (cd "$1" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$1/package-lock.json" "$1/node_modules/.corral-lock-stamp"
  fi
}
venv_pinned() { # folder, what it is
  if ! cmp -s "$1/requirements.txt" "$1/.venv/.corral-requirements"; then
    echo "setup: $2 (Python venv in $1)"
    rm -rf "$1/.venv"
    python3 -m venv "$1/.venv"
    "$1/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$1/requirements.txt"
    cp "$1/requirements.txt" "$1/.venv/.corral-requirements"
  fi
}

npm_pinned ui "the window"

if $want_test; then
  # The MCP server is tested with independent clients: the official Python
  # MCP SDK, the MCP Inspector's command-line mode, and both SDK lines, old
  # and new, both ways (the Python SDK 1.x, the TypeScript SDKs 1.x and 2.x).
  mcp_dir=crates/corral-cli/tests/mcp
  venv_pinned "$mcp_dir" "the MCP test client"
  npm_pinned "$mcp_dir" "the MCP Inspector"
  venv_pinned "$mcp_dir/v1" "the MCP Python SDK 1.x"
  npm_pinned "$mcp_dir/ts" "the MCP TypeScript SDKs"
  # A task's Kubernetes manifests are validated offline against the
  # published schemas (kubernetes-validate, jsonschema for the agent-sandbox
  # CRD).
  venv_pinned crates/corral-host/tests/kube "the Kubernetes schema validator"
  # The official ACP SDK, the editor's side of the `corral-cli acp` tests.
  npm_pinned crates/corral-cli/tests/acp "the ACP SDK"
  # The end-to-end suite's one npm package (axe-core, for its accessibility
  # checks).
  npm_pinned e2e "axe-core"
  # The language servers corral-lsp's and corral-tools' tests run for real
  # (typescript-language-server with typescript, and pyright), and
  # TypeScript 7 with typescript-language-server, as npm installs them now,
  # for the tests of TypeScript 7's own server (tsc --lsp --stdio).
  npm_pinned crates/corral-lsp/tests/servers "the test language servers"
  npm_pinned crates/corral-lsp/tests/ts7 "TypeScript 7"
fi

if $want_test && ! command -v tauri-driver >/dev/null; then
  echo "setup: cargo install tauri-driver"
  cargo install tauri-driver --version '^2' --locked --quiet
fi
