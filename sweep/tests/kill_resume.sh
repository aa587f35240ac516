#!/usr/bin/env bash
# A sweep SIGKILLed mid-way, and one stopped by SIGINT, each restarted, end with exactly the files of an
# uninterrupted run. Usage: kill_resume.sh MOETWIN SWEEP.toml WORKDIR
set -euo pipefail
bin=$1 sweep=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"
run() { "$bin" sweep "$sweep" --profile none "$@"; }

run --threads 2 --out "$dir/ref" 2>"$dir/ref.log"
points=$(($(wc -l <"$dir/ref.csv") - 1))

# Waits until the journal of prefix $1 holds at least $2 points (its header line excluded).
wait_for_points() {
  for _ in $(seq 1 30000); do  # up to 300 s: the sanitizer build is ~20x slower
    if [ -f "$1.journal" ] && [ "$(($(wc -l <"$1.journal") - 1))" -ge "$2" ]; then return 0; fi
    sleep 0.01
  done
  echo "FAIL: the journal of $1 never reached $2 points" >&2
  return 1
}

for signal in KILL INT; do
  prefix="$dir/$signal"
  # One thread, one point after another: slow enough to be caught mid-way.
  # Started directly (not through a shell function), so that $! is moetwin itself.
  "$bin" sweep "$sweep" --profile none --threads 1 --out "$prefix" --progress-every 1 2>"$prefix.log" &
  pid=$!
  wait_for_points "$prefix" 3
  kill -s "$signal" "$pid"
  status=0
  wait "$pid" || status=$?
  if [ -f "$prefix.csv" ]; then
    echo "FAIL: the $signal run finished before the signal; the test sweep is too fast" >&2
    exit 1
  fi
  kept=$(($(wc -l <"$prefix.journal") - 1))
  echo "$signal: exit status $status, $kept of $points points kept in the journal"
  if [ "$signal" = INT ]; then
    # A clean stop: exit 128 + SIGINT, no torn line.
    [ "$status" -eq 130 ] || { echo "FAIL: SIGINT exit status $status, expected 130" >&2; exit 1; }
    grep -q "interrupted: $kept of $points points done" "$prefix.log" ||
      { echo "FAIL: no interruption summary in $prefix.log" >&2; cat "$prefix.log" >&2; exit 1; }
  fi
  [ "$kept" -ge 3 ] || { echo "FAIL: only $kept points kept" >&2; exit 1; }
  run --threads 2 --out "$prefix" 2>"$prefix.resume.log"
  grep -q "$points points, " "$prefix.resume.log"
  # The resumed run computed only what the journal lacked.
  grep -q "computed $((points - kept)) points" "$prefix.resume.log" ||
    { echo "FAIL: resume recomputed finished points" >&2; cat "$prefix.resume.log" >&2; exit 1; }
  cmp "$dir/ref.csv" "$prefix.csv"
  cmp "$dir/ref.h5" "$prefix.h5"
  [ ! -f "$prefix.journal" ] || { echo "FAIL: journal left behind" >&2; exit 1; }
done
echo "PASS: killed and interrupted sweeps resumed to byte-identical files"
