#!/usr/bin/env bash
# The benchmark: reference workloads at 1920×1080 on rastra and, when installed, lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --release --bin rastra -- bench "$@"
