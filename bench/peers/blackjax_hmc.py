#!/usr/bin/env python3
"""BlackJAX peers of myriad's BM_hmc workloads: `gaussian`, `logistic` and `eight_schools`.

Usage:
  python3 bench/peers/blackjax_hmc.py [--model gaussian logistic eight_schools]
                                      [--chains 1024 4096 ...] [--samples 20] [--steps 8]
                                      [--precision f64|f32] [--devices N]

Prints one JSON line per (model, chain count) with gradient evaluations per second, the unit of
myriad's BM_hmc (bench/bm_hmc.cpp), for BlackJAX's HMC kernel (blackjax.hmc: fixed step size,
identity metric, a fixed number of leapfrog steps, no adaptation) under jax.vmap over chains,
the iterations in one jitted jax.lax.fori_loop: the same work as numpyro_hmc.py and BM_hmc
(the workloads and their step sizes: peer_targets.py).

--devices N (default 1) splits the chains over N XLA devices with jax.pmap of the vmapped loop.
On a CPU that needs N host devices, which XLA makes when told before JAX starts
(XLA_FLAGS=--xla_force_host_platform_device_count=N, set here): one per core is BlackJAX's way
to use every core (the issue's "pmap"), where one device's vmap leaves part of them idle.

Counted: chains x samples x steps (exact: fixed-length HMC; BlackJAX's info.num_integration_steps
is checked). Timed: the first call compiles; the compiled loop is run three more times from the
same state and the fastest kept (wall clock, after block_until_ready).
"""

import argparse
import json
import os
import sys

from peer_targets import (add_bm_hmc_arguments, bm_hmc_throughput, bm_hmc_workload,
                          print_failure, time_compiled, versions)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_bm_hmc_arguments(parser, chains=[1 << 10, 1 << 12, 1 << 14])
    parser.add_argument("--devices", type=int, default=1,
                        help="XLA devices to pmap the chains over (host devices on a CPU)")
    parser.add_argument("--gaussian-dim", type=int, default=100,
                        help="gaussian: dimension (100 in BM_hmc; 50 in issue 23's setting)")
    parser.add_argument("--step-size", type=float, default=None,
                        help="override the workload's step size (issue 23's gaussian: 0.45)")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def main():
    args = parse_args()
    if args.devices > 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_force_host_platform_device_count={args.devices}")
    import jax
    if args.precision == "f64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    import blackjax

    dtype = jnp.float64 if args.precision == "f64" else jnp.float32
    devices = jax.devices()[:args.devices]
    if len(devices) < args.devices:
        print(json.dumps({"peer": "blackjax", "error": f"{len(devices)} devices, asked for "
                          f"{args.devices}"}), flush=True)
        return 1

    for model_name in args.model:
        potential, dim, step_size = bm_hmc_workload(model_name, jnp, np, dtype, args.seed,
                                                    gaussian_dim=args.gaussian_dim)
        if args.step_size is not None:
            step_size = args.step_size

        def logdensity(x, potential=potential):
            return -potential(x)

        kernel = blackjax.hmc(logdensity, step_size=step_size,
                              inverse_mass_matrix=jnp.ones(dim, dtype=dtype),
                              num_integration_steps=args.steps)

        def run_chains(states, keys, kernel=kernel):
            # keys: (samples, chains) per device; one vmapped step per iteration.
            def body(i, carry):
                states, steps, accept = carry
                states, info = jax.vmap(kernel.step)(keys[i], states)
                return (states, jnp.maximum(steps, jnp.max(info.num_integration_steps)),
                        accept + jnp.mean(info.acceptance_rate))
            return jax.lax.fori_loop(0, args.samples, body,
                                     (states, jnp.array(0), jnp.array(0.0, dtype=dtype)))

        for chains in args.chains:
            if chains % args.devices != 0:
                print_failure("blackjax", model_name, chains,
                              f"chains not divisible by {args.devices} devices")
                continue
            per_device = chains // args.devices
            key = jax.random.PRNGKey(args.seed)
            init = jax.random.uniform(key, (chains, dim), dtype=dtype, minval=-2.0, maxval=2.0)
            keys = jax.random.split(jax.random.PRNGKey(args.seed + 1), args.samples * chains)
            try:
                states = jax.vmap(kernel.init)(init)
                if args.devices == 1:
                    keys = keys.reshape(args.samples, chains, -1)
                    run = jax.jit(run_chains)
                else:
                    # [device][chain ...]: each device runs its share of the chains.
                    states = jax.tree_util.tree_map(
                        lambda a: a.reshape((args.devices, per_device) + a.shape[1:]), states)
                    keys = keys.reshape(args.samples, args.devices, per_device, -1)
                    keys = jnp.moveaxis(keys, 1, 0)
                    run = jax.pmap(run_chains, devices=devices)
                final, first, times = time_compiled(jax, run, states, keys)
                steps_taken = int(np.max(np.asarray(final[1])))
                if steps_taken != args.steps:
                    raise RuntimeError(
                        f"BlackJAX took {steps_taken} leapfrog steps, not {args.steps}")
                accept = float(np.mean(np.asarray(final[2]))) / args.samples
            except Exception as error:  # e.g. out of memory at the largest counts
                print_failure("blackjax", model_name, chains, error)
                continue
            print(json.dumps({
                "peer": "blackjax",
                "mode": "vmap" if args.devices == 1 else f"pmap over {args.devices} devices",
                "model": model_name,
                "dim": dim,
                "step_size": step_size,
                "precision": args.precision,
                "device": str(devices[0]),
                "devices": args.devices,
                **bm_hmc_throughput(chains, args.samples, args.steps, first, times),
                "accept_prob_mean": accept,
                **versions(jax, blackjax),
            }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
