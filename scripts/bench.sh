#!/usr/bin/env bash
# The benchmark: reference workloads at 1920×1080 on rastra and, when installed, lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Mesa's Vulkan loader wants a runtime directory; headless CI machines have none.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/rastra-xdg-runtime}"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
cargo run --release --bin rastra -- bench "$@"
