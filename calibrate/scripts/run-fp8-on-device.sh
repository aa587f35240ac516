#!/bin/bash
# FP8 GEMM calibration on one GPU from a carried folder of prebuilt binaries (as run-on-device.sh: .device/
# with moetwin-calibrate and lib.tar.xz). Usage: bash calibrate/scripts/run-fp8-on-device.sh OUTDIR [DEVICE_DIR]
# Writes OUTDIR/h200-fp8-run1.h5 (the FP8 sweep), up to two repeats h200-fp8-run1{b,c}.h5 for
# `fit --pool-db` while the time budget (BUDGET_S, default 440 s) allows, h200-fp8-run1-bf16ref.h5 (bf16
# 8192^3 after an idle gap and sustained, the reference for the FP8 rate), h200-fp8-run1-fastaccum.h5
# (FP8 8192^3 with cuBLASLt fast accumulation) and the log h200-fp8-run1.log. Each step is bounded.
# NAME (default h200-fp8-run1) replaces h200-fp8-run1 in every file name (the H100: h100-fp8-run1).
set -u
out="${1:?usage: run-fp8-on-device.sh OUTDIR [DEVICE_DIR]}"
dev="${2:-.device}"
budget="${BUDGET_S:-440}"
mkdir -p "$out"
libdirs="$dev/lib"
if [ ! -d "$dev/lib" ] && [ -f "$dev/lib.tar.xz" ]; then
  libdirs=$(mktemp -d) && tar -xJf "$dev/lib.tar.xz" -C "$libdirs"
fi
for name in libcublasLt.so.13 libnccl.so.2; do
  found=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets /usr/lib /opt -name "$name" 2>/dev/null | head -1)
  [ -n "$found" ] && libdirs="$libdirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="$libdirs:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0
cal="$dev/moetwin-calibrate"
name="${NAME:-h200-fp8-run1}"
db="$out/$name"
SECONDS=0
{
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,power.limit,clocks.max.sm --format=csv
  echo "== fp8 smoke"; timeout 60 "$cal" gemm --precision fp8 --quick --samples 2 --rounds 1 --only square.m1024 \
    --db /tmp/fp8-smoke.h5 --timeout 50; echo "rc=$? t=${SECONDS}s"
  echo "== gemm fp8 (run 1)"; start=$SECONDS
  timeout 300 "$cal" gemm --precision fp8 --db "$db.h5" --timeout 290; echo "rc=$? t=${SECONDS}s"
  run_s=$((SECONDS - start))
  echo "== bf16 reference 8192^3"
  timeout 60 "$cal" gemm --only square.m8192 --db "$db-bf16ref.h5" --timeout 50; echo "rc=$? t=${SECONDS}s"
  echo "== fp8 fast accumulation 8192^3"
  timeout 60 "$cal" gemm --precision fp8 --fp8-fast-accum --only square.m8192 --db "$db-fastaccum.h5" \
    --timeout 50; echo "rc=$? t=${SECONDS}s"
  # Repeats to pool (one run's per-shape noise bounds the held-back check; calibrate/README.md, runs 7-8).
  for r in b c; do
    if [ $((SECONDS + run_s + 10)) -gt "$budget" ]; then echo "== repeat $r skipped (t=${SECONDS}s)"; continue; fi
    echo "== gemm fp8 (run 1$r)"
    timeout $((run_s + 60)) "$cal" gemm --precision fp8 --db "$db$r.h5" --timeout $((run_s + 50)); echo "rc=$? t=${SECONDS}s"
  done
  echo "== show"; "$cal" show "$db.h5" --kind gemm_fp8_sustained; echo "rc=$?"
} 2>&1 | tee "$out/$name.log"
