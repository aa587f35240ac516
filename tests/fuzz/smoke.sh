#!/usr/bin/env bash
# Bounded libFuzzer run of the scenario parser, seeded with the shipped scenarios.
# Usage: bash tests/fuzz/smoke.sh BUILD_DIR   (BUILD_DIR configured with -DMOETWIN_FUZZ=ON and clang, target
# moetwin_fuzz_targets built). Exits non-zero when the fuzzer finds a crash, leak, UB or a non-InputError
# exception; the input that caused it is left in BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
build=${1:?usage: smoke.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
bin="$build/tests/fuzz/scenario_fuzz"
[ -x "$bin" ] || { echo "smoke.sh: $bin not built (cmake --build $build --target moetwin_fuzz_targets)" >&2; exit 2; }

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
# Seed corpus: every shipped scenario.
find "$root/scenarios" -name '*.toml' -not -path '*/tests/*' -exec cp {} "$corpus"/ \;
mkdir -p "$build/fuzz-artifacts"

cd "$build"
MOETWIN_CATALOG="$root/catalog/data" "$bin" "$corpus" \
  -dict="$root/tests/fuzz/toml.dict" \
  -max_total_time="${MOETWIN_FUZZ_SECONDS:-60}" -runs=5000000 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1
echo "smoke.sh: no crash"
