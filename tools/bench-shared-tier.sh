#!/usr/bin/env bash
# The shared tier's benchmark: starts a redis-server of its own on 127.0.0.1 (installed by
# tools/install-deps.sh), runs cask-redis-bench (release) and redis-benchmark against it, and
# writes Benchmarks/results/shared-tier-DATE.txt.
#
# usage: bash tools/bench-shared-tier.sh [--operations N] [--debug]
set -euo pipefail
cd "$(dirname "$0")/.."
operations=20000
configuration=release
while [ $# -gt 0 ]; do
  case "$1" in
    --operations) operations="$2"; shift 2 ;;
    --debug) configuration=debug; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
command -v redis-server >/dev/null || bash tools/install-deps.sh
echo "building cask-redis-bench ($configuration)..."
swift build -c "$configuration" --package-path Integrations/CaskRedis --product cask-redis-bench
port=$((20000 + RANDOM % 10000))
folder=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$folder" > "$folder/redis.log" 2>&1 &
redis_pid=$!
trap 'kill "$redis_pid" 2>/dev/null || true; rm -rf "$folder"' EXIT
for _ in $(seq 1 200); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
out="Benchmarks/results/shared-tier-$(date +%Y-%m-%d).txt"
[ "$configuration" = release ] || out="$folder/shared-tier.txt"
{
  echo "# bash tools/bench-shared-tier.sh --operations $operations ($(git rev-parse --short HEAD), $(nproc) cores, $(redis-server --version | cut -d' ' -f3))"
  "Integrations/CaskRedis/.build/$configuration/cask-redis-bench" "$port" "$operations"
  echo
  echo "# redis-benchmark, one connection, no pipelining (the same server):"
  redis-benchmark -p "$port" -t get,set -n "$operations" -c 1 -d 100 --csv
} | tee "$out"
echo "written: $out"
