#!/usr/bin/env bash
# The peer engines' Debian -dev packages (SQLite, LMDB, LevelDB, RocksDB), installed when missing,
# plus what tools/install-deps.sh installs. Used by tools/bench-peers.sh and tools/bench-churn.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
need=()
for p in libsqlite3-dev liblmdb-dev libleveldb-dev librocksdb-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y "${need[@]}" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y "${need[@]}" >/dev/null; }
fi
