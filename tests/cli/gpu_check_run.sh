#!/usr/bin/env bash
# scripts/gpu/check_run.py, the GPU window's end-to-end check (scripts/gpu-check verify), on
# CPU runs of the same methods: it passes runs that match their exact answers and fails one whose
# exact answer is moved by many standard errors, or a run directory without one; and its `runs`
# check of a model without an exact answer.
set -euo pipefail
myriad=$1
source_dir=$2
check="python3 $source_dir/scripts/gpu/check_run.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$myriad" sample --model gaussian --model-arg dim=3 --chains 256 --warmup 200 --draws 400 \
  --seed 20 --device cpu --quiet --output "$work/hmc"
$check sample "$work/hmc" | grep -q '^PASS chees gaussian'
"$myriad" ais --model gaussian --model-arg dim=4 --particles 512 --temperatures 200 --seed 20 \
  --device cpu --quiet --output "$work/ais"
$check ais "$work/ais" | grep -q '^PASS ais gaussian'
"$myriad" mpis --model hierarchical_gaussian --k 100 --runs 20 --seed 20 --device cpu --quiet \
  --output "$work/mpis"
$check mpis "$work/mpis" | grep -q '^PASS mpis hierarchical_gaussian'
# A model without an exact answer: that it runs, and a failing chain fails the check.
"$myriad" sample --model gp_probit --model-arg rows=20 --model-arg samples=4 --sampler pm-mh \
  --chains 8 --warmup 200 --draws 20 --seed 20 --device cpu --quiet --output "$work/gp"
$check runs "$work/gp" | grep -q '^PASS pm-mh gp_probit'
python3 - "$work/gp/run.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["failures"]["non_finite"] = 3  # of 160 transitions
json.dump(report, open(sys.argv[1], "w"))
PY
status=0
$check runs "$work/gp" >"$work/out" || status=$?
[ "$status" -eq 1 ] && grep -q '^FAIL .*failures: non_finite 3' "$work/out"

# Moving x[0]'s exact mean by 0.2 posterior sd is far beyond 5 standard errors here.
python3 - "$work/hmc/run.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
report["exact"]["x[0]"]["mean"] += 0.2 * report["exact"]["x[0]"]["sd"]
json.dump(report, open(sys.argv[1], "w"))
PY
status=0
$check sample "$work/hmc" >"$work/out" || status=$?
[ "$status" -eq 1 ] && grep -q '^FAIL .*E\[x\] of x\[0\]' "$work/out"
# A run without an exact answer cannot be checked: exit 2.
status=0
$check ais "$work/mpis" >"$work/out" || status=$?
[ "$status" -eq 2 ] && grep -q 'has no log_z_exact' "$work/out"
echo "gpu check_run: ok"
