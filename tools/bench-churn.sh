#!/usr/bin/env bash
# The churn workload (issue 26): fill 1,000,000 keys, then 5,000,000 random overwrites, 16-byte
# keys, 100-byte values, no sync, one thread, every put timed; Cask without a limit, Cask with
# only a 96 MiB byte limit, the buffered append log, RocksDB, LevelDB and LMDB, each in its own
# child process. Installs the peers' Debian -dev packages and matplotlib when missing, builds
# `cask-versus` (Benchmarks/ package), runs it and draws the plots.
#
# usage: bash tools/bench-churn.sh [--count 1000000] [--ops 5000000] [--engines cask,cask-limit,...]
#                                  [--byte-limit 100663296] [--window-ms 100] [--out DIR]
# output: Benchmarks/results/churn/{churn.json,churn-*.csv,churn-summary.md,churn-*.svg}
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-peer-deps.sh
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
python3 -c "import matplotlib" 2>/dev/null || python3 -m pip install --quiet matplotlib || $SUDO apt-get install -y python3-matplotlib >/dev/null
out="Benchmarks/results/churn"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--out" ] && [ $((i + 1)) -lt ${#args[@]} ]; then out="${args[$((i + 1))]}"; fi
done
swift build -c release --package-path Benchmarks --product cask-versus
Benchmarks/.build/release/cask-versus churn --out "$out" "$@"
python3 tools/plot_churn.py "$out"
