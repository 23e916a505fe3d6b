#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each for N seconds (default 60) on its checked-in
# seed corpus. A crashing input is copied to Fuzz/regressions/<target>-<name>, where the unit
# tests replay it from then on; the script then exits 1.
# Long tier: FUZZ_SECONDS=5400 bash tools/fuzz.sh (at least 5 million executions per target; the
# slowest, FuzzOpen, runs about 950 a second under ASan).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-${FUZZ_SECONDS:-60}}"
targets=(FuzzRecordDecoder FuzzSegmentScanner FuzzHintParser FuzzLZ4 FuzzOpen FuzzStoreFolder)
status=0
for t in "${targets[@]}"; do
  swift build --package-path Fuzz -c release --product "$t" \
    --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz >/dev/null 2>&1 \
    || swift build --package-path Fuzz -c release --product "$t" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --scratch-path .build-fuzz
  work=$(mktemp -d)
  cp Fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  artifacts=$(mktemp -d)
  crashed=0
  # FuzzStoreFolder reads its input as instructions of 5 bytes and more: let inputs grow at once.
  extra=()
  [ "$t" = FuzzStoreFolder ] && extra=(-len_control=0 -max_len=160)
  if ! .build-fuzz/release/"$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=30 ${extra[@]+"${extra[@]}"} -artifact_prefix="$artifacts/" "$work" > "$artifacts/log" 2>&1; then
    status=1
    crashed=1
    for a in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-*; do
      [ -e "$a" ] && cp "$a" "Fuzz/regressions/$t-$(basename "$a")"
    done
    tail -40 "$artifacts/log"
  fi
  runs=$(grep -E "stat::number_of_executed_units" "$artifacts/log" | awk '{print $2}')
  echo "fuzz $t: ${runs:-?} executions in ${seconds} s, $( [ $crashed = 0 ] && echo '0 crashes' || echo 'CRASH (input kept in Fuzz/regressions)')"
  rm -rf "$work" "$artifacts"
done
exit $status
