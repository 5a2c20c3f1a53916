#!/usr/bin/env bash
# `myriad temper` writes run.json (log Z with its standard error, log_z_exact, the exact-posterior
# and base checks, R-hat of beta), summary.csv (the target's weighted moments) and beta.npy, for
# every method, and rejects bad input with one line and no output directory.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

# An equicorrelated Gaussian (log Z = 0 exactly) with zeta one nat off, every method. log Z within
# 4 standard errors and the base check under 5 (the stat tests' bounds, tests/stat/
# test_tempering_run.cpp); these runs are smaller, the bounds are the same.
for method in gibbs-ct ct-hmc st; do
  extra=()
  [ "$method" = st ] && extra=(--temperatures 11 --schedule linear)
  [ "$method" = ct-hmc ] && extra=(--initial-u -2)
  "$myriad" temper --method "$method" --model gaussian --model-arg dim=3 --model-arg mean=1 \
    --model-arg sd=0.6 --model-arg rho=0.3 --chains 32 --warmup 100 --draws 600 --step-size 0.25 \
    --leapfrog-steps 10 --log-zeta -1 --seed 5 --device cpu "${extra[@]}" \
    --output "$work/$method" >"$work/stdout" || fail "$method run exited non-zero"
  grep -q "log Z = " "$work/stdout" || fail "$method: no log Z line"
  grep -q "chain-iterations/s" "$work/stdout" || fail "$method: no throughput line"
  [ "$(head -1 "$work/$method/summary.csv")" = \
    "variable,mean,sd,mcse_mean,q5,q50,q95,rhat,ess_bulk,ess_tail" ] || fail "$method: summary header"
  [ "$(wc -l <"$work/$method/summary.csv")" -eq 4 ] || fail "$method: summary.csv rows"
  head -c 128 "$work/$method/beta.npy" | grep -aq "'shape': (600, 32)" || fail "$method: beta shape"
  for key in "\"method\": \"$method\"" '"model": "gaussian"' '"chains": 32' '"log_z"' \
             '"log_z_se"' '"log_z_exact": 0' '"exact_posterior_check"' '"base_check"' \
             '"beta_rhat"' '"chain_iterations_per_second"' '"failures"' '"dropped_samples"' \
             '"acceptance"' '"wall_time"' '"log_zeta": -1'; do
    grep -q "$key" "$work/$method/run.json" || fail "$method: run.json lacks $key"
  done
  python3 - "$work/$method/run.json" <<'PY' || fail "$method: estimates off"
import json, sys
r = json.load(open(sys.argv[1]))
assert abs(r["log_z"] - r["log_z_exact"]) < 4 * r["log_z_se"], (r["log_z"], r["log_z_se"])
assert r["base_check"]["max_error_in_se"] < 5, r["base_check"]
assert r["exact_posterior_check"]["max_error_in_mcse"] < 5, r["exact_posterior_check"]
assert r["failures"]["dropped_samples"] == 0 and r["failures"]["non_finite"] == 0
PY
done
grep -q '"schedule": "linear"' "$work/st/run.json" || fail "st schedule recorded"
grep -q '"schedule_parameter": null' "$work/st/run.json" || fail "st linear schedule has no parameter"
grep -q '"temperatures": 11' "$work/st/run.json" || fail "st ladder length recorded"
grep -q '"u_scale"' "$work/ct-hmc/run.json" || fail "ct-hmc u scale recorded"

# A user-given ladder, and a base with its own mean and scale; an annealing target (a Boltzmann
# relaxation, exact log Z by enumeration) runs too.
printf '0 0.2\n0.5 1\n' >"$work/ladder.txt"
"$myriad" temper --method st --schedule-file "$work/ladder.txt" --model gaussian --model-arg dim=2 \
  --chains 4 --warmup 5 --draws 20 --base-mean 0.5 --base-scale 2 --device cpu \
  --output "$work/user" --quiet || fail "schedule file"
grep -q '"schedule": "user"' "$work/user/run.json" || fail "user ladder recorded"
grep -q '"scale": 2.0' "$work/user/run.json" || fail "base scale recorded"
grep -q '"exact": 0.5' "$work/user/run.json" || fail "base mean in the base check"
"$myriad" temper --model boltzmann_relaxation --model-arg units=6 --chains 4 --warmup 5 --draws 20 \
  --device cpu --output "$work/boltzmann" --quiet || fail "boltzmann relaxation"
grep -q '"log_z_exact"' "$work/boltzmann/run.json" || fail "boltzmann log_z_exact"
# The thesis's SDP relaxation (shipped for 12 units, seed 201702): D = 11 < 12 coordinates.
"$myriad" temper --model boltzmann_relaxation --model-arg lambda=sdp --chains 4 --warmup 5 \
  --draws 20 --device cpu --output "$work/sdp" --quiet || fail "boltzmann relaxation, SDP Lambda"
grep -q '"lambda": "sdp"' "$work/sdp/run.json" || fail "sdp model argument recorded"
grep -q '"dim": 11' "$work/sdp/run.json" || fail "sdp relaxation's dimension"

# A fitted base (estimate/variational_base.hpp) sets the base and log zeta, and run.json says so;
# ais takes the same base.
"$myriad" temper --model boltzmann_relaxation --model-arg units=8 --base fitted --base-restarts 4 \
  --chains 8 --warmup 20 --draws 100 --device cpu --output "$work/fitted" >"$work/stdout" ||
  fail "fitted base"
grep -q "fitted base: " "$work/stdout" || fail "no fitted-base line"
python3 - "$work/fitted/run.json" <<'PY' || fail "fitted base in run.json"
import json, sys
r = json.load(open(sys.argv[1]))
base = r["base"]
assert base["kind"] == "fitted" and base["restarts"] == 4, base
assert 1 <= len(base["components"]) <= 4 and len(base["scale"]) == 8, base
assert r["settings"]["log_zeta"] == base["log_zeta"], (r["settings"], base["log_zeta"])
elbos = [c["elbo"] for c in base["components"]]
assert elbos == sorted(elbos, reverse=True) and base["log_zeta"] >= elbos[0], elbos
PY
"$myriad" ais --model boltzmann_relaxation --model-arg units=8 --base fitted --base-restarts 4 \
  --particles 8 --temperatures 20 --device cpu --output "$work/ais_fitted" --quiet ||
  fail "ais with a fitted base"
grep -q '"kind": "fitted"' "$work/ais_fitted/run.json" || fail "ais run.json base kind"
grep -q '"kind": "fixed"' "$work/boltzmann/run.json" || fail "temper run.json fixed base"
grep -q '"metric": "unit"' "$work/boltzmann/run.json" || fail "temper run.json unit metric"

# The radon regression (92 parameters, its data compiled in) with a fitted base and the base's
# metric; and from a data file of the same shape (the built-in data's first 3 counties).
"$myriad" temper --model radon --base fitted --base-restarts 2 --base-iterations 200 \
  --metric base --step-size 0.2 --chains 4 --warmup 5 --draws 20 --device cpu \
  --output "$work/radon" --quiet || fail "radon"
grep -q '"metric": "base"' "$work/radon/run.json" || fail "radon metric recorded"
grep -q '"dim": 92' "$work/radon/run.json" || fail "radon's 92 parameters"
cat >"$work/radon.json" <<'JSON'
{"N": 5, "J": 3, "log_radon": [1.1, 0.4, 1.9, 0.8, 1.3], "floor_measure": [0, 1, 0, 0, 1],
 "log_uppm": [-0.5, 0.2, 0.6, -0.5, 0.2], "county_idx": [1, 2, 3, 1, 2]}
JSON
"$myriad" temper --model radon --data "$work/radon.json" --chains 4 --warmup 5 --draws 20 \
  --step-size 0.1 --device cpu --output "$work/radon_data" --quiet || fail "radon --data"
grep -q '"dim": 10' "$work/radon_data/run.json" || fail "radon on a data file: J + 7 parameters"
grep -q '"data_file"' "$work/radon_data/run.json" || fail "radon's data file recorded"
"$myriad" ais --model radon --data "$work/radon.json" --particles 4 --temperatures 10 \
  --step-size 0.05 --device cpu --output "$work/radon_ais" --quiet || fail "ais radon --data"
grep -q '"data_file"' "$work/radon_ais/run.json" || fail "ais records the data file"
sed 's/"county_idx": \[1, 2, 3, 1, 2\]/"county_idx": [1, 2, 4, 1, 2]/' "$work/radon.json" \
  >"$work/radon_bad.json"

# Bad input: one line on stderr, non-zero status, nothing left behind (lib/expect_error.bash).
common=(--model gaussian --device cpu --output "$work/out")
printf '0 0.5 0.4 1\n' >"$work/down.txt"
printf '0 0.5 1.5\n' >"$work/above.txt"
printf '0.1 0.5 1\n' >"$work/late.txt"
expect_usage_error "--model is required" temper --device cpu --output "$work/out"
expect_usage_error "unknown tempering method" temper --method gibbs "${common[@]}"
expect_usage_error "unknown schedule" temper --method st --schedule cosine "${common[@]}"
expect_usage_error "temperatures must be" temper --method st --temperatures 1 "${common[@]}"
expect_usage_error "must increase" temper --method st --schedule-file "$work/down.txt" "${common[@]}"
expect_usage_error "must end at beta = 1" temper --method st --schedule-file "$work/above.txt" "${common[@]}"
expect_usage_error "must start at beta = 0" temper --method st --schedule-file "$work/late.txt" "${common[@]}"
expect_error "cannot read schedule file" temper --method st --schedule-file "$work/none.txt" "${common[@]}"
expect_usage_error "replaces --schedule" temper --method st --schedule linear --schedule-file "$work/down.txt" "${common[@]}"
expect_usage_error "applies to the geometric and sigmoid" temper --method st --schedule linear --schedule-parameter 2 "${common[@]}"
expect_usage_error "applies to --method st" temper --method gibbs-ct --schedule-parameter 2 "${common[@]}"
expect_usage_error "base-scale must be positive" temper --base-scale 0 "${common[@]}"
expect_usage_error "base-scale must be positive" temper --base-scale -1 "${common[@]}"
expect_usage_error "base-mean must be a finite number" temper --base-mean inf "${common[@]}"
expect_usage_error "chains must be" temper --chains 1 "${common[@]}"
expect_usage_error "draws must be" temper --draws 1 "${common[@]}"
expect_usage_error "step size must be positive" temper --step-size 0 "${common[@]}"
expect_usage_error "u scale must be positive" temper --method ct-hmc --u-scale 0 "${common[@]}"
expect_usage_error "applies to --method st" temper --method gibbs-ct --temperatures 10 "${common[@]}"
expect_usage_error "applies to --method ct-hmc" temper --method st --u-scale 2 "${common[@]}"
expect_usage_error "not an annealing target" temper --model sphere --device cpu --output "$work/out"
expect_usage_error "unknown base" temper --base learned "${common[@]}"
expect_usage_error "unknown tempering metric" temper --metric dense "${common[@]}"
expect_usage_error "county_idx" temper --model radon --data "$work/radon_bad.json" --device cpu \
  --output "$work/out"
expect_usage_error "log-zeta is set by --base fitted" temper --base fitted --log-zeta 2 "${common[@]}"
expect_usage_error "base-scale is set by --base fitted" temper --base fitted --base-scale 2 "${common[@]}"
expect_usage_error "base-restarts applies to --base fitted" temper --base-restarts 4 "${common[@]}"
expect_usage_error "base-restarts must be" temper --base fitted --base-restarts 0 "${common[@]}"
expect_usage_error "base-scale is set by --base fitted" ais --base fitted --base-scale 2 "${common[@]}"
expect_error "no SDP Lambda is shipped for units=13" temper --model boltzmann_relaxation \
  --model-arg units=13 --model-arg lambda=sdp --device cpu --output "$work/out"
expect_usage_error "takes no data" temper --data "$work/radon.json" "${common[@]}"
expect_error "one problem" temper --model linear_generative --device cpu --output "$work/out"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "temper outputs: ok"
