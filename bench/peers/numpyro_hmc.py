#!/usr/bin/env python3
"""NumPyro peers of myriad's BM_hmc workloads: `gaussian`, `logistic` and `eight_schools`.

Usage:
  python3 bench/peers/numpyro_hmc.py [--model gaussian logistic eight_schools]
                                     [--chains 1024 16384 ...]
                                     [--samples 20] [--steps 8] [--precision f64|f32]

Prints one JSON line per (model, chain count) with gradient evaluations per second, the unit
of myriad's BM_hmc (bench/bm_hmc.cpp). Chains run vectorised on one device: NumPyro's HMC kernel
(numpyro.infer.hmc.hmc, algo="HMC") under jax.vmap over chains, the iterations in one jitted
jax.lax.fori_loop, with plain HMC at a fixed step size and a fixed number of leapfrog steps (no
NUTS, no adaptation), so the gradient evaluations are known exactly: chains x samples x steps
(plus one per chain at initialisation, not counted, as myriad's benchmark does not count its
initialisation either).

Timing: the first call compiles; the compiled loop is then run three more times from the same
state (the same work) and the fastest is kept (wall clock, after jax.block_until_ready). Only
the final state of each chain is kept, so memory does not grow with the number of draws.

Workloads (the CLI defaults of myriad, src/app/registry.cpp):
  gaussian  D = 100, equicorrelated N(m 1, s^2 [(1 - rho) I + rho 11^T]) with m = 0, s = 1,
            rho = 0.5, in the closed form of include/myriad/models/gaussian.hpp (O(D) per
            gradient, not a Cholesky-based MultivariateNormal).
  logistic  n = 1000, d = 10, beta_j ~ N(0, 10^2), intercept in column 0, covariates N(0, 1),
            true beta ~ N(0, I). The data come from numpy's generator, not from myriad's Philox
            streams, so the numbers differ (the shapes and the cost per gradient do not).
  eight_schools  the non-centred model of include/myriad/models/eight_schools.hpp on
            z = (mu, log tau, eta_1..8), with the same data (BDA3 Table 5.2), step 0.2.
Both start, like myriad, from points uniform in [-2, 2]^D.
"""

import argparse
import json
import sys
import time

from peer_targets import (add_bm_hmc_arguments, bm_hmc_throughput, bm_hmc_workload,
                          print_failure, time_compiled, versions)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_bm_hmc_arguments(parser, chains=[1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20])
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def main():
    args = parse_args()
    import jax
    import jax.numpy as jnp
    import numpy as np
    import numpyro
    from numpyro.infer.hmc import hmc

    if args.precision == "f64":
        numpyro.enable_x64()
    dtype = jnp.float64 if args.precision == "f64" else jnp.float32
    device = str(jax.devices()[0])

    for model_name in args.model:
        potential, dim, step_size = bm_hmc_workload(model_name, jnp, np, dtype, args.seed)
        # NumPyro's HMC kernel through its functional interface (numpyro.infer.hmc.hmc), one
        # chain vmapped over all, and the iterations in one jitted fori_loop: the fastest way
        # to run NumPyro's HMC. (MCMC.run adds a fixed cost per call, about 2 s measured on a
        # CPU, which would understate NumPyro at small ensembles.)
        init_kernel, sample_kernel = hmc(potential_fn=potential, algo="HMC")
        for chains in args.chains:
            key = jax.random.PRNGKey(args.seed)
            init = jax.random.uniform(key, (chains, dim), dtype=dtype, minval=-2.0, maxval=2.0)
            keys = jax.random.split(jax.random.PRNGKey(args.seed + 1), chains)
            try:
                start = time.perf_counter()
                # Both the number of steps (a static trip count: NumPyro's fastest loop) and the
                # trajectory's length: with num_steps alone NumPyro keeps its default length of
                # 2 pi and does not step at step_size (seen: every logistic transition divergent
                # at 0.02, acceptance 0, on an H100, 2026-11-26).
                state = jax.vmap(lambda x, k: init_kernel(
                    x, num_warmup=0, step_size=step_size, num_steps=args.steps,
                    trajectory_length=args.steps * step_size,
                    adapt_step_size=False, adapt_mass_matrix=False, rng_key=k))(init, keys)
                run = jax.jit(lambda s: jax.lax.fori_loop(
                    0, args.samples, lambda i, s: jax.vmap(sample_kernel)(s), s))
                initialised = time.perf_counter() - start
                # Timed: the compiled loop again from the same start (the same work), best of 3.
                final, first, times = time_compiled(jax, run, state)
                first += initialised
                steps_taken = int(np.max(np.asarray(final.num_steps)))
                if steps_taken != args.steps:
                    raise RuntimeError(
                        f"NumPyro took {steps_taken} leapfrog steps, not {args.steps}")
            except Exception as error:  # e.g. out of device memory at the largest counts
                print_failure("numpyro", model_name, chains, error)
                continue
            print(json.dumps({
                "peer": "numpyro",
                "model": model_name,
                "precision": args.precision,
                "device": device,
                **bm_hmc_throughput(chains, args.samples, args.steps, first, times),
                "accept_prob_mean": float(np.mean(np.asarray(final.mean_accept_prob))),
                "divergent_fraction_last": float(np.mean(np.asarray(final.diverging))),
                **versions(jax, numpyro),
            }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
