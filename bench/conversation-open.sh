#!/usr/bin/env bash
# Opening a long conversation in the real window: 5,000 messages and 20 MB
# of tool output, from the list until its last message is painted, under
# Xvfb through the e2e harness (tauri-driver), with the release app.
# Usage: bench/conversation-open.sh   (RUNS=7 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
(cd ui && npm run build --silent >/dev/null)
cargo build --release -p corral --quiet
target=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
CORRAL_E2E_APP="$target/release/corral" CORRAL_E2E_SKIP_BUILD=1 scripts/e2e.sh bench/conversation-open.test.js
