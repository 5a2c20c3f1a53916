#!/usr/bin/env bash
# Bad input: a one-line error naming the problem, a non-zero exit status, and no output
# directory (nor staging leftovers) that could pass for a result.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"

# Bad input: one line on stderr, non-zero status, nothing left behind (lib/expect_error.bash).

common=(--warmup 10 --draws 10 --device cpu --output "$work/out")
expect_error "unknown model 'nosuch'" sample --model nosuch "${common[@]}"
expect_error "unknown argument 'bogus' for model gaussian" sample --model gaussian --model-arg bogus=1 "${common[@]}"
expect_error "rho must lie in" sample --model gaussian --model-arg rho=1.5 "${common[@]}"
expect_error "is not a finite number" sample --model gaussian --model-arg rho=nan "${common[@]}"
expect_error "chains must be" sample --model gaussian --chains 0 "${common[@]}"
expect_error "chains must be" sample --model gaussian --chains -5 "${common[@]}"
expect_error "draws must be" sample --model gaussian --warmup 10 --draws 0 --device cpu --output "$work/out"
expect_error "unknown option --bogus" sample --model gaussian --bogus "${common[@]}"
expect_error "--output is required" sample --model gaussian
expect_error "unknown device" sample --model gaussian --warmup 10 --draws 10 --device tpu --output "$work/out"
expect_error "unknown command" frobnicate
expect_error "needs a generator model" sample --model gaussian --sampler chmc "${common[@]}"
expect_error "needs --abc-epsilon" sample --model sphere --sampler abc-mcmc "${common[@]}"
expect_error "unknown sampler 'hmcc'" sample --model gaussian --sampler hmcc "${common[@]}"
expect_error "--sampler nuts needs a density model" sample --model sphere --sampler nuts "${common[@]}"
expect_usage_error "--max-tree-depth must be" sample --model gaussian --sampler nuts --max-tree-depth 0 "${common[@]}"
expect_usage_error "--max-tree-depth must be" sample --model gaussian --sampler nuts --max-tree-depth 16 "${common[@]}"
expect_usage_error "--max-tree-depth applies to --sampler nuts, not chees" sample --model gaussian --max-tree-depth 8 "${common[@]}"
expect_usage_error "--jitter applies to --sampler hmc, not nuts (whose trees choose their lengths)" sample --model gaussian --sampler nuts --jitter 0.2 "${common[@]}"
expect_usage_error "unknown --metric 'full' (auto, diag or dense)" sample --model gaussian --metric full "${common[@]}"
expect_usage_error "a dense metric is not available with SNAPER" sample --model gaussian --sampler snaper --metric dense "${common[@]}"
expect_usage_error "a dense metric supports dimensions up to 1024, the model has 1025" sample --model gaussian --model-arg dim=1025 --metric dense "${common[@]}"
expect_usage_error "--metric applies to HMC samplers on a density model" sample --model sphere --metric dense "${common[@]}"
expect_error "--sampler chees needs a density model" sample --model sphere --sampler chees "${common[@]}"
expect_error "--leapfrog-steps applies to --sampler hmc, not chees (which adapts the trajectory length)" sample --model gaussian --leapfrog-steps 8 "${common[@]}"
expect_error "--max-leapfrog-steps applies to --sampler chees and snaper, not hmc" sample --model gaussian --sampler hmc --max-leapfrog-steps 8 "${common[@]}"
expect_error "--max-leapfrog-steps must be" sample --model gaussian --sampler snaper --max-leapfrog-steps 0 "${common[@]}"
expect_error "banana: a must be positive" sample --model banana --model-arg a=-1 "${common[@]}"
expect_error "applies to abc-reject" sample --model sphere --abc-epsilon 0.1 "${common[@]}"
expect_error "--inner-steps applies to --sampler chmc, not chees" sample --model gaussian --inner-steps 4 "${common[@]}"
expect_error "--no-step-back-off applies to --sampler chmc, not abc-mcmc" sample --model sphere --sampler abc-mcmc --abc-epsilon 0.1 --no-step-back-off "${common[@]}"
expect_error "--leapfrog-steps applies to --sampler hmc, not chmc" sample --model sphere --leapfrog-steps 8 "${common[@]}"
expect_error "--precision float applies to HMC on a density model" sample --model sphere --precision float "${common[@]}"
expect_error "noise must be >= 0" sample --model sphere --model-arg noise=-1 "${common[@]}"
expect_error "unknown chain mapping 'block'" sample --model sphere --chain-mapping block "${common[@]}"
expect_error "unknown Gram factorisation 'cusolver'" sample --model sphere --gram-factorization cusolver "${common[@]}"
expect_usage_error "needs a dense Gram matrix" sample --model lotka_volterra --gram-factorization library "${common[@]}"
expect_error "argument series='long' is not one of paper, short" sample --model lotka_volterra --model-arg series=long "${common[@]}"
expect_usage_error "needs a dense Gram matrix" sample --model gld --gram-factorization registers "${common[@]}"
# --init: a readable array whose size fits the model (dim values, or chains x dim).
echo '[0.1, 0.2, 0.3]' >"$work/init3.json"
echo '[[0.1, 0.2], [0.3]]' >"$work/ragged.json"
echo '{"x": 1}' >"$work/object.json"
expect_error "initial_positions has 3 values: expected dim = 2" sample --model gaussian --model-arg dim=2 --init "$work/init3.json" "${common[@]}"
expect_usage_error "of arrays of numbers of one length" sample --model gaussian --init "$work/ragged.json" "${common[@]}"
expect_usage_error "expected a JSON array of numbers" sample --model gaussian --init "$work/object.json" "${common[@]}"
expect_error "cannot read" sample --model gaussian --init "$work/missing.json" "${common[@]}"
expect_usage_error "--init applies to --sampler hmc, chees, snaper and nuts, not chmc" sample --model sphere --init "$work/init3.json" "${common[@]}"
expect_usage_error "--no-simd applies to --sampler hmc, chees, snaper and chmc, not nuts" sample --model gaussian --sampler nuts --no-simd "${common[@]}"
expect_usage_error "--no-restarts applies to --sampler hmc and chmc, not abc-mcmc" sample --model sphere --sampler abc-mcmc --abc-epsilon 0.1 --no-restarts "${common[@]}"
# Settings a sampler would ignore are refused.
expect_usage_error "--abc-kernel applies to --sampler abc-mcmc" sample --model sphere --abc-kernel gaussian "${common[@]}"
expect_usage_error "--thin does not apply to --sampler abc-reject" sample --model sphere --sampler abc-reject --abc-epsilon 0.5 --thin 2 --draws 10 --device cpu --output "$work/out"
expect_usage_error "--target-accept does not apply to --sampler abc-mcmc" sample --model sphere --sampler abc-mcmc --abc-epsilon 0.5 --target-accept 0.3 "${common[@]}"
# A bad command line is a usage error (status 2) wherever its values are checked: by the parser,
# by the library's settings and model checks, or by the sampler's own options.
expect_usage_error "unknown model 'nosuch'" sample --model nosuch "${common[@]}"
expect_usage_error "target_accept must lie in" sample --model gaussian --target-accept 1 "${common[@]}"
expect_usage_error "argument dim='100000000000' is out of range" sample --model sphere --model-arg dim=100000000000 "${common[@]}"
expect_usage_error "min_steps" sample --model sphere --min-steps 9 --max-steps 3 "${common[@]}"
expect_usage_error "--model-arg dim given more than once" sample --model gaussian --model-arg dim=3 --model-arg dim=4 "${common[@]}"
expect_usage_error "option --output needs a value" sample --model gaussian --warmup 10 --draws 10 --output --quiet

# --data: CmdStan JSON, every variable checked before the run (a usage error naming it).
kidiq="$(dirname "$0")/../data/posteriordb/kidiq-kidscore_momhsiq/data.json"
python3 - "$kidiq" "$work" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
def write(name, **changes):
    d = dict(data)
    for k, v in changes.items():
        if v is None:
            del d[k]
        else:
            d[k] = v
    json.dump(d, open(f"{sys.argv[2]}/{name}.json", "w"))
write("missing", mom_iq=None)
write("short", mom_iq=data["mom_iq"][:-1])
write("nan", mom_iq=data["mom_iq"][:3] + ["NaN"] + data["mom_iq"][4:])
write("real_n", N=434.5)
write("string", mom_iq=data["mom_iq"][:3] + ["high"] + data["mom_iq"][4:])
write("boolean", N=True)
write("ragged", kid_score=[data["kid_score"][:2], [1]])
write("bound", kid_score=[250] + data["kid_score"][1:])
open(f"{sys.argv[2]}/truncated.json", "w").write('{"N": 3,')
PY
expect_usage_error "data variable 'mom_iq' is missing" sample --model kidscore_momhsiq --data "$work/missing.json" "${common[@]}"
expect_usage_error "data variable 'mom_iq' must be an array of 434 reals, got an array of shape .433." sample --model kidscore_momhsiq --data "$work/short.json" "${common[@]}"
expect_usage_error "data variable 'mom_iq' has entry 4 not finite (nan)" sample --model kidscore_momhsiq --data "$work/nan.json" "${common[@]}"
expect_usage_error "data variable 'N' must be an integer, got 434.5" sample --model kidscore_momhsiq --data "$work/real_n.json" "${common[@]}"
expect_usage_error "data variable 'mom_iq' is not a number" sample --model kidscore_momhsiq --data "$work/string.json" "${common[@]}"
expect_usage_error "data variable 'N' is not a number" sample --model kidscore_momhsiq --data "$work/boolean.json" "${common[@]}"
expect_usage_error "data variable 'kid_score' is not a number, .* or a rectangular array" sample --model kidscore_momhsiq --data "$work/ragged.json" "${common[@]}"
expect_usage_error "data variable 'kid_score' has entry 1 = 250, outside its declared bounds .0, 200." sample --model kidscore_momhsiq --data "$work/bound.json" "${common[@]}"
expect_usage_error "truncated.json: not valid JSON" sample --model kidscore_momhsiq --data "$work/truncated.json" "${common[@]}"
expect_usage_error "missing.json: cannot be read" sample --model kidscore_momhsiq --data "$work/nosuch/missing.json" "${common[@]}"
expect_usage_error "model kidscore_momhsiq needs --data FILE.json" sample --model kidscore_momhsiq "${common[@]}"
expect_usage_error "model funnel takes no data (--data)" sample --model funnel --data "$kidiq" "${common[@]}"
expect_usage_error "kidscore_momhsiq runs in double precision only" sample --model kidscore_momhsiq --data "$kidiq" --precision float "${common[@]}"
expect_usage_error "data variable 'D' is missing" sample --model logistic --data "$kidiq" "${common[@]}"
expect_usage_error "model argument n does not apply with --data" sample --model logistic --model-arg n=5 --data "$kidiq" "${common[@]}"

# A failed run leaves no parent directory it created behind.
expect_error "--inner-steps must be" sample --model sphere --inner-steps 0 --warmup 10 --draws 10 --device cpu --output "$work/new/nested/out"
if [ -e "$work/new" ]; then
  echo "FAIL: a failed run left the parents of its output directory behind"; failures=$((failures + 1))
fi

# An output path under a regular file cannot be created: error before any sampling.
touch "$work/file"
rm -rf "$work/out"
"$myriad" sample --model gaussian --warmup 10 --draws 10 --device cpu --output "$work/file/out" 2>"$work/stderr"
if [ $? -eq 0 ] || [ "$(wc -l <"$work/stderr")" -ne 1 ] || ! grep -q "file/out" "$work/stderr"; then
  echo "FAIL: unwritable output accepted"; cat "$work/stderr"; failures=$((failures + 1))
fi

# --device cuda without a usable GPU is a clear error (skipped where a GPU is present).
if ! (command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1); then
  expect_error "no CUDA device\|built without CUDA" sample --model gaussian --warmup 10 --draws 10 --device cuda --output "$work/out"
fi

[ $failures -eq 0 ] && echo "bad input: ok"
exit $failures
