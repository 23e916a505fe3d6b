#!/usr/bin/env bash
# The README's test command: installs missing system packages, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
swift build --product cask
swift build --product cask-harness
# Every README and DocC example, compiled by a separate consumer package (public API only).
swift build --package-path Examples
swift test
# The Hummingbird persist driver (a package of its own: an app that uses only Cask never builds
# Hummingbird), against Hummingbird's router test framework and a live server on loopback.
swift test --package-path Integrations/CaskHummingbird
# The Vapor cache driver, likewise, against VaporTesting and a running app on loopback.
swift test --package-path Integrations/CaskVapor
# CaskCache as a swift-service-lifecycle Service, and its statistics as swift-metrics.
swift test --package-path Integrations/CaskServices
# The shared tier on Redis (a package of its own: only an app that uses it builds swift-nio for
# it): each test starts its own redis-server on 127.0.0.1 (installed by install-deps.sh), kills,
# pauses and restarts it, and runs node processes (cask-redis-node) against it.
swift build --package-path Integrations/CaskRedis --product cask-redis-node
swift test --package-path Integrations/CaskRedis
# The example server, started live on loopback and hit with concurrent requests; /metrics scraped.
swift test --package-path Examples/Server
# Real failed syscalls (libfiu) against the cask tool, checked from outside against a model.
python3 tools/fault_suite.py --ops 2000 --cask .build/debug/cask --harness .build/debug/cask-harness
# The same with encryption at rest on: every command seals with one key (CASK_KEY_FILE) and the
# independent reader opens each sealed value with it.
key_file=$(mktemp)
python3 -c 'import os; print(os.urandom(32).hex())' > "$key_file"
python3 tools/fault_suite.py --ops 600 --key-file "$key_file" --cask .build/debug/cask --harness .build/debug/cask-harness
rm -f "$key_file"
# The DocC catalog builds with no warning (unresolved links, undocumented parameters), the
# re-exported modules' declarations included.
bash tools/docs.sh --warnings-as-errors > /dev/null
# The concurrency suites again under ThreadSanitizer, judged by exit status (a race report fails it).
# A failure prints each race report again at the end, where a truncated CI log still shows it.
tsan_log=$(mktemp)
if ! swift test --sanitize=thread --scratch-path .build-tsan --filter "ConcurrencyTests|MemoryCacheTests|CacheFacadeTests|GroupCommitTests|IdleTests|ReadOnlyTests|BackupTests|WriteBehindTests|EvictAheadTests|LoadingTests|PreparedSegmentTests|CloseHintTests|PrefixRemovalTests|TagRemovalTests|IndexSnapshotTests|MemoryCopiesTests|TimingTests|EncryptionTests|FileSealTests|SharedTierTests|SharedLoadTests|SharedOutbox" 2>&1 | tee "$tsan_log"; then
    echo "ThreadSanitizer run failed; its race reports:"
    awk '/WARNING: ThreadSanitizer/{p=1} p{print} /^SUMMARY: ThreadSanitizer/{p=0}' "$tsan_log" | head -n 300
    exit 1
fi
# libFuzzer: every target for FUZZ_SECONDS (default 60) on its seed corpus; 0 crashes to pass.
bash tools/fuzz.sh
