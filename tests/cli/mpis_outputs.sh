#!/usr/bin/env bash
# `myriad mpis` writes run.json (log marginal over runs with its standard error, the exact value
# where known, the contraction plan, memory, failures), summary.csv (posterior moments),
# draws.npy (exact posterior draws) and, on request, particles.npy and marginal_weights.npy;
# bad input gives one line and no output directory.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

"$myriad" mpis --model hierarchical_gaussian --model-arg groups=4 --model-arg per_group=3 \
  --k 12 --runs 3 --samples 5 --write-weights --seed 3 --device cpu --output "$work/run" \
  >"$work/stdout" || fail "mpis run exited non-zero"
grep -q "log P = " "$work/stdout" || fail "no log P line"
# The contractions run in SIMD lanes of output elements on the CPU by default; --no-simd one
# element at a time, to the same estimates within rounding (tests/unit/test_log_semiring_gemm.cpp).
grep -q '"device": ".*lanes of' "$work/run/run.json" || fail "run.json device names no lanes"
"$myriad" mpis --model hierarchical_gaussian --model-arg groups=4 --model-arg per_group=3 \
  --k 12 --runs 3 --seed 3 --device cpu --no-simd --output "$work/scalar" --quiet ||
  fail "mpis --no-simd exited non-zero"
grep -q '"device": ".*lanes of' "$work/scalar/run.json" && fail "--no-simd still used lanes"
python3 - "$work/run/run.json" "$work/scalar/run.json" <<'PY' || fail "lanes and --no-simd disagree"
import json, sys
a, b = (json.load(open(p))["log_marginal"]["per_run"] for p in sys.argv[1:])
assert len(a) == len(b) == 3 and all(abs(x - y) <= 1e-9 * max(1, abs(x)) for x, y in zip(a, b)), (a, b)
PY
grep -q "5 index variables, largest clique 2" "$work/stdout" || fail "no plan line"
expect_summary_csv "$work/run/summary.csv" 6 "mu and z[0..3]"
grep -q '^z\[3\],' "$work/run/summary.csv" || fail "summary.csv names"
expect_npy_shape "$work/run/draws.npy" "3, 5, 5" draws
expect_npy_shape "$work/run/particles.npy" "3, 5, 12" particles
expect_npy_shape "$work/run/marginal_weights.npy" "3, 5, 12" weights
expect_run_json_keys "$work/run/run.json" '"method": "mpis"' '"model": "hierarchical_gaussian"' \
  '"k": 12' '"runs": 3' '"samples": 5' '"seed": 3' '"log_marginal"' '"mean"' '"se"' '"per_run"' \
  '"log_marginal_exact"' '"index_variables": 5' '"max_clique": 2' '"operations"' '"peak_bytes"' \
  '"failed_runs": 0' '"nonfinite_entries": 0' '"exact_posterior_check"' '"wall_time"'

# The global baseline, a timeseries model and a paper model; --no-moments writes no summary.
"$myriad" mpis --model hierarchical_gaussian --method global --k 200 --runs 2 --device cpu \
  --output "$work/global" --quiet || fail "global"
grep -q '"method": "global"' "$work/global/run.json" || fail "global method"
"$myriad" mpis --model gaussian_chain --model-arg steps=7 --k 8 --runs 2 --samples 2 --device cpu \
  --output "$work/chain" --quiet || fail "chain"
grep -q 'chain in time' "$work/chain/run.json" || fail "chain operation in the plan"
"$myriad" mpis --model chimpanzees --k 2 --runs 1 --no-moments --device cpu \
  --output "$work/chimps" --quiet || fail "chimpanzees"
[ -e "$work/chimps/summary.csv" ] && fail "--no-moments wrote summary.csv"
grep -q '"index_variables": 54' "$work/chimps/run.json" || fail "chimpanzees index variables"
grep -q '"max_clique": 6' "$work/chimps/run.json" || fail "chimpanzees clique"

# A plate computed in chunks gives the same estimate and says so in run.json.
"$myriad" mpis --model hierarchical_gaussian --model-arg groups=4 --model-arg per_group=3 \
  --k 12 --runs 3 --samples 5 --seed 3 --device cpu --chunk groups=3 --output "$work/chunked" \
  --quiet || fail "chunked run"
grep -q '"chunk_plate": "groups"' "$work/chunked/run.json" || fail "chunk_plate in run.json"
per_run() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['log_marginal']['per_run'])" "$1"; }
if command -v python3 >/dev/null; then
  [ "$(per_run "$work/run/run.json")" = "$(per_run "$work/chunked/run.json")" ] ||
    fail "chunking changed log P: $(per_run "$work/run/run.json") vs $(per_run "$work/chunked/run.json")"
fi

# Bad input: one line on stderr, non-zero status, nothing left behind (lib/expect_error.bash).
common=(--device cpu --output "$work/out")
expect_error "--model is required" mpis --k 4 "${common[@]}"
expect_error "k must be" mpis --model hierarchical_gaussian --k 0 "${common[@]}"
expect_error "runs must be" mpis --model hierarchical_gaussian --runs 0 "${common[@]}"
expect_error "unknown method" mpis --model hierarchical_gaussian --method exact "${common[@]}"
expect_error "not a plated model" mpis --model gaussian "${common[@]}"
expect_error "needs --method mpis" mpis --model hierarchical_gaussian --method global --write-weights "${common[@]}"
expect_error "memory-limit must be" mpis --model hierarchical_gaussian --memory-limit -1 "${common[@]}"
expect_error "more than the" mpis --model occupancy --k 20 --memory-limit 1 "${common[@]}"
expect_error "for one joint sample" mpis --model hierarchical_gaussian --method global --memory-limit 1e-9 "${common[@]}"
expect_error "more than the limit" mpis --model occupancy --k 80 "${common[@]}"
expect_error "unknown argument 'nope'" mpis --model occupancy --model-arg nope=1 "${common[@]}"
expect_error "expected independent or mixture\|independent, mixture" mpis --model gaussian_chain --model-arg proposal=best "${common[@]}"
expect_error "must be >= 1" mpis --model gaussian_chain --model-arg steps=0 "${common[@]}"
expect_error "a plated model: run it with" sample --model movielens "${common[@]}"
expect_error "only a top-level plate" mpis --model hierarchical_gaussian --chunk observations=2 "${common[@]}"
expect_error "no plate named" mpis --model hierarchical_gaussian --chunk nosuch=2 "${common[@]}"
expect_error "is not PLATE=SIZE" mpis --model hierarchical_gaussian --chunk groups=0 "${common[@]}"
expect_usage_error "--chunk needs --method mpis" mpis --model hierarchical_gaussian --method global --chunk groups=2 "${common[@]}"
expect_usage_error "--contraction chooses a CUDA path" mpis --model hierarchical_gaussian --contraction cublas "${common[@]}"
expect_usage_error "memory-limit must be a positive number of GiB" mpis --model hierarchical_gaussian --memory-limit 1e300 "${common[@]}"
expect_usage_error "unknown contraction path" mpis --model hierarchical_gaussian --contraction fast "${common[@]}"
# A run that fails once started (the chunk is larger than the plate, known from the model)
# leaves neither its output directory nor the parents it created.
expect_error "elements of plate 'groups', which has" mpis --model hierarchical_gaussian --k 4 --chunk groups=100000 --device cpu --output "$work/new/nested/out"
if [ -e "$work/new" ]; then
  echo "FAIL: a failed run left the parents of its output directory behind"; failures=$((failures + 1))
fi

[ $failures -eq 0 ] && echo "mpis outputs: ok"
exit $failures
