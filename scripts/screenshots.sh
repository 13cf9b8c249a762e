#!/usr/bin/env bash
# Retakes the README's screenshots (docs/screenshots/*.png) from the real
# app under Xvfb, driven like the e2e suite (see e2e/tour/).
set -euo pipefail
cd "$(dirname "$0")/.."
export CORRAL_SCREENSHOTS=$PWD/docs/screenshots
exec scripts/e2e.sh e2e/tour/screenshots.test.js e2e/tour/approval-views.test.js
