#!/usr/bin/env bash
# Efficiency of myriad's HMC samplers on the CPU: fixed-length HMC, ChEES, SNAPER and NUTS, each
# with a diagonal and (except SNAPER) a dense metric, on the targets of
# bench/results/adaptive-samplers-cpu.md. One JSON line per run on stdout (the fields of its
# run.json that the table uses); bench/peers/run_adaptive_peers.sh runs the peers on the same
# targets.
#
# Usage: bench/adaptive_samplers.sh MYRIAD [TARGET ...]   (targets: gaussian_rho099 logistic
#        eight_schools; default all). CHAINS, WARMUP, DRAWS and SEED override 1024, 200, 200, 1;
#        RUNS the sampler:metric pairs (default every one, e.g. RUNS="nuts:diag nuts:dense").
set -euo pipefail
myriad=$1
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gaussian_rho099 logistic eight_schools)
chains=${CHAINS:-1024}
warmup=${WARMUP:-200}
draws=${DRAWS:-200}
seed=${SEED:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

model_arguments() {
  case $1 in
    gaussian_rho099) echo "--model gaussian --model-arg dim=100 --model-arg rho=0.99" ;;
    logistic) echo "--model logistic" ;;
    eight_schools) echo "--model eight_schools" ;;
    *) echo "unknown target $1" >&2; exit 2 ;;
  esac
}

for target in "${targets[@]}"; do
  for run in ${RUNS:-hmc:diag hmc:dense chees:diag chees:dense snaper:diag nuts:diag nuts:dense}; do
    sampler=${run%%:*}
    metric=${run##*:}
    out="$work/$target-$sampler-$metric"
    # shellcheck disable=SC2046
    "$myriad" sample $(model_arguments "$target") --sampler "$sampler" --metric "$metric" \
      --chains "$chains" --warmup "$warmup" --draws "$draws" --seed "$seed" --device cpu \
      --output "$out" --quiet
    python3 - "$out/run.json" "$target" "$sampler" "$metric" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = r["diagnostics"]
gradients = r["gradient_evaluations"]
seconds = r["wall_time"]["warmup_seconds"] + r["wall_time"]["sampling_seconds"]
line = {
    "target": sys.argv[2], "sampler": sys.argv[3], "metric": sys.argv[4],
    "chains": r["settings"]["chains"], "warmup": r["settings"]["warmup"],
    "draws": r["settings"]["draws"], "step_size": r["step_size"],
    "acceptance": r["acceptance"], "divergent": r["divergences"],
    "gradient_evaluations": gradients, "seconds": seconds,
    "min_ess_bulk": d["min_ess_bulk"], "min_ess_tail": d["min_ess_tail"],
    "max_rhat": d["max_rhat"],
    "min_ess_per_1000_gradients": 1000 * d["min_ess_bulk"] / gradients,
    "min_ess_per_second": d["min_ess_bulk"] / seconds,
    "mean_steps": r["sampling"]["gradient_evaluations"] / r["sampling"]["transitions"],
}
if "tree" in r["sampling"]:
    t = r["sampling"]["tree"]
    line.update(mean_tree_depth=t["mean_depth"], max_tree_depth=t["max_depth"],
                depth_cap_hits=t["depth_cap_hits"], lockstep_efficiency=t["lockstep_efficiency"])
if "trajectory" in r["warmup"]:
    line["trajectory_length"] = r["warmup"]["trajectory"]["length"]
print(json.dumps(line))
PY
  done
done
