#!/usr/bin/env bash
# The README's demo command: installs missing system packages, builds the `cask` tool in release
# mode and runs its demo workload on a store in ./cask-demo (or the folder given).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
echo "== building cask (release; a first build fetches and compiles the dependencies: a few minutes)"
swift build -c release --product cask
.build/release/cask demo "${1:-cask-demo}"
