#!/usr/bin/env bash
# One-command set-up for a fresh Debian 12 machine (run as root): installs the Debian packages moetwin
# needs, configures and builds, then either runs the main job on the shipped default scenario or runs
# the test suite. Both use one Release build folder: `run` builds only the program the main job needs
# (the moetwin binary and its libraries, a few minutes on 2 cores), `test` builds the rest (moetwin-net and
# moetwin-sweep, which `moetwin net|sweep` run, and every test and benchmark) and runs them; after `run`,
# `test` builds nothing twice.
#   bash bootstrap.sh run    # set up, build moetwin, inspect + predict scenarios/default.toml
#   bash bootstrap.sh test   # set up, build everything, run every test (ctest)
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure flags), JOBS (default nproc).
# Compiler warnings are printed but do not stop the build; CI passes CMAKE_ARGS=-DMOETWIN_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-run}
build_dir=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
case "$mode" in
  run | test) ;;
  *)
    echo "usage: bash bootstrap.sh run|test" >&2
    exit 2
    ;;
esac


packages=(
  build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev
  libsimgrid-dev libboost-graph-dev libtomlplusplus-dev libhdf5-dev hdf5-tools libfabric-dev libfabric-bin
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin gnuplot-nox python3
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then echo "bootstrap: run as root to install packages" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The CUDA toolkit (nvcc, cuBLAS, NCCL) is used from /usr/local/cuda when present; without it the GPU
# parts are skipped and everything else builds and tests.
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi

# Release (-O3, no debug info): what a user's plain `cmake -DCMAKE_BUILD_TYPE=Release` gets, so the tests
# run on the binaries users run, and CI builds the tree once in this configuration.
# MOETWIN_WERROR=OFF first so a build folder CI configured once does not keep it: CMAKE_ARGS comes after
# and wins.
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOETWIN_WERROR=OFF ${CMAKE_ARGS:-}

case "$mode" in
  run)
    cmake --build "$build_dir" -j "$jobs" --target moetwin
    # The main job: how much work one iteration of the default scenario is, whether it fits, and how
    # long it takes on the simulated cluster.
    "$build_dir"/cli/moetwin inspect scenarios/default.toml
    "$build_dir"/cli/moetwin predict scenarios/default.toml
    ;;
  test)
    cmake --build "$build_dir" -j "$jobs"
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 600
    ;;
esac
