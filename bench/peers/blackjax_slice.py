#!/usr/bin/env python3
"""BlackJAX's elliptical slice sampler on myriad's BM_auxiliary elliptical-slice workloads.

Usage:
  python3 bench/peers/blackjax_slice.py [--observations 10 3] [--chains 64] [--warmup 500]
                                        [--draws 1000] [--seed 1] [--repeats 3]

The Gaussian latent variable model of the thesis's section 3.6.1 as myriad's
`gaussian_latent_variable` offers it to elliptical slice sampling (models/
gaussian_latent_variable.hpp): the prior factor x ~ N(0, I_D) and the marginal likelihood
prod_m N(y_m; x, (sigma^2 + epsilon^2) I), D = 10, sigma = 1, epsilon = 2, M = 10 (`lvm`) or 3
(`lvm_m3`). blackjax.elliptical_slice (mean 0, identity covariance) under jax.vmap over chains,
warm-up and draws in one jitted jax.lax.scan each, as BM_auxiliary runs 64 chains x (500 warm-up
+ 1000 draws) per row (bench/bm_auxiliary.cpp).

Data: by default myriad's own y (--data-dir bench/peers/data: lvm-myriad-m<M>-d10.json,
GaussianLatentVariable<double>::make(10, M) with the default data_seed written out with %.17g by
a ten-line program against the library), so the posterior is the one BM_auxiliary samples. The
posterior's shape does not depend on y but an elliptical slice sampler's efficiency does (the
ellipses are centred on the prior mean, so a posterior mean further from it costs more shrinks):
--data-dir none simulates y with numpy from --data-seed instead (different numbers). Each run
checks its posterior means against the exact ones (within 5 MCSE, ArviZ's mcse_mean) so that a
fast-but-wrong configuration cannot pass.

Timed: the first call compiles; the compiled warm-up and sampling are run --repeats more times
from the same state and the fastest total kept (wall clock, after block_until_ready). Counted:
likelihood evaluations, one per BlackJAX shrink iteration (its info.subiter counts them, the first
proposal included). ESS: the smallest ArviZ bulk ESS over the D coordinates of the draws (after
warm-up), as BM_auxiliary's "min ESS bulk".

Prints one JSON line per workload.
"""

import argparse
import json
import math
import os
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", nargs="+", type=int, default=[10, 3])
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--sigma", type=float, default=1.0)
    parser.add_argument("--epsilon", type=float, default=2.0)
    parser.add_argument("--chains", type=int, default=64)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-seed", type=int, default=20170401)
    parser.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "data"),
                        help="where lvm-myriad-m<M>-d<D>.json lie; 'none': numpy's data")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


def main():
    args = parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    import arviz as az
    import blackjax

    for m in args.observations:
        d = args.dim
        variance = args.sigma ** 2 + args.epsilon ** 2
        if args.data_dir == "none":
            rng = np.random.default_rng(args.data_seed)
            truth = rng.standard_normal(d)
            z = truth + args.sigma * rng.standard_normal((m, d))
            y = jnp.asarray(z + args.epsilon * rng.standard_normal((m, d)))
            data_source = f"numpy seed {args.data_seed}"
        else:
            path = os.path.join(args.data_dir, f"lvm-myriad-m{m}-d{d}.json")
            with open(path) as f:
                stored = json.load(f)
            if (stored["sigma"], stored["epsilon"]) != (args.sigma, args.epsilon):
                raise SystemExit(f"{path}: sigma, epsilon differ from the arguments")
            y = jnp.asarray(np.array(stored["y"], dtype=np.float64).reshape(m, d))
            data_source = os.path.basename(path)
        exact_mean = np.asarray(y.sum(axis=0)) / (m + variance)
        exact_sd = math.sqrt(variance / (m + variance))

        def loglikelihood(x):
            return -0.5 * jnp.sum((y - x) ** 2) / variance

        sampler = blackjax.elliptical_slice(loglikelihood, mean=jnp.zeros(d), cov=jnp.ones(d))
        step = jax.vmap(sampler.step)

        def run(key, positions):
            states = jax.vmap(sampler.init)(positions)

            def body(carry, key):
                states, evaluations = carry
                keys = jax.random.split(key, args.chains)
                states, info = step(keys, states)
                return (states, evaluations + jnp.sum(info.subiter)), states.position

            warm_key, draw_key = jax.random.split(key)
            (states, warm_evals), _ = jax.lax.scan(
                body, (states, jnp.zeros((), jnp.int64)), jax.random.split(warm_key, args.warmup))
            (states, draw_evals), draws = jax.lax.scan(
                body, (states, jnp.zeros((), jnp.int64)), jax.random.split(draw_key, args.draws))
            return warm_evals + draw_evals, draws

        compiled = jax.jit(run)
        key = jax.random.PRNGKey(args.seed)
        positions = jax.random.uniform(jax.random.PRNGKey(args.seed + 1), (args.chains, d),
                                       minval=-2.0, maxval=2.0, dtype=jnp.float64)
        start = time.perf_counter()
        evaluations, draws = jax.block_until_ready(compiled(key, positions))
        first = time.perf_counter() - start
        best = math.inf
        for _ in range(args.repeats):
            start = time.perf_counter()
            jax.block_until_ready(compiled(key, positions))
            best = min(best, time.perf_counter() - start)

        draws = np.asarray(draws).transpose(1, 0, 2)  # (chain, draw, coordinate)
        data = az.convert_to_dataset({"x": draws})
        ess = np.asarray(az.ess(data, method="bulk")["x"])
        mcse = np.asarray(az.mcse(data, method="mean")["x"])
        rhat = np.asarray(az.rhat(data)["x"])
        mean = draws.mean(axis=(0, 1))
        errors = np.abs(mean - exact_mean) / mcse
        evaluations = int(evaluations)
        print(json.dumps({
            "peer": "blackjax", "sampler": "elliptical_slice",
            "workload": "lvm" if m == 10 else f"lvm_m{m}", "observations": m, "dim": d,
            "data": data_source, "device": str(jax.devices()[0]), "jax": jax.__version__,
            "blackjax": blackjax.__version__, "chains": args.chains, "warmup": args.warmup,
            "draws": args.draws, "seconds": best, "first_run_seconds_with_compile": first,
            "evaluations": evaluations, "evaluations_per_second": evaluations / best,
            "min_ess_bulk": float(ess.min()), "ess_per_second": float(ess.min()) / best,
            "ess_per_1000_evaluations": 1000 * float(ess.min()) / evaluations,
            "max_rhat": float(rhat.max()), "max_error_in_mcse": float(errors.max()),
            "exact_sd": exact_sd, "sd_of_draws": float(draws.std(axis=(0, 1)).mean()),
            "means_within_5_mcse": bool(errors.max() <= 5),
        }), flush=True)


if __name__ == "__main__":
    main()
