#!/bin/bash
# Runs the whole one-node calibration on a GPU machine from a carried folder of prebuilt binaries
# (.device/: moetwin-calibrate, kernels_gpu_tests, lib/ with their non-glibc, non-CUDA shared libraries).
# Usage: bash calibrate/run-on-device.sh OUTDIR [DEVICE_DIR]
# Writes OUTDIR/calibration.h5, OUTDIR/gemm-repeat-{1,2}.h5 (GEMM runs to pool: fit --pool-db), logs and
# nvidia-smi output. `all` sweeps NCCL over 1, 2, 4 .. every GPU
# of the node; on a node with >= 2 GPUs and torchrun on PATH, the one-process-per-GPU cross-check
# (scripts/torch_nccl_probe.py) writes OUTDIR/torch-probe-n<GPUs>.csv as well. Each step is bounded (timeout) and the
# script carries on after a failed step so one missing piece (NCCL, a fabric provider) loses only itself.
set -u
out="${1:?usage: run-on-device.sh OUTDIR [DEVICE_DIR]}"
dev="${2:-.device}"
mkdir -p "$out"
# Our libraries: DEVICE_DIR/lib, unpacked from DEVICE_DIR/lib.tar.xz into a scratch folder when only the
# archive was carried (the carried tree may be read-only).
libdirs="$dev/lib"
if [ ! -d "$dev/lib" ] && [ -f "$dev/lib.tar.xz" ]; then
  libdirs=$(mktemp -d) && tar -xJf "$dev/lib.tar.xz" -C "$libdirs"
fi
# CUDA libraries come from the machine: the toolkit's lib64, else the Python wheels (PyTorch's).
for name in libcublasLt.so.13 libnccl.so.2; do
  found=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/targets /usr/lib /opt -name "$name" 2>/dev/null | head -1)
  [ -n "$found" ] && libdirs="$libdirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="$libdirs:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0  # never NVLink multicast on shared hosts
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" | tee "$out/env.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
nvidia-smi -q -d CLOCK >> "$out/nvidia-smi.txt" 2>&1
cal="$dev/moetwin-calibrate"
db="$out/calibration.h5"
{
  echo "== kernels_gpu_tests"; timeout 120 "$dev/kernels_gpu_tests"; echo "rc=$?"
  echo "== all"; timeout 420 "$cal" all --db "$db" --timeout 400; echo "rc=$?"
  echo "== fabric tcp"; timeout 60 "$cal" fabric --provider tcp --db "$db" --max-bytes 1048576 --timeout 10; echo "rc=$?"
  echo "== fabric shm"; timeout 60 "$cal" fabric --provider shm --db "$db" --max-bytes 4194304 --timeout 10; echo "rc=$?"
  echo "== fabric shm gpu"; timeout 60 "$cal" fabric --provider shm --gpu --db "$out/fabric-gpu.h5" --max-bytes 4194304 --timeout 10; echo "rc=$?"
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ "${gpus:-0}" -ge 2 ] && command -v torchrun > /dev/null; then
    echo "== torch nccl probe ($gpus GPUs)"
    timeout 300 torchrun --nproc_per_node "$gpus" "$(dirname "$0")/scripts/torch_nccl_probe.py" \
      > "$out/torch-probe-n$gpus.csv"; echo "rc=$?"
  fi
  # Repeated GEMM runs pool into the fit (fit --pool-db): one run's per-shape noise is 3-10 % of shapes
  # above 5 % (calibrate/README.md, H200 runs 7 and 8).
  for i in 1 2; do
    echo "== gemm repeat $i"; timeout 300 "$cal" gemm --db "$out/gemm-repeat-$i.h5" --timeout 280 > /dev/null; echo "rc=$?"
  done
  echo "== show"; "$cal" show "$db" > "$out/show.csv"; echo "rc=$?"
} 2>&1 | tee "$out/calibrate.log"
