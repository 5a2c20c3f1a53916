#!/usr/bin/env python3
"""Adaptive-HMC peers of myriad: NumPyro's NUTS and BlackJAX's ChEES-HMC, each with its own
warm-up adaptation, on the CPU with JAX in float64.

Usage:
  python bench/peers/adaptive_peers.py [--target gaussian_rho099 logistic eight_schools diamonds]
                                       [--sampler nuts chees] [--chains N] [--warmup 200]
                                       [--draws 200] [--seed 1] [--dense]
                                       [--chees-mass-matrix none|diagonal] ...

Prints one JSON line per (target, sampler) on stdout (progress goes to stderr).

Targets (potentials in peer_targets.py), all sampled on the unconstrained scale, chains
started uniform in (-2, 2)^D as Stan and myriad do:
  gaussian_rho099  myriad's `gaussian`, D = 100, rho = 0.99, mean 0, sd 1 (closed form; the
                   covariance's condition number is 1 + D rho / (1 - rho) ~ 1e4). Exact answer:
                   every coordinate has mean 0 and sd 1.
  logistic         n = 1000, d = 10, prior sd 10, data from numpy (seed 1): the same design as
                   myriad's `logistic`, different numbers (myriad draws them from Philox).
  eight_schools    non-centred, D = 10, on (mu, log tau, eta_1..8).
  diamonds         posteriordb's diamonds-diamonds, D = 26, on (b_1..b_24, Intercept, log sigma),
                   compared with posteriordb's reference draws (Stan, 10 x 1000).
Default sizes: 1024 chains, 200 warm-up, 200 draws; diamonds 16 chains (NUTS there runs to tree
depth 10, ~800 gradients of an N = 5000 regression per iteration). --chains overrides both.

Samplers:
  nuts   numpyro.infer.NUTS(potential_fn=...), target_accept 0.8, max_tree_depth 10, diagonal
         mass matrix (--dense: dense), NumPyro's windowed (Stan-style) adaptation of step size and
         mass matrix per chain, MCMC(chain_method="vectorized", progress_bar=False). Warm-up is
         run by mcmc.warmup(collect_warmup=True) and sampling by mcmc.run from its end state.
  chees  blackjax.chees_adaptation over all chains together (dual averaging of one step size
         towards the harmonic-mean acceptance --chees-target-accept, default BlackJAX's 0.651;
         the trajectory length by Adam on the ChEES criterion (see below); Halton jitter shared
         by all chains; BlackJAX's default identity metric, --chees-mass-matrix diagonal for its
         opt-in diagonal estimate), then blackjax.dynamic_hmc with the adapted parameters,
         vmapped over chains.

Counted: gradient evaluations = leapfrog steps summed over chains and iterations, warm-up and
sampling: NumPyro's `num_steps` extra field (collected in both phases), BlackJAX's
info.num_integration_steps (both phases). Not counted, for either: the one gradient per chain at
initialisation; for NumPyro also its step-size search (find_reasonable_step_size, a handful of
single leapfrog steps per chain at the start and after each mass-matrix window).

Timed: wall clock of warm-up + sampling without compilation. ChEES: the warm-up and the sampling
loop are jitted and compiled ahead of time (jit(...).lower(...).compile()); the compiled calls are
timed (after block_until_ready). NUTS: MCMC compiles inside mcmc.warmup and mcmc.run, and again
on every call (its loop is a new closure each time), so each call is timed once and the compile
time JAX reports through jax.monitoring during it (/jax/core/compile/*: tracing, lowering, XLA
compilation) is subtracted. Raw and compile seconds are reported too. ArviZ is not timed.

ChEES's optimiser: BlackJAX has no default (run() takes one); optax.adam(0.5, b1=0, b2=0.95) and
initial step size 0.1, as in BlackJAX's own ChEES test (--chees-learning-rate etc.).
"""

import argparse
import json
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peer_targets import (DIAMONDS_DIR, DIAMONDS_NAMES, diamonds_potential,  # noqa: E402
                          diamonds_reference, eight_schools_potential, gaussian_potential,
                          logistic_potential)

TARGETS = ["gaussian_rho099", "logistic", "eight_schools", "diamonds"]
SAMPLERS = ["nuts", "chees"]
DEFAULT_CHAINS = {"gaussian_rho099": 1024, "logistic": 1024, "eight_schools": 1024, "diamonds": 16}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", nargs="+", default=TARGETS, choices=TARGETS)
    parser.add_argument("--sampler", nargs="+", default=SAMPLERS, choices=SAMPLERS)
    parser.add_argument("--chains", type=int, default=None,
                        help="chains (default 1024; diamonds 16)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-seed", type=int, default=1, help="seed of the logistic data")
    parser.add_argument("--logistic-data", default=None,
                        help="logistic data as JSON {n, d, x, y} instead of numpy's (e.g. "
                             "bench/peers/data/logistic-myriad-n1000-d10-seed1.json: myriad's own)")
    parser.add_argument("--diamonds-dir", default=DIAMONDS_DIR)
    nuts = parser.add_argument_group("NUTS (NumPyro)")
    nuts.add_argument("--nuts-target-accept", type=float, default=0.8)
    nuts.add_argument("--max-tree-depth", type=int, default=10)
    nuts.add_argument("--dense", action="store_true", help="dense mass matrix (dense_mass=True)")
    chees = parser.add_argument_group("ChEES (BlackJAX)")
    chees.add_argument("--chees-target-accept", type=float, default=None,
                       help="default: BlackJAX's OPTIMAL_TARGET_ACCEPTANCE_RATE (0.651)")
    chees.add_argument("--chees-learning-rate", type=float, default=0.5,
                       help="Adam's rate on log trajectory length (BlackJAX has no default; "
                            "0.5 as in BlackJAX's own ChEES test; TFP's ChEES uses 0.025)")
    chees.add_argument("--chees-adam-b2", type=float, default=0.95,
                       help="Adam's second-moment decay (BlackJAX's test and TFP: 0.95); b1 is 0")
    chees.add_argument("--chees-initial-step-size", type=float, default=0.1)
    chees.add_argument("--chees-mass-matrix", choices=["none", "diagonal"], default="none",
                       help="BlackJAX's mass_matrix_estimation (default None: identity metric)")
    return parser.parse_args()


def make_target(name, args, jnp, np):
    """(potential, dim, to_constrained or None, exact/reference summary or None)."""
    if name == "gaussian_rho099":
        potential, dim, _ = gaussian_potential(jnp, dim=100, rho=0.99, mean=0.0, sd=1.0)
        return potential, dim, None, {"mean": np.zeros(dim), "sd": np.ones(dim)}
    if name == "logistic":
        potential, dim, _ = logistic_potential(jnp, np, jnp.float64, args.data_seed,
                                               data_file=args.logistic_data)
        return potential, dim, None, None
    if name == "eight_schools":
        potential, dim, _ = eight_schools_potential(jnp)
        return potential, dim, None, None
    potential, dim, to_constrained = diamonds_potential(jnp, np, jnp.float64, args.diamonds_dir)
    mean, sd, mcse = diamonds_reference(np, args.diamonds_dir)
    return potential, dim, to_constrained, {"mean": mean, "sd": sd, "mcse": mcse}


def initial_points(jax, jnp, seed, chains, dim):
    key = jax.random.PRNGKey(seed)
    return jax.random.uniform(key, (chains, dim), dtype=jnp.float64, minval=-2.0, maxval=2.0)


def block(jax, tree):
    jax.block_until_ready(tree)
    return tree


class CompileClock:
    """Wall clock of a phase, less the compilation JAX reports during it.

    jax.monitoring emits a duration for each compilation step (/jax/core/compile/
    jaxpr_trace_duration, jaxpr_to_mlir_module_duration, backend_compile_duration); the
    listener sums them per phase, and `seconds` is the wall clock minus that sum."""

    PREFIX = "/jax/core/compile/"
    _shared = None

    @classmethod
    def shared(cls, jax):
        """One listener for the whole run (JAX keeps every registered listener)."""
        if cls._shared is None:
            cls._shared = cls(jax)
        return cls._shared

    def __init__(self, jax):
        self._jax = jax
        self._total = 0.0
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, name, duration, **_):
        if name.startswith(self.PREFIX):
            self._total += duration

    class _Phase:
        raw_seconds = compile_seconds = seconds = 0.0

    def phase(self):
        clock = self

        class Context:
            def __enter__(self):
                self.result = CompileClock._Phase()
                self.start_compile = clock._total
                self.start = time.perf_counter()
                return self.result

            def __exit__(self, *exc):
                self.result.raw_seconds = time.perf_counter() - self.start
                self.result.compile_seconds = clock._total - self.start_compile
                self.result.seconds = self.result.raw_seconds - self.result.compile_seconds
                return False

        return Context()


def run_nuts(args, jax, jnp, np, potential, init, warmup, draws):
    import numpyro
    from numpyro.infer import MCMC, NUTS

    chains = init.shape[0]
    kernel = NUTS(potential_fn=potential, target_accept_prob=args.nuts_target_accept,
                  max_tree_depth=args.max_tree_depth, dense_mass=args.dense,
                  adapt_step_size=True, adapt_mass_matrix=True)
    mcmc = MCMC(kernel, num_warmup=warmup, num_samples=draws, num_chains=chains,
                chain_method="vectorized", progress_bar=False)
    fields = ("num_steps", "diverging", "accept_prob")
    key = jax.random.PRNGKey(args.seed + 1)
    warm_key, sample_key = jax.random.split(key)

    clock = CompileClock.shared(jax)
    with clock.phase() as warm_phase:
        mcmc.warmup(warm_key, init_params=init, extra_fields=fields, collect_warmup=True)
        warm_extra = block(jax, mcmc.get_extra_fields(group_by_chain=True))
    with clock.phase() as sample_phase:
        mcmc.run(sample_key, init_params=init, extra_fields=fields)
        samples = block(jax, mcmc.get_samples(group_by_chain=True))
        extra = block(jax, mcmc.get_extra_fields(group_by_chain=True))

    warm_steps = np.asarray(warm_extra["num_steps"]).astype(np.int64)   # (chains, warmup)
    steps = np.asarray(extra["num_steps"]).astype(np.int64)             # (chains, draws)
    depth = np.floor(np.log2(np.maximum(steps, 1))).astype(int) + 1     # NumPyro's formula
    adapt = mcmc.last_state.adapt_state
    step_size = np.asarray(adapt.step_size).reshape(-1)
    max_steps = 2 ** args.max_tree_depth - 1
    # Vectorised NUTS runs every chain's tree in lock step: an iteration costs about the longest
    # chain's trajectory times the number of chains (idle lanes masked, still computed).
    lockstep = int(chains * (warm_steps.max(axis=0).sum() + steps.max(axis=0).sum()))
    return {
        "sampler": "nuts",
        "library": {"numpyro": numpyro.__version__},
        "settings": {"target_accept": args.nuts_target_accept,
                     "max_tree_depth": args.max_tree_depth,
                     "mass_matrix": "dense" if args.dense else "diagonal",
                     "adaptation": "NumPyro window adaptation per chain (Stan's schedule)",
                     "chain_method": "vectorized"},
        "draws_array": np.asarray(samples),                               # (chains, draws, D)
        "step_size": {"median": float(np.median(step_size)), "min": float(step_size.min()),
                      "max": float(step_size.max())},
        "accept_prob_mean": float(np.mean(np.asarray(extra["accept_prob"]))),
        "divergences": int(np.sum(np.asarray(extra["diverging"]))),
        "divergences_warmup": int(np.sum(np.asarray(warm_extra["diverging"]))),
        "gradient_evaluations_warmup": int(warm_steps.sum()),
        "gradient_evaluations_sampling": int(steps.sum()),
        "gradient_evaluations_lockstep": lockstep,
        "tree_depth_mean": float(depth.mean()),
        "tree_depth_max": int(depth.max()),
        "max_tree_depth_fraction": float(np.mean(steps >= max_steps)),
        "leapfrog_steps_mean": float(steps.mean()),
        "wall_seconds_warmup": warm_phase.seconds,
        "wall_seconds_sampling": sample_phase.seconds,
        "wall_seconds_with_compile": warm_phase.raw_seconds + sample_phase.raw_seconds,
        "compile_seconds": warm_phase.compile_seconds + sample_phase.compile_seconds,
        "timing": "one pass of mcmc.warmup + mcmc.run; wall clock minus the compile time JAX "
                  "reports (jax.monitoring /jax/core/compile/* durations) during each call",
    }


def run_chees(args, jax, jnp, np, potential, init, warmup, draws):
    import blackjax
    import optax
    from blackjax.adaptation.base import get_filter_adapt_info_fn
    from blackjax.adaptation.chees_adaptation import OPTIMAL_TARGET_ACCEPTANCE_RATE

    chains = init.shape[0]
    target_accept = (OPTIMAL_TARGET_ACCEPTANCE_RATE if args.chees_target_accept is None
                     else args.chees_target_accept)
    mass_matrix = None if args.chees_mass_matrix == "none" else args.chees_mass_matrix

    def logdensity(x):
        return -potential(x)

    adaptation = blackjax.chees_adaptation(
        logdensity, chains, target_acceptance_rate=target_accept,
        mass_matrix_estimation=mass_matrix,
        adaptation_info_fn=get_filter_adapt_info_fn(
            info_keys={"num_integration_steps", "is_divergent", "acceptance_rate"}))
    optim = optax.adam(learning_rate=args.chees_learning_rate, b1=0.0, b2=args.chees_adam_b2)
    # warmup.run returns the sampler's parameters with two Python functions among them
    # (integration_steps_fn: the Halton jitter; next_random_arg_fn); they close over constants
    # only, so they are kept from tracing and the jitted warm-up returns arrays alone.
    kept = {}

    def run_warmup(key, positions):
        (states, parameters), info = adaptation.run(
            key, positions, step_size=args.chees_initial_step_size, optim=optim,
            num_steps=warmup, max_sampling_steps=draws)
        kept["integration_steps_fn"] = parameters["integration_steps_fn"]
        kept["next_random_arg_fn"] = parameters["next_random_arg_fn"]
        return (states, parameters["step_size"], parameters["inverse_mass_matrix"],
                parameters["integration_steps_params"][0],
                info.info.num_integration_steps, info.info.is_divergent,
                info.info.acceptance_rate)

    def run_sampling(key, states, step_size, inverse_mass_matrix, num_leapfrog_steps):
        sampler = blackjax.dynamic_hmc(
            logdensity, step_size=step_size, inverse_mass_matrix=inverse_mass_matrix,
            integration_steps_fn=kept["integration_steps_fn"],
            next_random_arg_fn=kept["next_random_arg_fn"],
            integration_steps_params=(num_leapfrog_steps,))
        step = jax.vmap(sampler.step)

        def body(states, key):
            states, info = step(jax.random.split(key, chains), states)
            return states, (states.position, info.acceptance_rate, info.is_divergent,
                            info.num_integration_steps)

        _, outputs = jax.lax.scan(body, states, jax.random.split(key, draws))
        return outputs

    key = jax.random.PRNGKey(args.seed + 1)
    warm_key, sample_key = jax.random.split(key)
    start = time.perf_counter()
    warm_compiled = jax.jit(run_warmup).lower(warm_key, init).compile()
    compile_seconds = time.perf_counter() - start
    clock = CompileClock.shared(jax)
    with clock.phase() as warm_phase:
        warm_out = block(jax, warm_compiled(warm_key, init))
    states, step_size, inverse_mass_matrix, num_leapfrog_steps = warm_out[:4]
    warm_steps, warm_divergent, _ = (np.asarray(a) for a in warm_out[4:])

    start = time.perf_counter()
    sample_compiled = jax.jit(run_sampling).lower(
        sample_key, states, step_size, inverse_mass_matrix, num_leapfrog_steps).compile()
    compile_seconds += time.perf_counter() - start
    with clock.phase() as sample_phase:
        positions, accept, divergent, steps = block(jax, sample_compiled(
            sample_key, states, step_size, inverse_mass_matrix, num_leapfrog_steps))

    steps = np.asarray(steps).astype(np.int64)            # (draws, chains)
    warm_steps = warm_steps.astype(np.int64)              # (warmup, chains)
    imm = np.asarray(inverse_mass_matrix)
    return {
        "sampler": "chees",
        "library": {"blackjax": blackjax.__version__, "optax": optax.__version__},
        "settings": {"target_accept": target_accept,
                     "target_accept_statistic": "harmonic mean over chains of the acceptance "
                                                "probability (BlackJAX's ChEES dual averaging)",
                     "optimizer": f"optax.adam(learning_rate={args.chees_learning_rate}, b1=0, "
                                  f"b2={args.chees_adam_b2})",
                     "initial_step_size": args.chees_initial_step_size,
                     "mass_matrix_estimation": mass_matrix,
                     "jitter": "Halton (BlackJAX default, jitter_amount 1, one length for all "
                               "chains per iteration)",
                     "decay_rate": 0.5, "max_leapfrog_steps": 1000},
        "draws_array": np.swapaxes(np.asarray(positions), 0, 1),   # (chains, draws, D)
        "step_size": float(step_size),
        "trajectory_length": float(step_size * num_leapfrog_steps),
        "num_leapfrog_steps_max": float(num_leapfrog_steps),
        "inverse_mass_matrix_range": [float(imm.min()), float(imm.max())],
        "accept_prob_mean": float(np.mean(np.asarray(accept))),
        "divergences": int(np.sum(np.asarray(divergent))),
        "divergences_warmup": int(np.sum(warm_divergent)),
        "gradient_evaluations_warmup": int(warm_steps.sum()),
        "gradient_evaluations_sampling": int(steps.sum()),
        "leapfrog_steps_mean": float(steps.mean()),
        "wall_seconds_warmup": warm_phase.seconds,
        "wall_seconds_sampling": sample_phase.seconds,
        "wall_seconds_with_compile": (compile_seconds + warm_phase.raw_seconds
                                      + sample_phase.raw_seconds),
        "compile_seconds": compile_seconds,
        "compile_seconds_in_timed_calls": warm_phase.compile_seconds + sample_phase.compile_seconds,
        "timing": "jit(...).lower(...).compile() ahead of time, then the compiled warm-up and "
                  "sampling calls timed (block_until_ready; any compile JAX reports during "
                  "them subtracted, expected 0)",
    }


def variant_name(sampler, args):
    if sampler == "nuts":
        return "nuts-dense" if args.dense else "nuts-diagonal"
    return "chees" if args.chees_mass_matrix == "none" else f"chees-{args.chees_mass_matrix}"


def diagnostics(az, np, draws, to_constrained, truth, target):
    """ESS, R-hat and accuracy of draws (chains, draws, D) on the sampled (unconstrained) scale;
    rank-based ESS and R-hat are the same on the constrained scale (monotone transforms)."""
    dataset = az.convert_to_dataset({"x": draws})
    ess_bulk = np.asarray(az.ess(dataset, method="bulk")["x"])
    ess_tail = np.asarray(az.ess(dataset, method="tail")["x"])
    rhat = np.asarray(az.rhat(dataset)["x"])
    out = {"ess_bulk_min": float(ess_bulk.min()), "ess_tail_min": float(ess_tail.min()),
           "rhat_max": float(rhat.max()),
           "ess_bulk_min_parameter": int(np.argmin(ess_bulk))}
    if truth is None:
        return out
    values = to_constrained(draws) if to_constrained is not None else draws
    flat = values.reshape(-1, values.shape[-1])
    mean, sd = flat.mean(axis=0), flat.std(axis=0, ddof=1)
    mcse = np.asarray(az.mcse(az.convert_to_dataset({"x": values}), method="mean")["x"])
    if target == "gaussian_rho099":
        out["max_abs_mean_error_sd_units"] = float(
            np.max(np.abs(mean - truth["mean"]) / truth["sd"]))
        out["max_abs_sd_error_sd_units"] = float(np.max(np.abs(sd - truth["sd"]) / truth["sd"]))
        out["max_mean_z"] = float(np.max(np.abs(mean - truth["mean"]) / mcse))
    else:
        error = np.abs(mean - truth["mean"]) / truth["sd"]
        worst = int(np.argmax(error))
        out["max_abs_mean_error_ref_sd"] = float(error[worst])
        out["max_abs_mean_error_parameter"] = DIAMONDS_NAMES[worst]
        out["max_abs_sd_error_rel"] = float(np.max(np.abs(sd / truth["sd"] - 1.0)))
        # The README's check: |mean - mean_ref| against both Monte Carlo errors.
        out["max_mean_z"] = float(np.max(np.abs(mean - truth["mean"])
                                         / np.sqrt(mcse ** 2 + truth["mcse"] ** 2)))
    return out


def main():
    args = parse_args()
    # ArviZ 0.x announces its 1.0 refactor on import, and warns whenever chains outnumber draws
    # (the point of these runs).
    warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor")
    warnings.filterwarnings("ignore", message=r"More chains \(\d+\) than draws")
    import jax
    jax.config.update("jax_enable_x64", True)
    import arviz as az
    import jax.numpy as jnp
    import jaxlib
    import numpy as np

    for target in args.target:
        potential, dim, to_constrained, truth = make_target(target, args, jnp, np)
        chains = args.chains if args.chains is not None else DEFAULT_CHAINS[target]
        init = initial_points(jax, jnp, args.seed, chains, dim)
        for sampler in args.sampler:
            print(f"[adaptive_peers] {target} {sampler}: {chains} chains, "
                  f"{args.warmup} + {args.draws}", file=sys.stderr, flush=True)
            run = run_nuts if sampler == "nuts" else run_chees
            try:
                result = run(args, jax, jnp, np, potential, init, args.warmup, args.draws)
            except Exception as error:
                print(json.dumps({"peer": sampler, "target": target, "chains": chains,
                                  "error": f"{type(error).__name__}: {error}"[:800]}), flush=True)
                continue
            draws = result.pop("draws_array")
            diag = diagnostics(az, np, draws, to_constrained, truth, target)
            gradients = (result["gradient_evaluations_warmup"]
                         + result["gradient_evaluations_sampling"])
            seconds = result["wall_seconds_warmup"] + result["wall_seconds_sampling"]
            line = {
                "peer": "numpyro-nuts" if sampler == "nuts" else "blackjax-chees",
                "variant": variant_name(sampler, args),
                "versions": {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                             "arviz": az.__version__, "numpy": np.__version__,
                             **result.pop("library")},
                "device": str(jax.devices()[0]),
                "precision": "f64",
                "target": target,
                "logistic_data": (args.logistic_data or f"numpy seed {args.data_seed}")
                if target == "logistic" else None,
                "dim": dim,
                "chains": chains,
                "warmup": args.warmup,
                "draws": args.draws,
                "seed": args.seed,
                "gradient_evaluations": gradients,
                "wall_seconds": seconds,
                **result,
                **diag,
                "min_ess_per_1000_gradients": 1000.0 * diag["ess_bulk_min"] / gradients,
                "min_ess_per_second": diag["ess_bulk_min"] / seconds,
                "min_tail_ess_per_1000_gradients": 1000.0 * diag["ess_tail_min"] / gradients,
            }
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
