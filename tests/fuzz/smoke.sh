#!/usr/bin/env bash
# Bounded libFuzzer runs of every parser of user input, each seeded with the real inputs the repository
# ships (scenarios, sweeps, profiles, live-run CSVs, test and real-world logs) and with the inputs earlier
# runs found crashing (tests/fuzz/regressions/<target>/).
# The seed is fixed (MOETWIN_FUZZ_SEED, default 1) so a CI failure replays: the same seed mutates the same
# inputs in the same order, and only how far it gets depends on the machine's speed. Each target runs
# MOETWIN_FUZZ_SECONDS (default 15) seconds, MOETWIN_FUZZ_JOBS (default: the core count) at a time: eleven
# targets stay within about a minute and a half on 2 cores (CI's fuzz share; the targets run in the sanitizer
# build, whose tests already ran every seed file once). Long runs:
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

# One target's bounded run, its log in $work/TARGET.log and its exit code in $work/TARGET.rc.
fuzz_one() {
  local target=$1
  local corpus="$work/$target"
  mkdir -p "$corpus"
  seeds "$target" | while read -r f; do cp "$f" "$corpus/"; done
  local dict=()
  [ -n "${MOETWIN_FUZZ_MAX_LEN:-}" ] && dict+=(-max_len="$MOETWIN_FUZZ_MAX_LEN")
  case "$target" in
    scenario_fuzz | sweep_fuzz | fitted_profile_fuzz | calibration_profile_fuzz) dict+=(-dict="$root/tests/fuzz/toml.dict") ;;
    # Whole database files (up to 1.6 MB): libFuzzer's default cap (the largest seed, at most 1 MiB) would
    # cut the largest seeds short, and every mutant of a cut file fails only the length check.
    calibration_db_bytes_fuzz | calibration_db_stamped_fuzz) [ -z "${MOETWIN_FUZZ_MAX_LEN:-}" ] && dict+=(-max_len=2097152) ;;
  esac
  echo "$(ls "$corpus" | wc -l) seeds" >"$work/$target.seeds"
  local rc=0
  MOETWIN_CATALOG="$root/catalog/data" "$build/tests/fuzz/$target" "$corpus" "${dict[@]}" \
    -seed="${MOETWIN_FUZZ_SEED:-1}" -max_total_time="${MOETWIN_FUZZ_SECONDS:-15}" -runs="${MOETWIN_FUZZ_RUNS:-5000000}" \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/fuzz-artifacts/$target-" -print_final_stats=1 \
    >"$work/$target.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$target.rc"
}

# Targets run MOETWIN_FUZZ_JOBS at a time (default: one per core). A fuzzer uses one core, so on CI's two
# cores two at once halve the stage and each still gets a whole core for its seconds (75 CPU-s of user time
# in 221 s of wall when they ran one by one: docs/2026-12-07-ci-budget.md). Each target's run is the same
# as alone: its own corpus copy, seed, time and artifact prefix. Reports come in the order of the targets.
cd "$build"
jobs=${MOETWIN_FUZZ_JOBS:-$(nproc)}
running=0
for target in $targets; do
  fuzz_one "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
failed=0
for target in $targets; do
  echo "== $target ($(cat "$work/$target.seeds"))"
  log="$work/$target.log"
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added)" "$log" || true
  if [ "$(cat "$work/$target.rc" 2>/dev/null || echo 1)" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "smoke.sh: $target failed (artifact in $build/fuzz-artifacts/)" >&2
    failed=1
  fi
done
((failed == 0)) || exit 1
echo "smoke.sh: no crash"
