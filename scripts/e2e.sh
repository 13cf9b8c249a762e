#!/usr/bin/env bash
# The end-to-end suite: builds the UI and the app, starts a private Xvfb,
# and runs e2e/tests/ with Node's test runner. Each test starts its own
# tauri-driver (and through it the real app) in fresh temp HOME/XDG folders,
# against a scripted LLM server on 127.0.0.1 (see e2e/README.md).
#
#   scripts/e2e.sh                          # build, then every test
#   scripts/e2e.sh e2e/tests/restart.test.js
#   CORRAL_E2E_SKIP_BUILD=1 scripts/e2e.sh  # reuse the last build
#
# Screenshots and driver/app logs land in e2e/artifacts/ (or in
# $CORRAL_E2E_ARTIFACTS, so that two runs at once keep theirs apart).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

need() {
  command -v "$1" >/dev/null || { echo "e2e: \`$1\` is missing: $2" >&2; exit 1; }
}
need node "install Node.js 20 or newer"
need Xvfb "run \`scripts/setup.sh --test\` (Debian package xvfb)"
need tauri-driver "run \`scripts/setup.sh --test\` (cargo install tauri-driver)"
need WebKitWebDriver "run \`scripts/setup.sh --test\` (Debian package webkit2gtk-driver)"

if [ -z "${CORRAL_E2E_SKIP_BUILD:-}" ]; then
  echo "e2e: building the UI and the app"
  (cd ui && npm run build)
  cargo build -p corral -p corral-cli --locked
fi

# The artifacts folder is emptied first, so a folder named by
# CORRAL_E2E_ARTIFACTS is taken only if the suite made it (its marker file
# is in it) or it is empty.
artifacts=$(realpath -m "${CORRAL_E2E_ARTIFACTS:-e2e/artifacts}")
marker="$artifacts/.corral-e2e-artifacts"
if [ "$artifacts" != "$PWD/e2e/artifacts" ] && [ -e "$artifacts" ] && [ ! -e "$marker" ] &&
  [ -n "$(ls -A "$artifacts" 2>/dev/null)" ]; then
  echo "e2e: $artifacts is not empty and not an artifacts folder of this suite; choose another CORRAL_E2E_ARTIFACTS" >&2
  exit 1
fi
rm -rf "$artifacts"
mkdir -p "$artifacts"
touch "$marker"
export CORRAL_E2E_ARTIFACTS=$artifacts
work=$(mktemp -d "${TMPDIR:-/tmp}/corral-e2e-x.XXXXXX")
xvfb_pid=""
cleanup() {
  # tauri-driver is stopped by each test (SIGTERM); only the display is ours.
  if [ -n "$xvfb_pid" ]; then
    kill -TERM "$xvfb_pid" 2>/dev/null || true
    wait "$xvfb_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Xvfb picks a free display number and writes it to fd 3 when ready.
Xvfb -displayfd 3 -screen 0 1400x900x24 -nolisten tcp 3>"$work/display" 2>"$artifacts/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/display" ] && break
  kill -0 "$xvfb_pid" 2>/dev/null || { echo "e2e: Xvfb did not start; see $artifacts/xvfb.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$work/display" ] || { echo "e2e: Xvfb gave no display within 10 s" >&2; exit 1; }
export DISPLAY=":$(tr -d '[:space:]' <"$work/display")"
unset WAYLAND_DISPLAY
echo "e2e: Xvfb on $DISPLAY"

if [ $# -eq 0 ]; then
  set -- e2e/tests/*.test.js
fi
node --test --test-concurrency=1 --test-reporter=spec "$@"
