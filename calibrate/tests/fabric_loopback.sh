#!/bin/sh
# End-to-end: moetwin-calibrate fabric over loopback with one provider, then check the database holds
# one latency and one bandwidth experiment per message size (8 B .. 4 KiB = 10 sizes).
# Exit 4 (provider missing here) is passed through; ctest treats it as "skipped".
set -u
bin="$1"; provider="$2"; dir="$3"
db="$dir/fabric-$provider.h5"
rm -f "$db"
"$bin" fabric --provider "$provider" --db "$db" --min-bytes 8 --max-bytes 4096 --iters 20 --bw-iters 4 \
  --window 16 --timeout 10
rc=$?
[ $rc -eq 0 ] || exit $rc
lat=$("$bin" show "$db" --kind fabric_latency | grep -c "^fabric\.$provider\.latency\.")
bw=$("$bin" show "$db" --kind fabric_bandwidth | grep -c "^fabric\.$provider\.bandwidth\.")
[ "$lat" -eq 10 ] || { echo "expected 10 latency experiments, got $lat"; exit 1; }
[ "$bw" -eq 10 ] || { echo "expected 10 bandwidth experiments, got $bw"; exit 1; }
"$bin" show "$db" --kind fabric_latency | grep -q "^fabric\.$provider\.latency\.4096,fabric_latency,s,20," ||
  { echo "expected 20 samples at 4096 B"; exit 1; }
echo "fabric loopback $provider: ok"
