#!/usr/bin/env bash
# `myriad ais` writes run.json (log Z, its standard errors, weight ESS, log_z_exact, the reverse
# bound), summary.csv (the weighted posterior sample), log_weights.npy and particles.npy, and
# rejects bad input with one line and no output directory.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

"$myriad" ais --model gaussian --model-arg dim=3 --model-arg mean=1 --particles 64 \
  --temperatures 50 --reverse --seed 3 --device cpu --output "$work/run" >"$work/stdout" ||
  fail "ais run exited non-zero"
grep -q "log Z = " "$work/stdout" || fail "no log Z line"
# The Gaussian anneals in SIMD lanes on the CPU by default; --no-simd one particle at a time,
# to the same log Z within rounding (equal to 4 decimals here).
grep -q '"device": ".*lanes of' "$work/run/run.json" || fail "run.json device names no lanes"
"$myriad" ais --model gaussian --model-arg dim=3 --model-arg mean=1 --particles 64 \
  --temperatures 50 --seed 3 --device cpu --no-simd --output "$work/scalar" --quiet ||
  fail "ais --no-simd exited non-zero"
grep -q '"device": ".*lanes of' "$work/scalar/run.json" && fail "--no-simd still used lanes"
python3 - "$work/run/run.json" "$work/scalar/run.json" <<'PY' || fail "lanes and --no-simd disagree"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert abs(a["log_z"] - b["log_z"]) < 1e-4, (a["log_z"], b["log_z"])
PY
grep -q "particle-temperatures/s" "$work/stdout" || fail "no throughput line"
expect_summary_csv "$work/run/summary.csv" 4
expect_npy_shape "$work/run/log_weights.npy" "1, 64" log_weights
expect_npy_shape "$work/run/particles.npy" "1, 64, 3" particles
expect_npy_shape "$work/run/reverse_log_ratios.npy" "1, 64" reverse
expect_run_json_keys "$work/run/run.json" '"method": "hais"' '"model": "gaussian"' \
  '"particles": 64' '"temperatures": 50' '"seed": 3' '"log_z"' '"log_z_se"' \
  '"log_z_se_bootstrap"' '"ess"' '"log_z_exact": 0' '"log_z_upper"' '"persistence"' \
  '"particle_temperatures_per_second"' '"failures"' '"per_problem"' '"wall_time"' \
  '"exact_posterior_check"' '"max_error_in_mcse"'

# Full refresh with three leapfrog steps is plain AIS with HMC; the random-walk baseline.
"$myriad" ais --model gaussian --model-arg dim=2 --particles 16 --temperatures 20 --persistence 1 \
  --leapfrog-steps 3 --schedule sigmoid --device cpu --output "$work/hmc" --quiet || fail "ais-hmc"
grep -q '"method": "ais-hmc"' "$work/hmc/run.json" || fail "ais-hmc method"
grep -q '"schedule": "sigmoid"' "$work/hmc/run.json" || fail "sigmoid schedule"
"$myriad" ais --model gaussian --model-arg dim=2 --particles 16 --temperatures 20 \
  --transition metropolis --schedule geometric --device cpu --output "$work/rwm" --quiet || fail "rwm"
grep -q '"method": "ais-metropolis"' "$work/rwm/run.json" || fail "rwm method"
grep -q '"particle_mapping": "auto"' "$work/rwm/run.json" || fail "default particle mapping"
# The CPU accepts (and ignores) a CUDA particle mapping; run.json records the request.
"$myriad" ais --model poe_student_t --model-arg dim=3 --model-arg experts=5 --particles 8 \
  --temperatures 10 --particle-mapping warp --device cpu --output "$work/warp" --quiet ||
  fail "particle mapping on the cpu"
grep -q '"particle_mapping": "warp"' "$work/warp/run.json" || fail "particle mapping recorded"

# A user-given schedule.
printf '0 0.01\n0.1 0.5\n1\n' >"$work/beta.txt"
"$myriad" ais --model gaussian --model-arg dim=2 --particles 16 --schedule-file "$work/beta.txt" \
  --device cpu --output "$work/user" --quiet || fail "schedule file"
grep -q '"schedule": "user"' "$work/user/run.json" || fail "user schedule"
grep -q '"temperatures": 4' "$work/user/run.json" || fail "user schedule length"
printf '0 0.5 0.4 1\n' >"$work/bad.txt"

# Bad input: one line on stderr, non-zero status, nothing left behind (lib/expect_error.bash).
common=(--device cpu --output "$work/out")
expect_error "--model is required" ais --particles 4 "${common[@]}"
expect_error "particles must be" ais --model gaussian --particles 0 "${common[@]}"
expect_error "temperatures must be" ais --model gaussian --temperatures 0 "${common[@]}"
expect_error "unknown schedule" ais --model gaussian --schedule cosine "${common[@]}"
expect_error "unknown AIS transition" ais --model gaussian --transition gibbs "${common[@]}"
expect_error "unknown particle mapping" ais --model gaussian --particle-mapping block "${common[@]}"
expect_error "gamma must lie in" ais --model gaussian --persistence 1.5 "${common[@]}"
expect_error "step size must be positive" ais --model gaussian --step-size -1 "${common[@]}"
expect_error "beta_min must lie in" ais --model gaussian --schedule geometric --schedule-parameter 2 "${common[@]}"
expect_error "not an annealing target" ais --model sphere "${common[@]}"
expect_error "must increase strictly" ais --model gaussian --schedule-file "$work/bad.txt" "${common[@]}"
expect_error "cannot read schedule file" ais --model gaussian --schedule-file "$work/none.txt" "${common[@]}"
: >"$work/empty.txt"
expect_usage_error "holds no inverse temperatures" ais --model gaussian --schedule-file "$work/empty.txt" "${common[@]}"
expect_usage_error "is a directory" ais --model gaussian --schedule-file "$work" "${common[@]}"
expect_usage_error "--schedule-parameter applies to the geometric and sigmoid" ais --model gaussian --schedule-parameter 3 "${common[@]}"
expect_usage_error "unknown schedule" ais --model gaussian --schedule cubic "${common[@]}"
expect_error "replaces --schedule" ais --model gaussian --schedule-file "$work/beta.txt" --temperatures 5 "${common[@]}"
expect_error "exact posterior samples" ais --model poe_laplace --model-arg dim=3 --model-arg experts=5 --reverse "${common[@]}"
expect_error "exact posterior samples" ais --model mcrbm --model-arg dim=3 --reverse "${common[@]}"
expect_error "an annealing target: run it with" sample --model poe_laplace "${common[@]}"

[ $failures -eq 0 ] && echo "ais outputs: ok"
exit $failures
