#!/usr/bin/env bash
# `myriad sbc`: ranks.npy (replications x quantities, each rank in 0..L), sbc.csv and run.json for
# a density model and a generator, and its usage errors.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

"$myriad" sbc --model eight_schools --replications 12 --chains 4 --warmup 100 --draws 100 \
  --posterior-draws 39 --bins 10 --seed 4 --device cpu --output "$work/es" --quiet || exit 1
"$myriad" sbc --model linear_gaussian --replications 8 --chains 4 --warmup 50 --draws 50 \
  --posterior-draws 19 --bins 4 --seed 4 --device cpu --output "$work/lg" --quiet || exit 1
python3 - "$work" <<'PY'
import ast, csv, json, struct, sys
work = sys.argv[1]

def load_npy(path):
    """A float64 .npy (version 1): its shape and values (numpy is not needed in CI)."""
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", data[:6]
    length = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + length].decode())
    assert header["descr"] == "<f8" and not header["fortran_order"], header
    values = struct.unpack(f"<{len(data[10 + length:]) // 8}d", data[10 + length:])
    return header["shape"], values

for name, reps, quantities, L, bins in (("es", 12, 10, 39, 10), ("lg", 8, 6, 19, 4)):
    shape, ranks = load_npy(f"{work}/{name}/ranks.npy")
    assert shape == (reps, quantities), shape
    assert all(0 <= r <= L and r == int(r) for r in ranks), ranks
    rows = list(csv.DictReader(open(f"{work}/{name}/sbc.csv")))
    assert len(rows) == quantities and all(int(r["bins"]) == bins for r in rows), rows
    assert all(0 <= float(r["p_value"]) <= 1 for r in rows), rows
    report = json.load(open(f"{work}/{name}/run.json"))
    assert report["method"] == "sbc" and report["settings"]["replications"] == reps, report
    q = report["quantities"][rows[0]["variable"]]
    assert sum(q["histogram"]["counts"]) == reps, q["histogram"]
    assert len(q["ecdf"]["z"]) == len(q["ecdf"]["lower"]) == len(q["ecdf"]["upper"]), q["ecdf"]
    assert len(report["replications"]["max_rhat"]) == reps
es = json.load(open(f"{work}/es/run.json"))
assert es["sampler"] == "chees" and list(es["quantities"])[:2] == ["mu", "tau"], es["sampler"]
assert json.load(open(f"{work}/lg/run.json"))["sampler"] == "chmc"
PY
[ $? -eq 0 ] || exit 1
# The same seed gives the same ranks.
"$myriad" sbc --model linear_gaussian --replications 8 --chains 4 --warmup 50 --draws 50 \
  --posterior-draws 19 --bins 4 --seed 4 --device cpu --output "$work/lg2" --quiet || exit 1
cmp -s "$work/lg/ranks.npy" "$work/lg2/ranks.npy" || { echo "FAIL: sbc is not reproducible"; failures=$((failures + 1)); }

# Every replication in one batch of chains (--batch on): the same outputs, settings.batched.
"$myriad" sbc --model eight_schools --replications 12 --chains 4 --warmup 100 --draws 100 \
  --posterior-draws 39 --bins 10 --seed 4 --device cpu --batch on --output "$work/esb" --quiet || exit 1
# ... and logistic's, each replication on its own simulated data set.
"$myriad" sbc --model logistic --model-arg n=30 --model-arg d=3 --model-arg prior_sd=1 \
  --replications 6 --chains 4 --warmup 100 --draws 100 --posterior-draws 39 --bins 10 --seed 4 \
  --device cpu --batch on --output "$work/lrb" --quiet || exit 1
python3 - "$work" <<'PY' || { echo "FAIL: batched sbc outputs"; failures=$((failures + 1)); }
import json, struct, sys
work = sys.argv[1]
batched, alone = (json.load(open(f"{work}/{d}/run.json")) for d in ("esb", "es"))
assert batched["settings"]["batched"] is True and alone["settings"]["batched"] is False
assert list(batched["quantities"]) == list(alone["quantities"]), list(batched["quantities"])
assert len(batched["replications"]["min_ess_bulk"]) == 12
data = open(f"{work}/esb/ranks.npy", "rb").read()
assert b"(12, 10)" in data[:128], data[:128]
logistic = json.load(open(f"{work}/lrb/run.json"))
assert logistic["settings"]["batched"] is True
assert list(logistic["quantities"]) == ["beta[0]", "beta[1]", "beta[2]"], list(logistic["quantities"])
assert max(logistic["replications"]["max_rhat"]) < 1.1, logistic["replications"]["max_rhat"]
PY

# A posteriordb regression: its design from --data, its parameters from its priors, the outcomes
# simulated; Stan's names.
pdb="$(dirname "$0")/../data/posteriordb"
"$myriad" sbc --model blr --data "$pdb/sblrc-blr/data.json" --replications 6 --chains 4 \
  --warmup 100 --draws 100 --posterior-draws 39 --bins 10 --seed 4 --device cpu \
  --output "$work/blr" --quiet || exit 1
python3 - "$work/blr" <<'PY' || { echo "FAIL: blr sbc outputs"; failures=$((failures + 1)); }
import json, sys
report = json.load(open(sys.argv[1] + "/run.json"))
names = list(report["quantities"])
assert names == ["beta[1]", "beta[2]", "beta[3]", "beta[4]", "beta[5]", "sigma"], names
PY

common=(--replications 4 --chains 2 --warmup 10 --draws 20 --device cpu --output "$work/out")
expect_usage_error "kidscore_momhsiq does not state how to simulate its data" sbc --model kidscore_momhsiq --data "$pdb/kidiq-kidscore_momhsiq/data.json" "${common[@]}"
expect_usage_error "model blr needs --data FILE.json" sbc --model blr "${common[@]}"
expect_usage_error "simulates the data: --data does not apply" sbc --model logistic --data "$pdb/sblrc-blr/data.json" "${common[@]}"
expect_usage_error "funnel does not state how to simulate its data" sbc --model funnel "${common[@]}"
expect_usage_error "sbc: bins must be >= 2 and divide posterior_draws + 1 = 40" sbc --model eight_schools --posterior-draws 39 --bins 7 "${common[@]}"
expect_usage_error "fewer than --posterior-draws 99" sbc --model eight_schools "${common[@]}"
expect_usage_error "SBC of a generator runs constrained HMC" sbc --model linear_gaussian --sampler nuts --posterior-draws 19 --bins 4 "${common[@]}"
expect_usage_error "--batch on applies to density models" sbc --model linear_gaussian --batch on --posterior-draws 19 --bins 4 "${common[@]}"
expect_usage_error "unknown --batch 'always'" sbc --model eight_schools --batch always --posterior-draws 39 --bins 10 "${common[@]}"
expect_usage_error "conditions the noiseless generator" sbc --model linear_gaussian --model-arg noise=0.1 --posterior-draws 19 --bins 4 "${common[@]}"
[ $failures -eq 0 ] && echo "sbc outputs: ok"
exit $failures
