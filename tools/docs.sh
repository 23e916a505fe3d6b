#!/usr/bin/env bash
# Builds the DocC documentation of Cask (Sources/Cask/Cask.docc) through the swift-docc-plugin,
# from a symbol graph that includes the public declarations of the modules `Cask` re-exports
# (`CaskMemory`, `CaskSupport`: Sources/Cask/Exports.swift), so that `MemoryCache`,
# `EvictionCause` and `WallClock` are documented under Cask, where `import Cask` finds them.
#
# Why not `swift package generate-documentation --target Cask` alone: SwiftPM extracts a target's
# symbol graph without its re-exported modules (swift-symbolgraph-extract includes them only when
# named in `-experimental-allowed-reexported-modules`, which SwiftPM does not pass, as of Swift
# 6.3.1), so those types would be missing and every link to them unresolved. This script
# extracts the graph with that option and hands it to the plugin (`--additional-symbol-graph-dir`
# replaces the plugin's own graph).
#
# Usage: tools/docs.sh [generate-documentation options, e.g. --warnings-as-errors,
#        --output-path DIR, --transform-for-static-hosting]
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --target Cask
bin=$(swift build --show-bin-path)
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT

# The C modules Cask's module imports, as SwiftPM gives them to the compiler: the package's own
# (Sources/C*), the module maps SwiftPM generates for C targets, and the dependencies'.
clang_flags=()
for map in Sources/*/module.modulemap "$bin"/*.build/module.modulemap .build/checkouts/*/Sources/*/include/module.modulemap; do
    [[ -f "$map" ]] && clang_flags+=(-Xcc "-fmodule-map-file=$map" -Xcc -I -Xcc "$(dirname "$map")")
done
target=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
sdk_flags=()
if command -v xcrun > /dev/null; then sdk_flags=(-sdk "$(xcrun --show-sdk-path)"); fi

swift-symbolgraph-extract -module-name Cask -target "$target" "${sdk_flags[@]}" \
    -I "$bin/Modules" -module-cache-path "$bin/ModuleCache" "${clang_flags[@]}" \
    -minimum-access-level public -emit-extension-block-symbols \
    -experimental-allowed-reexported-modules=CaskMemory,CaskSupport \
    -output-dir "$graphs"

swift package generate-documentation --target Cask --additional-symbol-graph-dir "$graphs" "$@"
