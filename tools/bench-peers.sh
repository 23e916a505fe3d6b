#!/usr/bin/env bash
# The side-by-side benchmark (issue 6): Cask against SQLite, LMDB, LevelDB, RocksDB and a bare
# append log, one workload definition, each engine in its own process, medians of --runs runs.
# Installs the peers' Debian -dev packages when missing, builds `cask-versus` (Benchmarks/
# package, never built by the tests), runs it and draws the plots.
#
# usage: bash tools/bench-peers.sh [--count 1000000] [--runs 3] [--engines cask,lmdb,...]
# output: Benchmarks/results/peers/{results.json,phases.csv,overwrite-disk.csv,summary.md,*.svg}
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-peer-deps.sh
swift build -c release --package-path Benchmarks --product cask-versus
Benchmarks/.build/release/cask-versus run --out Benchmarks/results/peers "$@"
python3 tools/plot_peers.py Benchmarks/results/peers
