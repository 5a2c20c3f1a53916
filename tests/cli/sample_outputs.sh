#!/usr/bin/env bash
# `myriad sample` writes summary.csv (exact header), draws.npy (chains x draws x quantities) and
# run.json with the promised fields, and prints the summary and throughput.
set -euo pipefail
source "$(dirname "$0")/lib/setup.bash"

"$myriad" sample --model gaussian --model-arg dim=3 --model-arg rho=0.25 --chains 64 \
  --warmup 100 --draws 50 --seed 7 --device cpu --output "$work/run" >"$work/stdout"

grep -q "gradient evaluations/s" "$work/stdout"
# A built-in model's HMC runs in SIMD lanes on the CPU by default, and --no-simd runs it one
# chain at a time: the same run to rounding (the same dimensions and acceptance to 2 decimals).
grep -q "HMC in [a-z0-9]* lanes of [0-9]* chains" "$work/stdout"
"$myriad" sample --model gaussian --model-arg dim=3 --model-arg rho=0.25 --chains 64 \
  --warmup 100 --draws 50 --seed 7 --device cpu --no-simd --output "$work/scalar" >"$work/scalar.out"
if grep -q "lanes of" "$work/scalar.out"; then echo "--no-simd still ran in lanes"; exit 1; fi
python3 - "$work/run/run.json" "$work/scalar/run.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert abs(a["acceptance"] - b["acceptance"]) < 0.01, (a["acceptance"], b["acceptance"])
assert "lanes of" in a["device"] and "lanes of" not in b["device"], (a["device"], b["device"])
PY
grep -q "^x\[0\]" <(sed 's/^ *//' "$work/stdout")
[ "$(head -1 "$work/run/summary.csv")" = "variable,mean,sd,mcse_mean,q5,q50,q95,rhat,ess_bulk,ess_tail" ]
[ "$(wc -l <"$work/run/summary.csv")" -eq 4 ]
# .npy header: magic, then the shape (chains, draws, quantities).
head -c 6 "$work/run/draws.npy" | od -c | grep -q "N   U   M   P   Y"
head -c 128 "$work/run/draws.npy" | grep -aq "'shape': (64, 50, 3)"
# Data size: 64 * 50 * 3 doubles after a 64- or 128-byte header.
size=$(stat -c %s "$work/run/draws.npy")
[ $(( (size - 64 * 50 * 3 * 8) % 64 )) -eq 0 ]
for key in '"model": "gaussian"' '"method": "chees"' '"chains": 64' '"seed": 7' '"device"' \
           '"wall_time"' '"gradient_evaluations_per_second"' '"step_size"' '"acceptance"' \
           '"divergences"' '"failures"' '"nested_rhat"' '"exact"'; do
  grep -q "$key" "$work/run/run.json" || { echo "run.json lacks $key"; exit 1; }
done
# The defaults: ChEES, and the metric "auto" resolves to dense in 3 dimensions (3 x 3 values).
python3 - "$work/run/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["settings"]["metric"] == "auto" and r["metric"] == "dense", (r["settings"], r["metric"])
assert len(r["inverse_metric"]) == 9 and "trajectory" in r["warmup"], r["inverse_metric"]
# The harmonic mean ChEES steers its step by never exceeds the arithmetic mean.
assert 0 < r["acceptance_harmonic"] <= r["acceptance"] <= 1, r
PY
# No staging directories are left behind.
[ -z "$(find "$work" -maxdepth 1 -name '.*partial*')" ]

# Re-running into the same directory replaces the previous run.
"$myriad" sample --model gaussian --model-arg dim=2 --chains 8 --warmup 20 --draws 10 \
  --device cpu --output "$work/run" --quiet
head -c 128 "$work/run/draws.npy" | grep -aq "'shape': (8, 10, 2)"

# --init: one point for every chain (JSON) or one per chain (.npy); with no warm-up and a tiny
# fixed step each first draw is its chain's start (to 1e-9, as even a NUTS tree of 1023 steps
# would keep it). run.json records the restart counters.
# (Plain Python: the .npy files are read and written by hand, version 1.0, '<f8', C order.)
cat >"$work/npy.py" <<'PY'
import ast, struct, sys
def load(path):
    raw = open(path, "rb").read()
    length = struct.unpack("<H", raw[8:10])[0]
    header = ast.literal_eval(raw[10:10 + length].decode())
    count = 1
    for n in header["shape"]:
        count *= n
    return header["shape"], struct.unpack("<%dd" % count, raw[10 + length:10 + length + 8 * count])
def save(path, shape, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }" % (tuple(shape),)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % len(values), *values))
PY
expect_starts() {  # run directory, then the expected first draw of each chain, flattened
  python3 - "$@" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1] + "/..")
from npy import load
shape, values = load(sys.argv[1] + "/draws.npy")
chains, draws, dim = shape
first = [values[(c * draws) * dim + d] for c in range(chains) for d in range(dim)]
expected = [float(v) for v in sys.argv[2:]]
assert all(abs(a - b) < 1e-6 for a, b in zip(first, expected)), (first, expected)
r = json.load(open(sys.argv[1] + "/run.json"))
assert r["settings"]["initial_points"] == "given (--init)", r["settings"]
assert all(key in r["warmup"] for key in ("restarts", "restarted_chains", "stuck_checks"))
assert "stuck_chains" in r["sampling"]
PY
}
echo '[0.25, -0.5]' >"$work/init.json"
"$myriad" sample --model gaussian --model-arg dim=2 --chains 4 --warmup 0 --draws 1 \
  --step-size 1e-12 --device cpu --init "$work/init.json" --output "$work/init_json" --quiet
expect_starts "$work/init_json" 0.25 -0.5 0.25 -0.5 0.25 -0.5 0.25 -0.5
python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import npy; npy.save(sys.argv[1] + '/init.npy', [4, 2], [v / 10 for v in range(8)])" "$work"
"$myriad" sample --model gaussian --model-arg dim=2 --chains 4 --warmup 0 --draws 1 \
  --step-size 1e-12 --device cpu --init "$work/init.npy" --output "$work/init_npy" --quiet
expect_starts "$work/init_npy" 0 0.1 0.2 0.3 0.4 0.5 0.6 0.7

# ChEES: the adapted trajectory in run.json (length, sampling step count, one trace entry per
# warm-up iteration), and the leapfrog settings of fixed-length HMC left out.
"$myriad" sample --model banana --sampler chees --chains 32 --warmup 60 --draws 20 --device cpu \
  --max-leapfrog-steps 64 --output "$work/chees" --quiet
python3 - "$work/chees/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["method"] == "chees", r["method"]
assert r["settings"]["max_leapfrog_steps"] == 64 and "leapfrog_steps" not in r["settings"]
t = r["warmup"]["trajectory"]
assert t["criterion"] == "chees" and t["length"] > 0, t
assert 1 <= t["max_leapfrog_steps"] <= 64 and 1 <= t["mean_leapfrog_steps"] <= t["max_leapfrog_steps"]
assert len(t["length_trace"]) == 60 and len(t["criterion_trace"]) == 60
assert "principal_variance" not in t
PY
"$myriad" sample --model gaussian --model-arg dim=3 --sampler snaper --chains 32 --warmup 60 \
  --draws 20 --device cpu --output "$work/snaper" --quiet
grep -q '"principal_variance"' "$work/snaper/run.json" || { echo "snaper run.json lacks principal_variance"; exit 1; }
# The automatic metric is diagonal under SNAPER (whose principal direction needs one).
grep -q '"metric": "diag"' "$work/snaper/run.json" || { echo "snaper ran without the diagonal metric"; exit 1; }

# NUTS: the depth cap in the settings, tree depths of both phases and the sampling phase's
# lockstep count in run.json; a dense metric is written as dim x dim values.
"$myriad" sample --model gaussian --model-arg dim=3 --sampler nuts --max-tree-depth 6 \
  --metric dense --chains 40 --warmup 60 --draws 20 --device cpu --output "$work/nuts" --quiet
python3 - "$work/nuts/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["method"] == "nuts", r["method"]
s = r["settings"]
assert s["max_tree_depth"] == 6 and s["metric"] == "dense" and "leapfrog_steps" not in s, s
assert len(r["inverse_metric"]) == 9, r["inverse_metric"]
for phase in ("warmup", "sampling"):
    t = r[phase]["tree"]
    assert t["max_tree_depth"] == 6 and 1 <= t["mean_depth"] <= t["max_depth"] <= 6, t
    assert 0 <= t["depth_cap_hits"] and t["mean_leapfrog_steps"] >= 1, t
t = r["sampling"]["tree"]
assert t["lockstep_gradient_evaluations"] >= r["sampling"]["gradient_evaluations"], t
assert 0 < t["lockstep_efficiency"] <= 1, t
assert "lockstep_efficiency" not in r["warmup"]["tree"]
PY

# `myriad models` lists every built-in model with its arguments.
"$myriad" models >"$work/models"
for model in gaussian logistic eight_schools funnel banana eight_schools_noncentered arK arma11 \
             garch11 gp_pois_regr kidscore_momhsiq logearn_interaction_z logmesquite_logvash \
             low_dim_gauss_mix hmm_example diamonds blr kilpisjarvi nes one_comp_mm_elim_abs; do
  grep -q "^$model " "$work/models" || { echo "models lacks $model"; exit 1; }
done
grep -q "^    --data FILE.json  int<lower=0> K, T; array\[T\] real y" "$work/models" ||
  { echo "models does not list arK's data"; exit 1; }
# A posteriordb posterior from its data.json: Stan's names on the constrained scale, the data
# file recorded in run.json. And eight_schools on posteriordb's eight_schools data: the same
# model as its built-in data, so the same draws bit for bit.
pdb="$(dirname "$0")/../data/posteriordb"
"$myriad" sample --model garch11 --data "$pdb/garch-garch11/data.json" --chains 8 --warmup 50 \
  --draws 20 --device cpu --output "$work/garch" --quiet
python3 - "$work/garch" "$pdb/garch-garch11" <<'PY'
import csv, json, sys
run = [r["variable"] for r in csv.DictReader(open(sys.argv[1] + "/summary.csv"))]
ref = [r["variable"] for r in csv.DictReader(open(sys.argv[2] + "/reference.csv"))]
assert run == ref == ["mu", "alpha0", "alpha1", "beta1"], (run, ref)
r = json.load(open(sys.argv[1] + "/run.json"))
assert r["data_file"].endswith("garch-garch11/data.json"), r.get("data_file")
assert r["settings"]["precision"] == "double"
PY
# logistic on a data file of the user's (CmdStan's format): its D coefficients are sampled.
python3 - "$work/logistic.json" <<'PY'
import json, math, sys
n, x, y = 40, [], []
for i in range(n):
    t = (i - n / 2) / 10
    x.append([1.0, t])
    y.append(1 if math.sin(3 * i) + t > 0 else 0)
json.dump({"N": n, "D": 2, "X": x, "y": y}, open(sys.argv[1], "w"))
PY
"$myriad" sample --model logistic --data "$work/logistic.json" --chains 8 --warmup 100 --draws 50 \
  --device cpu --output "$work/logistic" --quiet
python3 - "$work/logistic" <<'PY'
import csv, json, sys
run = [r["variable"] for r in csv.DictReader(open(sys.argv[1] + "/summary.csv"))]
assert run == ["beta[0]", "beta[1]"], run
assert json.load(open(sys.argv[1] + "/run.json"))["data_file"].endswith("logistic.json")
PY
for data in "" "--data $pdb/eight_schools-eight_schools_noncentered/data.json"; do
  "$myriad" sample --model eight_schools $data --chains 8 --warmup 30 --draws 10 --seed 3 \
    --device cpu --output "$work/es${data:+_data}" --quiet
done
cmp -s "$work/es/draws.npy" "$work/es_data/draws.npy" ||
  { echo "eight_schools: posteriordb's data file gives other draws than the built-in data"; exit 1; }
# A generator model: constrained HMC by default, with its failure counters in run.json; and an
# ABC baseline with its acceptance count.
"$myriad" sample --model sphere --model-arg dim=4 --chains 16 --warmup 30 --draws 20 --device cpu \
  --chain-mapping warp --gram-factorization library --output "$work/sphere" --quiet
for key in '"method": "chmc"' '"not_converged"' '"not_reversible"' '"cholesky_failures"' \
           '"newton_iterations"' '"integrator"' '"chain_mapping": "warp"' \
           '"gram_factorization": "library"' '"step_back_off": true' '"backed_off_chains"' \
           '"max_step_halvings"'; do
  grep -q "$key" "$work/sphere/run.json" || { echo "chmc run.json lacks $key"; exit 1; }
done
"$myriad" sample --model sphere --model-arg dim=4 --chains 16 --warmup 30 --draws 20 --device cpu \
  --no-step-back-off --output "$work/sphere_no_back_off" --quiet
grep -q '"step_back_off": false' "$work/sphere_no_back_off/run.json" ||
  { echo "--no-step-back-off is not recorded in run.json"; exit 1; }
# Constrained HMC of a built-in generator runs in SIMD lanes on the CPU by default, --no-simd one
# chain at a time: the same run to rounding (the acceptance to 2 decimals).
for simd in "" --no-simd; do
  "$myriad" sample --model lotka_volterra --model-arg series=short --chains 32 --warmup 40 \
    --draws 20 --seed 5 --device cpu $simd --output "$work/lv$simd" --quiet
done
python3 - "$work/lv/run.json" "$work/lv--no-simd/run.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert "constrained HMC in" in a["device"] and "lanes of" in a["device"], a["device"]
assert "lanes of" not in b["device"], b["device"]
assert abs(a["acceptance"] - b["acceptance"]) < 0.01, (a["acceptance"], b["acceptance"])
PY
"$myriad" sample --model sphere --sampler abc-reject --abc-epsilon 0.2 --chains 10 --draws 100 \
  --device cpu --output "$work/abc" --quiet
grep -q '"simulations": 1000' "$work/abc/run.json"
grep -q '"accepted"' "$work/abc/run.json"
echo "sample outputs: ok"
