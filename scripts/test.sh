#!/usr/bin/env bash
# The test command: installs what the tests need (lavapipe, reference assets), then runs the
# whole workspace's tests. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --all-targets
