#!/usr/bin/env bash
# End-to-end `moetwin recommend` with the shipped fitted profile on a small scenario: the margin rule comes
# from the profile's cross-validated margin errors, and a dispatcher without live runs (deepep-v2-gin) is
# predicted with each measured DeepEP transport's A2A terms, so its band is at least as wide as theirs.
# Usage: recommend_cli.sh MOETWIN SCENARIO.toml PROFILE.toml WORKDIR
set -euo pipefail
bin=$1 scenario=$2 profile=$3 dir=$4
rm -rf "$dir"
mkdir -p "$dir"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin" recommend "$scenario" --nodes 2,4 --mb 1,2 --profile "$profile" --format csv --out "$dir/rec.csv"
"$bin" recommend "$scenario" --nodes 2,4 --mb 1,2 --profile "$profile" --threads 1 --format csv --out "$dir/rec1.csv"
cmp "$dir/rec.csv" "$dir/rec1.csv" || fail "recommend output differs between thread counts"

p90=$(awk -F' = ' '/^\[cross_validated_margin\]/ {m = 1} m && $1 == "p90_abs_error" {print $2; exit}' "$profile")
[ -n "$p90" ] || fail "the profile has no [cross_validated_margin] p90_abs_error"

# Columns by name; the fields checked come before any free-text column, so splitting on commas is safe.
# The '#' lines before the header are the CSV's context (profile, headroom) for `moetwin report`.
grep -q '^# profile: ' "$dir/rec.csv" || fail "recommend CSV names no profile"
awk -F, -v p90="$p90" '
  /^#/ { next }
  !header { header = 1; for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["status"] != "ok" { next }
  {
    d = $col["dispatcher"]; t = $col["predicted_iter_s"]; lo = $col["predicted_lo_s"]; hi = $col["predicted_hi_s"]
    if (!(lo < t && t < hi)) { print "band does not contain the prediction: " $0; bad = 1 }
    terms = $col["a2a_terms"]
    # Without live runs: deepep-v2-gin, and hybridep and deepep-ibgda (here their EP8 stays inside one node:
    # no RDMA leg, so the one gate lets them run on EFA).
    unfitted = d == "deepep-v2-gin" || d == "hybridep" || d == "deepep-ibgda"
    if (unfitted && terms != "generic") { print d " not generic: " terms; bad = 1 }
    if (!unfitted && terms != "fitted") { print d " not fitted: " terms; bad = 1 }
    width[d] += log(hi / lo); n[d]++
    # The profile margin p90 in its family; wider where the point is new to the fit, never narrower.
    u = $col["margin_uncertainty_pct"]; level = $col["novelty_level"]
    if (100 * p90 - u > 0.01) { print "margin uncertainty " u " < 100 x " p90; bad = 1 }
    if (level == "covered" && u - 100 * p90 > 0.01) { print "margin uncertainty " u " != 100 x " p90; bad = 1 }
    if (level != "covered" && level != "configuration" && level != "platform") { print "novelty_level " level; bad = 1 }
    m = $col["margin_pct"]; e = $col["margin_exceeds_uncertainty"]
    # A margin beyond the uncertainty exceeds it at the central predictions too (the spread of a
    # dispatcher without runs only makes the rule stricter).
    if (e == "true" && !(m > u - 0.01)) { print "margin " m "% <= uncertainty " u "% but exceeds"; bad = 1 }
    if (e != "true" && e != "false") { print "margin_exceeds_uncertainty " e; bad = 1 }
    b = $col["behind_winner_pct"]; bb = $col["behind_beyond_uncertainty"]
    if (d == $col["winner"] && (b != 0 || bb != "false")) { print "winner behind itself: " $0; bad = 1 }
    if (bb == "true" && !(b > u - 0.01)) { print d " behind by " b "% <= " u "% but beyond"; bad = 1 }
  }
  END {
    if (!("deepep-v2-gin" in n) || !("deepep-uccl" in n)) { print "missing dispatchers"; exit 1 }
    # Same points, same end-to-end residuals: the spread over the source terms can only widen the band.
    if (!(width["deepep-v2-gin"] / n["deepep-v2-gin"] > width["deepep-uccl"] / n["deepep-uccl"])) {
      print "deepep-v2-gin band not wider than deepep-uccl'"'"'s"; bad = 1
    }
    exit bad
  }' "$dir/rec.csv" || fail "recommend CSV checks"

"$bin" recommend "$scenario" --nodes 2,4 --pp 1,2 --profile "$profile" >"$dir/rec.txt"
grep -q "nodes 4 (pp 2), mb 2: " "$dir/rec.txt" || fail "--pp per node count not applied"
grep -q "a margin counts when it exceeds" "$dir/rec.txt" || fail "text output does not state the margin rule"
# Every tie names the run that settles it (or says why none does).
ties=$(awk '/^ties, and the cheapest run/ {t = 1; next} /^crossovers:/ {t = 0} t' "$dir/rec.txt")
[ -n "$ties" ] || fail "no ties section"
if [ "$ties" != "  none" ]; then
  echo "$ties" | grep -v -q -E "(measure tp|no run of this layout settles it)" && fail "a tie without a settling run: $ties"
fi
grep -q "deepep-v2-gin: no live runs of it in the fit; its A2A terms are the per-term median of deepep-nvshmem.s and deepep-uccl.s" "$dir/rec.txt" || fail "text output does not flag v2-gin"
# Bad input: --pp with neither one value nor one per node count.
set +e
"$bin" recommend "$scenario" --nodes 2,4,8 --pp 1,2 --profile "$profile" 2>"$dir/e1.log"; s1=$?
set -e
[ "$s1" -eq 2 ] && grep -q -- "--pp" "$dir/e1.log" || fail "--pp count mismatch: status $s1"
echo "recommend_cli: ok"
