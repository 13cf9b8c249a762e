#!/usr/bin/env bash
# Installs what is missing, builds the UI and the app, and opens Corral.
# Usage: scripts/run.sh [PROJECT_FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
(cd ui && npm run build --silent)
args=()
[ $# -gt 0 ] && args=("$(realpath "$1")")
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run: no display; starting Corral under Xvfb" >&2
  exec xvfb-run -a cargo run --release -p corral -- "${args[@]}"
fi
exec cargo run --release -p corral -- "${args[@]}"
