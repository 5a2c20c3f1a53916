#!/usr/bin/env python3
"""NumPyro peers of myriad's BM_hmc workloads: `gaussian` and `logistic`.

Usage:
  python3 bench/peers/numpyro_hmc.py [--model gaussian logistic] [--chains 1024 16384 ...]
                                     [--samples 20] [--steps 8] [--precision f64|f32]

Prints one JSON line per (model, chain count) with gradient evaluations per second, the unit
of myriad's BM_hmc (bench/bm_hmc.cpp). Chains run vectorised on one device
(MCMC(chain_method="vectorized"), i.e. jax.vmap over chains), with plain HMC at a fixed step size
and a fixed number of leapfrog steps (no NUTS, no adaptation), so the gradient evaluations are
known exactly: chains x samples x steps (plus one per chain at initialisation, not counted, as
myriad's benchmark does not count its initialisation either).

Timing: the first run compiles; a second run with the same shapes is timed (wall clock, after
jax.block_until_ready). Only the last draw of each chain is kept (thinning = samples), so memory
does not grow with the chain count times the number of draws.

Workloads (the CLI defaults of myriad, src/models/registry.cpp):
  gaussian  D = 100, equicorrelated N(m 1, s^2 [(1 - rho) I + rho 11^T]) with m = 0, s = 1,
            rho = 0.5, in the closed form of include/myriad/models/gaussian.hpp (O(D) per
            gradient, not a Cholesky-based MultivariateNormal).
  logistic  n = 1000, d = 10, beta_j ~ N(0, 10^2), intercept in column 0, covariates N(0, 1),
            true beta ~ N(0, I). The data come from numpy's generator, not from myriad's Philox
            streams, so the numbers differ (the shapes and the cost per gradient do not).
Both start, like myriad, from points uniform in [-2, 2]^D.
"""

import argparse
import json
import math
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=["gaussian", "logistic"],
                        choices=["gaussian", "logistic"])
    parser.add_argument("--chains", nargs="+", type=int,
                        default=[1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20])
    parser.add_argument("--samples", type=int, default=20, help="HMC iterations per run")
    parser.add_argument("--steps", type=int, default=8, help="leapfrog steps per iteration")
    parser.add_argument("--precision", choices=["f64", "f32"], default="f64")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def gaussian_potential(jnp, dim=100, rho=0.5, mean=0.0, sd=1.0):
    """-log p for models::Gaussian: Sherman-Morrison inverse, matrix determinant lemma."""
    precision_scale = 1.0 / (sd * sd * (1.0 - rho))
    rank_one_weight = rho / (1.0 - rho + dim * rho)
    log_det = dim * math.log(sd * sd) + (dim - 1) * math.log1p(-rho) + math.log1p((dim - 1) * rho)
    log_normaliser = -0.5 * dim * math.log(2.0 * math.pi) - 0.5 * log_det

    def potential(x):
        y = x - mean
        total = jnp.sum(y)
        quadratic = jnp.sum(y * y) - rank_one_weight * total * total
        return -(log_normaliser - 0.5 * precision_scale * quadratic)

    return potential, dim, 0.1  # step size as in bench/bm_hmc.cpp


def logistic_potential(jnp, np, dtype, seed, n=1000, d=10, prior_sd=10.0):
    """-log p for models::Logistic with synthetic data of the same shape."""
    rng = np.random.default_rng(seed)
    x = np.ones((n, d))
    x[:, 1:] = rng.standard_normal((n, d - 1))
    true_beta = rng.standard_normal(d)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(x @ true_beta)))).astype(float)
    x = jnp.asarray(x, dtype=dtype)
    y = jnp.asarray(y, dtype=dtype)
    log_prior_normaliser = -d * (0.5 * math.log(2.0 * math.pi) + math.log(prior_sd))

    def potential(beta):
        eta = x @ beta
        log_likelihood = jnp.sum(y * eta - jnp.logaddexp(0.0, eta))
        log_prior = log_prior_normaliser - 0.5 * jnp.sum(beta * beta) / (prior_sd * prior_sd)
        return -(log_likelihood + log_prior)

    return potential, d, 0.02  # step size as in bench/bm_hmc.cpp


def main():
    args = parse_args()
    import jax
    import jax.numpy as jnp
    import numpy as np
    import numpyro
    from numpyro.infer import HMC, MCMC

    if args.precision == "f64":
        numpyro.enable_x64()
    dtype = jnp.float64 if args.precision == "f64" else jnp.float32
    device = str(jax.devices()[0])

    for model_name in args.model:
        if model_name == "gaussian":
            potential, dim, step_size = gaussian_potential(jnp)
        else:
            potential, dim, step_size = logistic_potential(jnp, np, dtype, args.seed)
        for chains in args.chains:
            kernel = HMC(potential_fn=potential, step_size=step_size, num_steps=args.steps,
                         adapt_step_size=False, adapt_mass_matrix=False, dense_mass=False)
            mcmc = MCMC(kernel, num_warmup=0, num_samples=args.samples, num_chains=chains,
                        thinning=args.samples, chain_method="vectorized", progress_bar=False)
            key = jax.random.PRNGKey(args.seed)
            init = jax.random.uniform(key, (chains, dim), dtype=dtype, minval=-2.0, maxval=2.0)
            try:
                start = time.perf_counter()
                mcmc.run(jax.random.PRNGKey(args.seed + 1), init_params=init,
                         extra_fields=("accept_prob",))
                jax.block_until_ready(mcmc.get_samples())
                first = time.perf_counter() - start

                start = time.perf_counter()
                mcmc.run(jax.random.PRNGKey(args.seed + 2), init_params=init,
                         extra_fields=("accept_prob",))
                jax.block_until_ready(mcmc.get_samples())
                seconds = time.perf_counter() - start
            except Exception as error:  # e.g. out of device memory at the largest counts
                print(json.dumps({"peer": "numpyro", "model": model_name, "chains": chains,
                                  "error": f"{type(error).__name__}: {error}"[:500]}), flush=True)
                continue
            evaluations = chains * args.samples * args.steps
            accept = float(np.mean(np.asarray(mcmc.get_extra_fields()["accept_prob"])))
            print(json.dumps({
                "peer": "numpyro",
                "model": model_name,
                "precision": args.precision,
                "device": device,
                "chains": chains,
                "samples": args.samples,
                "leapfrog_steps": args.steps,
                "gradient_evaluations": evaluations,
                "seconds": seconds,
                "gradient_evaluations_per_second": evaluations / seconds,
                "first_run_seconds_with_compile": first,
                "accept_prob_last_draw": accept,
                "jax": jax.__version__,
                "numpyro": numpyro.__version__,
            }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
