#!/usr/bin/env bash
# Bounded libFuzzer runs of every parser of user input, each seeded with the real inputs the repository
# ships (scenarios, sweeps, profiles, live-run CSVs, test and real-world logs) and with the inputs earlier
# runs found crashing (tests/fuzz/regressions/<target>/).
# The seed is fixed (MOETWIN_FUZZ_SEED, default 1) so a CI failure replays: the same seed mutates the same
# inputs in the same order, and only how far it gets depends on the machine's speed. Each target runs
# MOETWIN_FUZZ_SECONDS (default 15) seconds: eleven targets stay within about three minutes (CI's
# fuzz share; the targets run in the sanitizer build, whose tests already ran every seed file once). Long runs:
# MOETWIN_FUZZ_RUNS (executions per target, default 5000000) and MOETWIN_FUZZ_MAX_LEN (input size cap).
# Usage: bash tests/fuzz/smoke.sh BUILD_DIR [TARGET...]   (BUILD_DIR configured with -DMOETWIN_FUZZ=ON and
# clang, target moetwin_fuzz_targets built; default: every target). Exits non-zero when the fuzzer finds a
# crash, leak, UB or a non-InputError exception; the input that caused it is left in BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
build=${1:?usage: smoke.sh BUILD_DIR [TARGET...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
all="scenario_fuzz megatron_log_fuzz live_runs_fuzz sweep_fuzz fitted_profile_fuzz calibration_profile_fuzz
calibration_db_fuzz calibration_db_bytes_fuzz calibration_db_stamped_fuzz nccl_tests_fuzz deepep_fuzz"
targets=${*:-$all}
for target in $targets; do
  bin="$build/tests/fuzz/$target"
  [ -x "$bin" ] || { echo "smoke.sh: $bin not built (cmake --build $build --target moetwin_fuzz_targets)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz-artifacts"

# Seed files of one target (copied: libFuzzer writes new inputs into its first corpus directory).
seeds() {
  case "$1" in
    scenario_fuzz) find "$root/scenarios" -name '*.toml' -not -path '*/tests/*' -not -path '*/sweeps/*' ;;
    megatron_log_fuzz) ls "$root"/validate/tests/data/*.log "$root"/validate/tests/data/real-logs/*.log ;;
    live_runs_fuzz) ls "$root"/validate/data/*.csv "$root"/validate/tests/data/*.csv "$root"/scenarios/tests/data/live-runs.csv ;;
    sweep_fuzz) ls "$root"/scenarios/sweeps/*.toml "$root"/sweep/tests/data/*.toml ;;
    fitted_profile_fuzz) ls "$root"/calibrate/profiles/fitted/*.toml ;;
    calibration_profile_fuzz) ls "$root"/calibrate/profiles/*.toml ;;
    calibration_db_fuzz) ;;  # the bytes describe a database (see the target); no file seeds
    calibration_db_bytes_fuzz) ls "$root"/calibrate/data/*.h5 "$root"/calibrate/tests/data/damaged-db/*.h5 ;;
    calibration_db_stamped_fuzz) ls "$root"/calibrate/data/*.h5 ;;  # + the crafted ones in regressions/
    nccl_tests_fuzz) ls "$root"/calibrate/tests/data/*_perf_*.txt "$root"/calibrate/tests/data/real-logs/nccl_*.log ;;
    deepep_fuzz) ls "$root"/calibrate/tests/data/deepep_*.txt "$root"/calibrate/tests/data/real-logs/deepep_*.log \
                    "$root"/calibrate/tests/data/real-logs/ucclep_*.log ;;
  esac
  local regressions="$root/tests/fuzz/regressions/${1%_fuzz}"
  [ -d "$regressions" ] && find "$regressions" -type f
  return 0
}

cd "$build"
for target in $targets; do
  corpus="$work/$target"
  mkdir -p "$corpus"
  seeds "$target" | while read -r f; do cp "$f" "$corpus/"; done
  dict=()
  [ -n "${MOETWIN_FUZZ_MAX_LEN:-}" ] && dict+=(-max_len="$MOETWIN_FUZZ_MAX_LEN")
  case "$target" in
    scenario_fuzz | sweep_fuzz | fitted_profile_fuzz | calibration_profile_fuzz) dict+=(-dict="$root/tests/fuzz/toml.dict") ;;
    # Whole database files (up to 1.6 MB): libFuzzer's default cap (the largest seed, at most 1 MiB) would
    # cut the largest seeds short, and every mutant of a cut file fails only the length check.
    calibration_db_bytes_fuzz | calibration_db_stamped_fuzz) [ -z "${MOETWIN_FUZZ_MAX_LEN:-}" ] && dict+=(-max_len=2097152) ;;
  esac
  echo "== $target ($(ls "$corpus" | wc -l) seeds)"
  log="$work/$target.log"
  set +e
  MOETWIN_CATALOG="$root/catalog/data" "$build/tests/fuzz/$target" "$corpus" "${dict[@]}" \
    -seed="${MOETWIN_FUZZ_SEED:-1}" -max_total_time="${MOETWIN_FUZZ_SECONDS:-15}" -runs="${MOETWIN_FUZZ_RUNS:-5000000}" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/fuzz-artifacts/$target-" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "smoke.sh: $target failed (artifact in $build/fuzz-artifacts/)" >&2
    exit 1
  fi
done
echo "smoke.sh: no crash"
