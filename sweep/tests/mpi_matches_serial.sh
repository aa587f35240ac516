#!/usr/bin/env bash
# `mpirun -n 2 moetwin sweep` writes the very files of a serial run. Exit 77 (skipped) when mpirun or an
# MPI build is missing. Usage: mpi_matches_serial.sh MOETWIN SWEEP.toml WORKDIR MPIRUN HAVE_MPI
set -euo pipefail
bin=$1 sweep=$2 dir=$3 mpirun=${4:-} have_mpi=${5:-}
skip() {
  echo "SKIP: $1"
  exit 77
}
case "$have_mpi" in
  TRUE | ON | YES | 1) ;;
  *) skip "moetwin was built without MPI" ;;
esac
if [ -z "$mpirun" ] || [ ! -x "$mpirun" ]; then skip "no mpirun"; fi
rm -rf "$dir"
mkdir -p "$dir"
"$bin" sweep "$sweep" --profile none --threads 1 --out "$dir/serial" 2>"$dir/serial.log"
# Open MPI refuses root without --allow-run-as-root and more ranks than cores without --oversubscribe;
# leak checking is off because Open MPI's own allocations are never freed.
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$mpirun" --oversubscribe --allow-run-as-root -n 2 \
  "$bin" sweep "$sweep" --profile none --threads 1 --out "$dir/mpi" 2>"$dir/mpi.log" ||
  { cat "$dir/mpi.log" >&2; exit 1; }
# Both ranks computed: the 24 points split round-robin, 12 each.
grep -q "points computed per rank: r0=12 r1=12" "$dir/mpi.log" ||
  { echo "FAIL: points not split over the ranks" >&2; cat "$dir/mpi.log" >&2; exit 1; }
cmp "$dir/serial.csv" "$dir/mpi.csv"
cmp "$dir/serial.h5" "$dir/mpi.h5"
# Interrupted under MPI (first half), finished by a serial run: still the same files.
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$mpirun" --oversubscribe --allow-run-as-root -n 2 \
  "$bin" sweep "$sweep" --profile none --threads 1 --out "$dir/mixed" --stop-after 10 2>"$dir/mixed.log" ||
  { cat "$dir/mixed.log" >&2; exit 1; }
[ -f "$dir/mixed.journal" ] && [ ! -f "$dir/mixed.csv" ]
"$bin" sweep "$sweep" --profile none --threads 2 --out "$dir/mixed" 2>>"$dir/mixed.log"
cmp "$dir/serial.csv" "$dir/mixed.csv"
cmp "$dir/serial.h5" "$dir/mixed.h5"
echo "PASS: mpirun -n 2 and an MPI run resumed serially match the serial files"
