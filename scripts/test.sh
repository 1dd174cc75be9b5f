#!/usr/bin/env bash
# The test command: installs what the tests need (lavapipe, reference assets), then runs the
# whole workspace's tests. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Mesa's Vulkan loader wants a runtime directory; headless CI machines have none.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/rastra-xdg-runtime}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cargo test --workspace --all-targets
