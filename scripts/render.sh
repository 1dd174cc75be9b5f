#!/usr/bin/env bash
# The main job: renders rastra's built-in scene to rastra.png and prints the per-stage report.
# Extra arguments go to `rastra render` (e.g. --msaa 4 --size 1920x1080 --stats stats.json).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --bin rastra -- render "$@"
