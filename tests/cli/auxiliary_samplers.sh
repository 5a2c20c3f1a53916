#!/usr/bin/env bash
# `myriad sample --sampler slice|elliptical-slice|reflective-slice|pm-mh|apm-*`: the outputs and
# run.json's `auxiliary` block (adapted step and scale, capped slice updates per chain,
# evaluations, the acceptance of u), the exact block of the Gaussian latent variable model, and
# the usage errors.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

lvm=(--model gaussian_latent_variable --model-arg observations=3 --model-arg samples=4)
for sampler in slice elliptical-slice reflective-slice pm-mh apm-mi-mh apm-ss-mh apm-mi-ss apm-ss-ss; do
  "$myriad" sample "${lvm[@]}" --sampler "$sampler" --chains 8 --warmup 100 --draws 50 --seed 3 \
    --device cpu --output "$work/$sampler" --quiet || { echo "FAIL: $sampler did not run"; exit 1; }
done
# A capped slice: the standard logistic with one shrink allowed.
"$myriad" sample --model standard_logistic --sampler slice --max-shrinks 1 --chains 8 --warmup 50 \
  --draws 50 --device cpu --output "$work/capped" --quiet || exit 1
python3 - "$work" <<'PY' || { echo "FAIL: auxiliary outputs"; failures=$((failures + 1)); }
import json, sys
work = sys.argv[1]
for sampler in ("slice", "elliptical-slice", "reflective-slice", "pm-mh", "apm-mi-mh", "apm-ss-mh",
                "apm-mi-ss", "apm-ss-ss"):
    r = json.load(open(f"{work}/{sampler}/run.json"))
    assert r["method"] == sampler, r["method"]
    a = r["auxiliary"]
    assert len(a["scale"]) == 10 and all(s > 0 for s in a["scale"]), a["scale"]
    assert len(a["capped"]["per_chain"]) == 8, a["capped"]
    assert a["density_evaluations"] > 0, a
    assert ("walk" in a) == (sampler in ("pm-mh", "apm-mi-mh", "apm-ss-mh")), a
    assert ("slice" in a) == (sampler not in ("pm-mh", "apm-mi-mh")), a
    assert ("auxiliary_acceptance" in a) == sampler.startswith("apm-"), a
    if "walk" in a:
        assert a["walk"]["step"] > 0 and a["walk"]["target_accept"] == (0.07 if sampler == "pm-mh" else 0.234), a["walk"]
    assert r["sampling"]["density_evaluations"] > 0, r["sampling"]
    assert list(r["exact"]) == [f"x[{d}]" for d in range(10)], r["exact"]
c = json.load(open(f"{work}/capped/run.json"))["auxiliary"]["capped"]
assert c["sampling"] > 0 and c["chains_capped"] > 0 and sum(c["per_chain"]) == c["warmup"] + c["sampling"], c
PY
# The ABC baselines in input space on a generator: elliptical slice sampling of
# ρ(u) k_ε(x̄ | g(u)) on Lotka–Volterra (thesis §4.10: uniform kernel ε = 100).
"$myriad" sample --model lotka_volterra --sampler elliptical-slice --abc-epsilon 100 \
  --abc-kernel uniform --chains 4 --warmup 20 --draws 20 --device cpu --output "$work/lv" --quiet ||
  { echo "FAIL: ABC elliptical slice on lotka_volterra did not run"; exit 1; }
python3 - "$work" <<'PY' || { echo "FAIL: ABC slice outputs"; failures=$((failures + 1)); }
import json, sys
r = json.load(open(f"{sys.argv[1]}/lv/run.json"))
assert r["method"] == "elliptical-slice" and r["abc"] == {"epsilon": 100.0, "kernel": "uniform"}, r.get("abc")
assert len(r["auxiliary"]["capped"]["per_chain"]) == 4, r["auxiliary"]
PY
# Pseudo-marginal ABC on the Lotka-Volterra summaries as APM MI+MH (thesis §4.10.2), the noise
# inputs as the auxiliary variates (Gaussian kernel: every start is finite).
"$myriad" sample --model lotka_volterra_summaries --sampler apm-mi-mh --abc-epsilon 5 \
  --abc-kernel gaussian --chains 4 --warmup 50 --draws 50 --device cpu --output "$work/lvs" \
  --quiet || { echo "FAIL: APM on lotka_volterra_summaries did not run"; exit 1; }
python3 - "$work" <<'PY' || { echo "FAIL: APM ABC outputs"; failures=$((failures + 1)); }
import json, sys
r = json.load(open(f"{sys.argv[1]}/lvs/run.json"))
assert r["method"] == "apm-mi-mh" and r["abc"]["kernel"] == "gaussian", r.get("abc")
assert len(r["auxiliary"]["scale"]) == 4 and "auxiliary_acceptance" in r["auxiliary"], r["auxiliary"]
PY
# The same seed gives the same draws.
"$myriad" sample "${lvm[@]}" --sampler apm-ss-ss --chains 8 --warmup 100 --draws 50 --seed 3 \
  --device cpu --output "$work/again" --quiet || exit 1
cmp -s "$work/apm-ss-ss/draws.npy" "$work/again/draws.npy" || { echo "FAIL: apm-ss-ss is not reproducible"; failures=$((failures + 1)); }

common=(--warmup 10 --draws 10 --device cpu --output "$work/out")
# GP probit on the full Wisconsin data (683 rows, N = 50): a few iterations of APM MI+MH, each a
# Laplace fit of a 683 × 683 covariance per x; then SS+SS on a reduced set.
"$myriad" sample --model gp_probit --sampler apm-mi-mh --chains 2 --warmup 2 --draws 2 --seed 5 \
  --device cpu --output "$work/gp" --quiet || { echo "FAIL: gp_probit on the full data did not run"; exit 1; }
"$myriad" sample --model gp_probit --model-arg rows=30 --model-arg samples=8 --sampler apm-ss-ss \
  --chains 4 --warmup 20 --draws 20 --device cpu --output "$work/gp30" --quiet ||
  { echo "FAIL: gp_probit on 30 rows did not run"; exit 1; }
python3 - "$work" <<'PY' || { echo "FAIL: gp_probit outputs"; failures=$((failures + 1)); }
import json, sys
work = sys.argv[1]
names = ["log_s"] + [f"log_ell[{k}]" for k in range(1, 10)]
for run, chains, draws in (("gp", 2, 2), ("gp30", 4, 20)):
    r = json.load(open(f"{work}/{run}/run.json"))
    assert r["model"] == "gp_probit", r["model"]
    assert list(r["diagnostics"]["nested_rhat"]) == names, r["diagnostics"]
    a = r["auxiliary"]
    assert len(a["scale"]) == 10 and a["density_evaluations"] > 0, a
    assert "auxiliary_acceptance" in a, a
    header = open(f"{work}/{run}/summary.csv").readline()
    assert header.startswith("variable,"), header
PY
expect_usage_error "gp_probit is an estimator model (use pm-mh or apm-\*)" sample --model gp_probit "${common[@]}"
expect_usage_error "gp_probit: slice needs a density model" sample --model gp_probit --sampler slice "${common[@]}"
expect_usage_error "gp_probit: samples (N) must be positive, got 0" sample --model gp_probit --model-arg samples=0 --sampler pm-mh "${common[@]}"
expect_usage_error "rows must lie in 0 … 683" sample --model gp_probit --model-arg rows=684 --sampler pm-mh "${common[@]}"
expect_usage_error "max_newton must be positive" sample --model gp_probit --model-arg max_newton=0 --sampler pm-mh "${common[@]}"

# `myriad models` names the samplers each model takes.
"$myriad" models >"$work/models"
grep -q "^gaussian_latent_variable  \[density: .*, slice, elliptical-slice, reflective-slice, pm-mh, apm-mi-mh, apm-ss-mh, apm-mi-ss, apm-ss-ss\]" "$work/models" ||
  { echo "FAIL: models does not list the LVM's samplers"; failures=$((failures + 1)); }
grep -q "^gp_probit  \[estimator: --sampler pm-mh, apm-mi-mh, apm-ss-mh, apm-mi-ss, apm-ss-ss\]" "$work/models" ||
  { echo "FAIL: models does not list gp_probit's samplers"; failures=$((failures + 1)); }
grep -q "^funnel  \[density: --sampler chees (default), snaper, nuts, hmc, slice\]" "$work/models" ||
  { echo "FAIL: models does not list funnel's slice sampler"; failures=$((failures + 1)); }

expect_usage_error "elliptical-slice needs a model with a Gaussian prior factor" sample --model funnel --sampler elliptical-slice "${common[@]}"
expect_usage_error "reflective-slice needs a model with a Gaussian prior factor" sample --model standard_logistic --sampler reflective-slice "${common[@]}"
expect_usage_error "pm-mh needs an estimator model" sample --model funnel --sampler pm-mh "${common[@]}"
expect_usage_error "--sampler slice does not run on eight_schools" sample --model eight_schools --sampler slice "${common[@]}"
expect_usage_error "sphere does not say which are which" sample --model sphere --sampler apm-mi-mh --abc-epsilon 1 "${common[@]}"
expect_usage_error "on a generator samples its ABC posterior and needs --abc-epsilon" sample --model sphere --sampler elliptical-slice "${common[@]}"
expect_usage_error "--abc-epsilon does not apply to --sampler slice on a density model" sample --model funnel --sampler slice --abc-epsilon 1 "${common[@]}"
expect_usage_error "--walk-step applies to pm-mh and apm-\*-mh, not slice" sample --model funnel --sampler slice --walk-step 0.5 "${common[@]}"
expect_usage_error "--slice-width applies to slice" sample "${lvm[@]}" --sampler pm-mh --slice-width 2 "${common[@]}"
expect_usage_error "--coordinate-wise applies to --sampler slice, not apm-mi-ss" sample "${lvm[@]}" --sampler apm-mi-ss --coordinate-wise "${common[@]}"
expect_usage_error "--max-shrinks applies to the samplers with a slice update, not pm-mh" sample "${lvm[@]}" --sampler pm-mh --max-shrinks 8 "${common[@]}"
expect_usage_error "--metric does not apply to --sampler slice" sample --model funnel --sampler slice --metric diag "${common[@]}"
expect_usage_error "--slice-width applies to the slice and pseudo-marginal samplers, not chees" sample --model funnel --slice-width 2 "${common[@]}"
expect_usage_error "the slice width must be positive" sample --model funnel --sampler slice --slice-width 0 "${common[@]}"
expect_usage_error "--precision float does not apply to --sampler slice" sample --model funnel --sampler slice --precision float "${common[@]}"
expect_usage_error "samples (N) must lie in 1" sample --model gaussian_latent_variable --model-arg samples=0 --sampler pm-mh "${common[@]}"
expect_usage_error "is not one of normal, uniform" sample "${lvm[@]}" --model-arg variates=beta --sampler pm-mh "${common[@]}"
[ $failures -eq 0 ] || exit 1
