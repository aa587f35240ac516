#!/bin/bash
# The H100 calibration of issue 56 (item 4) in two calls of at most 600 s on one H100 (device kind
# nvidia-h100-x1), from a carried folder of prebuilt binaries (.device/: moetwin-calibrate, kernels_gpu_tests,
# lib.tar.xz; calibrate/README.md "Carrying prebuilt binaries"). Each call tars its files into OUTDIR, since
# at most 8 files come back from a device call.
# Usage: bash calibrate/scripts/run-h100-on-device.sh a|b OUTDIR [DEVICE_DIR]
#   a: calibrate/run-on-device.sh (GPU tests, `all` = launch, kernels, bf16 + FP8 GEMMs, NCCL on 1 GPU; fabric
#      loopback; two bf16 gemm repeats to pool), then the attention sweep and the layer probe
#      (scripts/torch_layer_probe.py) -> OUTDIR/h100-a.tar.xz (about 560 s).
#   b: three FP8 gemm sweeps with the bf16 and fast-accumulation 8192^3 references (run-fp8-on-device.sh,
#      NAME=h100-fp8-run1) and a third bf16 gemm repeat -> OUTDIR/h100-b.tar.xz (about 500 s).
# Then: calibrate/data/h100-*.h5 / .log and `moetwin-calibrate fit --gpu H100-SXM` as for the H200
# (calibrate/README.md "Profile").
set -u
part="${1:?usage: run-h100-on-device.sh a|b OUTDIR [DEVICE_DIR]}"
out="${2:?usage: run-h100-on-device.sh a|b OUTDIR [DEVICE_DIR]}"
dev="${3:-.device}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
SECONDS=0
if [ "$part" = a ]; then
  w=/tmp/h100
  mkdir -p "$w"
  timeout 470 bash "$here/../run-on-device.sh" "$w" "$dev"
  echo "== run-on-device done rc=$? t=${SECONDS}s" | tee -a "$w/calibrate.log"
  {
    nvidia-smi --query-gpu=name,driver_version,compute_cap,power.limit,clocks.max.sm,clocks.sm --format=csv
    echo "== attention sweep"
    PYTHONUNBUFFERED=1 timeout 100 python3 "$here/torch_layer_probe.py" --attention-sweep > "$w/h100-attention.csv"
    echo "rc=$? t=${SECONDS}s"
    echo "== layer probe"
    PYTHONUNBUFFERED=1 timeout 60 python3 "$here/torch_layer_probe.py" > "$w/h100-layer-probe.csv"
    echo "rc=$? t=${SECONDS}s"
  } 2>&1 | tee "$w/probe.log"
  cp "$w/calibrate.log" "$w/probe.log" "$out/"
  tar -C /tmp -cJf "$out/h100-a.tar.xz" h100
elif [ "$part" = b ]; then
  w=/tmp/h100fp8
  mkdir -p "$w"
  NAME=h100-fp8-run1 BUDGET_S=330 timeout 400 bash "$here/run-fp8-on-device.sh" "$w" "$dev"
  libdirs=$(mktemp -d) && tar -xJf "$dev/lib.tar.xz" -C "$libdirs"
  for name in libcublasLt.so.13 libnccl.so.2; do
    found=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets /usr/lib /opt -name "$name" 2>/dev/null | head -1)
    [ -n "$found" ] && libdirs="$libdirs:$(dirname "$found")"
  done
  export LD_LIBRARY_PATH="$libdirs:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
  left=$((560 - SECONDS))
  if [ "$left" -gt 120 ]; then
    {
      echo "== gemm repeat 3 (bf16) t=${SECONDS}s"
      timeout "$left" "$dev/moetwin-calibrate" gemm --db "$w/gemm-repeat-3.h5" --timeout $((left - 10)) > /dev/null
      echo "rc=$? t=${SECONDS}s"
    } 2>&1 | tee -a "$w/h100-fp8-run1.log"
  fi
  cp "$w/h100-fp8-run1.log" "$out/"
  tar -C /tmp -cJf "$out/h100-b.tar.xz" h100fp8
else
  echo "run-h100-on-device.sh: part: $part: expected a or b" >&2
  exit 2
fi
ls -la "$out"
echo "total t=${SECONDS}s"
