#!/usr/bin/env bash
# Installs what is missing and runs every test: formatting, lints, type
# checks, the UI's unit tests, the Rust suites, and the end-to-end suite in
# a real window under Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR=never
# A CI run builds once from cold: incremental caches only cost time and disk there.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi

step() { echo; echo "=== $* ==="; }

step "ui: type check, lint, unit tests, build"
(cd ui && npm run typecheck && npm run lint && npm test && npm run build)

step "rust: fmt"
cargo fmt --all --check

step "rust: clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "rust: tests"
cargo test --workspace --locked

step "end to end"
scripts/e2e.sh
echo
echo "all tests passed"
