#!/usr/bin/env bash
# End-to-end `moetwin validate` on four live rows of two campaigns: fit one parameter with
# leave-one-campaign-out cross-validation, write the profile, predict with it, and check the outputs'
# columns and the profile's round trip. Usage: validate_cli.sh MOETWIN RUNS.csv WORKDIR
set -euo pipefail
bin=$1 runs=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" validate --runs "$runs" --profile none --fit --params compute_time_scale --outer 1 \
  --cv leave-one-campaign-out --threads 2 --write-profile "$dir/fit.toml" --format csv --out "$dir/rows.csv" \
  2>"$dir/fit.log"
[ -f "$dir/fit.toml" ] || fail "no profile written"
grep -q '^cv_scheme = "leave-one-campaign-out"' "$dir/fit.toml" || fail "profile without its CV scheme"
grep -q '^\[cross_validated\]' "$dir/fit.toml" || fail "profile without cross-validated residuals"
grep -q '^fit_objective = "huber 0.1"' "$dir/fit.toml" || fail "profile without its (default) fit objective"
# Two cells of two dispatchers each: two cross-validated margin errors.
grep -A1 '^\[cross_validated_margin\]' "$dir/fit.toml" | grep -q '^pairs = 2$' || fail "profile without its 2 margin errors"
grep -q '^# profile: ' "$dir/rows.csv" || fail "validate CSV does not name its profile"
header=$(grep -v '^#' "$dir/rows.csv" | head -1)
for column in campaign iter_s predicted_iter_s predicted_tflops_gpu error_pct in_sample_iter_s in_sample_error_pct; do
  echo ",$header," | grep -q ",$column," || fail "validate CSV lacks column $column"
done
[ "$(($(grep -vc '^#' "$dir/rows.csv") - 1))" -eq 4 ] || fail "expected 4 result rows"

# The written profile is what predict and validate use with --profile; same inputs -> same bytes.
"$bin" validate --runs "$runs" --profile "$dir/fit.toml" --format json --out "$dir/a.json" 2>/dev/null
"$bin" validate --runs "$runs" --profile "$dir/fit.toml" --format json --out "$dir/b.json" --threads 1 2>/dev/null
cmp "$dir/a.json" "$dir/b.json" || fail "validate output differs between thread counts"
grep -q '"winner_right"' "$dir/a.json" || fail "no dispatcher ranking in the JSON"

# NVIDIA's dense rows as never-fitted evidence: predicted by the fit, they join the growth measurement (one
# group per system) and their coverage is reported with each system's band measured without it.
# Three 8-GPU Llama 3 8B rows of NVIDIA's file (B200, GB200, GB300) keep it short under the sanitizers.
dense="$(dirname "$runs")/../../data/nvidia-dense-runs.csv"
{ grep -v '^nvidia' "$dense"; grep '^nvidia-25.11-dgx-[bg]' "$dense" | grep ',llama3-8b,'; } >"$dir/dense-8b.csv"
"$bin" validate --runs "$runs" --profile none --fit --params compute_time_scale --outer 1 \
  --cv leave-one-campaign-out --threads 2 --never-fitted "$dir/dense-8b.csv" --write-profile "$dir/never.toml" \
  --out "$dir/never.txt" 2>"$dir/never.log"
grep -q '^never-fitted rows .* predicted by the fit: median |error|' "$dir/never.txt" ||
  fail "no never-fitted summary"
grep -q '^80% interval, never-fitted rows' "$dir/never.txt" || fail "no never-fitted coverage"
grep -Eq '^never_fitted +system dgx-gb200 ' "$dir/never.txt" || fail "no per-system coverage"
grep -q '^\[novelty_bands.fabric\]' "$dir/never.toml" || fail "the profile has no fabric band"

# The default parameter set (no --params): the host and A2A terms; the compute and collective scales only
# where the rows show enough of those times (these B300 rows do not), judged at the fit without them.
"$bin" validate --runs "$runs" --profile none --fit --outer 1 --threads 2 --out "$dir/default.txt" \
  2>"$dir/default.log"
grep -q "time shares at the fit: compute" "$dir/default.log" || fail "default fit does not report the time shares"
grep -Eq '^launch_s +[0-9.e-]+ +s .* true ' "$dir/default.txt" || fail "default fit does not free launch_s"
grep -Eq '^deepep-uccl.a2a_remote_token_s +[0-9.e-]+ .* true ' "$dir/default.txt" ||
  fail "default fit does not free deepep-uccl.a2a_remote_token_s"
grep -Eq '^compute_time_scale +1 +x .* false ' "$dir/default.txt" ||
  fail "default fit frees compute_time_scale on A2A-bound rows"

# Rows where calibrated compute is ~40% of the iteration (synthetic, beside RUNS.csv): the fit without the
# scales is followed by one with the compute scale freed.
"$bin" validate --runs "$(dirname "$runs")/compute-bound.csv" --profile none --fit --outer 1 --threads 2 \
  --out "$dir/compute-bound.txt" 2>"$dir/compute-bound.log"
[ "$(grep -c '^fitting ' "$dir/compute-bound.log")" -eq 2 ] || fail "compute-bound rows: expected a second fit"
grep -Eq '^compute_time_scale +[0-9.e-]+ +x .* true ' "$dir/compute-bound.txt" ||
  fail "compute-bound rows: compute_time_scale not freed"

# Bad input: --cv or --huber without --fit, an unknown parameter, a missing profile -> exit 2 with the key
# named.
set +e
"$bin" validate --runs "$runs" --cv leave-one-campaign-out 2>"$dir/e1.log"; s1=$?
"$bin" validate --runs "$runs" --huber 0.2 2>"$dir/e4.log"; s4=$?
"$bin" validate --runs "$runs" --fit --params warp_speed 2>"$dir/e2.log"; s2=$?
"$bin" predict --runs "$runs" --profile "$dir/none.toml" 2>"$dir/e3.log"; s3=$?
grep -v "^#" "$runs" | head -2 >"$dir/one-campaign.csv"
"$bin" validate --runs "$dir/one-campaign.csv" --fit --cv leave-one-campaign-out 2>"$dir/e5.log"; s5=$?
"$bin" validate --runs "$runs" --fit --never-fitted "$dir/dense-8b.csv" 2>"$dir/e6.log"; s6=$?
set -e
[ "$s1" -eq 2 ] && grep -q -- "--cv" "$dir/e1.log" || fail "--cv without --fit: status $s1"
[ "$s2" -eq 2 ] && grep -q "warp_speed" "$dir/e2.log" || fail "unknown parameter: status $s2"
[ "$s3" -eq 2 ] && grep -q -- "--profile" "$dir/e3.log" || fail "missing profile: status $s3"
[ "$s4" -eq 2 ] && grep -q -- "--huber" "$dir/e4.log" || fail "--huber without --fit: status $s4"
[ "$s5" -eq 2 ] && grep -q "at least two campaigns" "$dir/e5.log" || fail "--cv on one campaign: status $s5"
[ "$s6" -eq 2 ] && grep -q -- "--never-fitted" "$dir/e6.log" || fail "--never-fitted without --cv: status $s6"
echo "validate_cli: ok"
