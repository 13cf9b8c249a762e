#!/usr/bin/env bash
# Installs what is missing, builds what changed (the UI, the app), and opens
# Corral. Run again with nothing changed, it rebuilds nothing.
# Usage: scripts/run.sh [PROJECT_FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

# One line per step, with the time since the start.
step() { printf 'run [%3ds] %s\n' "$SECONDS" "$*" >&2; }

step "checking what is installed"
scripts/setup.sh
step "building the UI (only if its sources changed)"
scripts/build-ui.sh
# Cargo shows its own progress bar (crates done / total) on a terminal.
# The first build in release mode takes minutes; later ones only what changed.
step "building the app (cargo build --release)"
cargo build --release -p corral --locked
app=${CARGO_TARGET_DIR:-$PWD/target}/release/corral

args=()
[ $# -gt 0 ] && args=("$(realpath "$1")")
step "starting Corral"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run: no display; starting Corral under Xvfb" >&2
  exec xvfb-run -a "$app" "${args[@]}"
fi
exec "$app" "${args[@]}"
