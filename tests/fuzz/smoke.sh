#!/usr/bin/env bash
# Bounded libFuzzer runs of the scenario parser (seeded with the shipped scenarios) and of the Megatron log
# importer (seeded with the test logs and the inputs earlier runs found crashing, tests/fuzz/regressions/).
# The seed is fixed (MOETWIN_FUZZ_SEED, default 1) so a CI failure replays: the same seed mutates the same
# inputs in the same order, and only how far it gets depends on the machine's speed.
# Usage: bash tests/fuzz/smoke.sh BUILD_DIR   (BUILD_DIR configured with -DMOETWIN_FUZZ=ON and clang, target
# moetwin_fuzz_targets built). Exits non-zero when the fuzzer finds a crash, leak, UB or a non-InputError
# exception; the input that caused it is left in BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
build=${1:?usage: smoke.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
for target in scenario_fuzz megatron_log_fuzz; do
  bin="$build/tests/fuzz/$target"
  [ -x "$bin" ] || { echo "smoke.sh: $bin not built (cmake --build $build --target moetwin_fuzz_targets)" >&2; exit 2; }
done

corpus=$(mktemp -d)
logs=$(mktemp -d)
trap 'rm -rf "$corpus" "$logs"' EXIT
# Seed corpora: every shipped scenario; every test log and every saved regression input.
find "$root/scenarios" -name '*.toml' -not -path '*/tests/*' -exec cp {} "$corpus"/ \;
cp "$root"/validate/tests/data/*.log "$root"/tests/fuzz/regressions/megatron_log/* "$logs"/
mkdir -p "$build/fuzz-artifacts"

cd "$build"
MOETWIN_CATALOG="$root/catalog/data" "$build/tests/fuzz/scenario_fuzz" "$corpus" \
  -dict="$root/tests/fuzz/toml.dict" -seed="${MOETWIN_FUZZ_SEED:-1}" \
  -max_total_time="${MOETWIN_FUZZ_SECONDS:-60}" -runs=5000000 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1
"$build/tests/fuzz/megatron_log_fuzz" "$logs" -seed="${MOETWIN_FUZZ_SEED:-1}" \
  -max_total_time="${MOETWIN_FUZZ_LOG_SECONDS:-30}" -runs=5000000 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1
echo "smoke.sh: no crash"
