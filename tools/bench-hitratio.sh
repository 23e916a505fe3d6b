#!/usr/bin/env bash
# The hit-ratio benchmark (issue 43): seeded traces (Zipf 0.6, 0.8 and 0.99 over 20,000 keys, a
# loop and a scan mixed into a Zipf, a Zipf whose popular keys move every 50,000 requests;
# 400,000 requests each) replayed cache-aside (get; set on a
# miss) with 8 KiB random values under a 50 MB limit against an exact LRU of the same bytes,
# python-diskcache 5.6.3, theine (W-TinyLFU) and Cask (`cask-harness hitratio`, a DiskStore with
# only `limits.byteLimit` set), Cask at full write speed and with its sets held to --rate MB/s.
# Installs what it needs when missing (the build's Debian packages; diskcache, theine and
# matplotlib from PyPI), builds cask-harness (release), runs everything, then writes the summary
# and the plots.
#
# usage: bash tools/bench-hitratio.sh [--requests 400000] [--rate 20] [--traces zipf-0.6,...]
#                                     [--policies lru,frequency] [--seed 43] [--out DIR]
#        HITRATIO_REQUESTS=40000 bash tools/bench-hitratio.sh      # a quick look (same as --requests)
# output: Benchmarks/results/hitratio/{summary.csv,summary.md,peers.jsonl,cask.jsonl,traces.json,
#         hitratio-bars.svg,hitratio-live.svg}; the table is printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
requests="${HITRATIO_REQUESTS:-400000}"
rate=20
traces="zipf-0.6,zipf-0.8,zipf-0.99,loop,scan,shift"
policies="lru,frequency"
seed=43
out="Benchmarks/results/hitratio"
byte_limit=50000000
value_size=8192
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --traces) traces="$2"; shift 2 ;;
    --policy|--policies) policies="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "bench-hitratio.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done

bash tools/install-deps.sh
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
# pip into the interpreter's site-packages; where the system Python refuses (PEP 668), per user.
pip_install() {
  python3 -m pip install --quiet "$@" 2>/dev/null || python3 -m pip install --quiet --user --break-system-packages "$@"
}
python3 -c 'import diskcache, sys; sys.exit(diskcache.__version__ != "5.6.3")' 2>/dev/null || pip_install "diskcache==5.6.3"
python3 -c "import theine" 2>/dev/null || pip_install theine
python3 -c "import matplotlib" 2>/dev/null || pip_install matplotlib || $SUDO apt-get install -y python3-matplotlib >/dev/null

echo "== building cask-harness (release)"
swift build -c release --product cask-harness
harness="$(swift build -c release --product cask-harness --show-bin-path)/cask-harness"

work="$(mktemp -d "${TMPDIR:-/tmp}/cask-hitratio.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
echo "== traces: $requests requests each, seed $seed, into $work"
python3 Benchmarks/hitratio/traces.py "$work" --requests "$requests" --seed "$seed" --only "$traces"
cp "$work/traces.json" "$out/traces.json"

IFS=, read -r -a names <<<"$traces"
IFS=, read -r -a policy_names <<<"$policies"
: >"$work/peers.jsonl"
: >"$work/cask.jsonl"
steps=$((${#names[@]} * (1 + 2 * ${#policy_names[@]})))
step=0
for name in "${names[@]}"; do
  file="$work/$name.u32"
  step=$((step + 1))
  echo "== [$step/$steps] $name: exact LRU, python-diskcache, theine"
  python3 Benchmarks/hitratio/peers.py "$file" --value-size "$value_size" --byte-limit "$byte_limit" \
    --seed "$seed" --scratch "$work" >>"$work/peers.jsonl"
  for p in "${policy_names[@]}"; do
    for r in 0 "$rate"; do
      step=$((step + 1))
      if [ "$r" = "0" ]; then what="full speed"; else what="sets held to $r MB/s"; fi
      echo "== [$step/$steps] $name: Cask ($p), $what"
      # The JSON line is the last line of stdout; anything the store logs goes before it.
      "$harness" hitratio "$file" --directory "$work" --byte-limit "$byte_limit" --value-size "$value_size" \
        --rate "$r" --policy "$p" | grep '^{' >>"$work/cask.jsonl"
    done
  done
done

cp "$work/peers.jsonl" "$work/cask.jsonl" "$out/"
echo "== summary"
python3 Benchmarks/hitratio/summarize.py "$out" \
  --command "bash tools/bench-hitratio.sh --requests $requests --rate $rate --seed $seed --policies $policies"
python3 tools/plot_hitratio.py "$out"
