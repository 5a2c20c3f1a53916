"""JAX potentials (-log density) of myriad's models, shared by the peer scripts in bench/peers/.

Each factory takes the modules it needs (jax.numpy, numpy) so that importing this file needs
neither, and returns the potential of one point (a 1-D array on the unconstrained scale); the
callers vmap it over chains.

  gaussian_potential       models::Gaussian (include/myriad/models/gaussian.hpp), closed form
  logistic_potential       models::Logistic with numpy data of the same shape (not myriad's)
  eight_schools_potential  models::EightSchools, non-centred, on (mu, log tau, eta_1..8)
  diamonds_potential       posteriordb's diamonds-diamonds (brms linear regression, K - 1 = 24
                           centred predictors), on (b_1..b_24, Intercept, log sigma)

The BM_hmc peers (numpyro_hmc.py, blackjax_hmc.py) also share their options, the choice of
workload and the measured part of their JSON lines from here, so that the two libraries' lines
stay comparable field for field.
"""

import json
import math
import os

HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)


def gaussian_potential(jnp, dim=100, rho=0.5, mean=0.0, sd=1.0):
    """-log p for models::Gaussian, N(m 1, s^2 [(1 - rho) I + rho 11^T]): Sherman-Morrison
    inverse, matrix determinant lemma, O(D) per gradient. Returns (potential, dim, 0.1), the
    last the fixed step size of bench/bm_hmc.cpp."""
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


def logistic_data(np, seed, n=1000, d=10):
    """Synthetic data of models::Logistic's shape: intercept column, covariates N(0, 1), true
    beta ~ N(0, I), y ~ Bernoulli(logit^-1(x beta)). From numpy's generator, so the numbers
    differ from myriad's Philox streams (the design and the cost per gradient do not)."""
    rng = np.random.default_rng(seed)
    x = np.ones((n, d))
    x[:, 1:] = rng.standard_normal((n, d - 1))
    true_beta = rng.standard_normal(d)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(x @ true_beta)))).astype(float)
    return x, y


def load_logistic_data(np, path):
    """X (n x d) and y from a JSON file {"n", "d", "x" (row-major), "y"}: e.g.
    data/logistic-myriad-n1000-d10-seed1.json, myriad's own LogisticData<double>::synthetic(1000,
    10, 1) (see README.md), so that the peers sample the very posterior myriad samples."""
    with open(path) as f:
        data = json.load(f)
    n, d = data["n"], data["d"]
    return np.asarray(data["x"], dtype=float).reshape(n, d), np.asarray(data["y"], dtype=float)


def logistic_potential(jnp, np, dtype, seed, n=1000, d=10, prior_sd=10.0, data_file=None):
    """-log p for models::Logistic, beta_j ~ N(0, prior_sd^2), with logistic_data(seed), or the
    data of data_file (load_logistic_data)."""
    if data_file:
        x, y = load_logistic_data(np, data_file)
        n, d = x.shape
    else:
        x, y = logistic_data(np, seed, n, d)
    x = jnp.asarray(x, dtype=dtype)
    y = jnp.asarray(y, dtype=dtype)
    log_prior_normaliser = -d * (HALF_LOG_TWO_PI + math.log(prior_sd))

    def potential(beta):
        eta = x @ beta
        log_likelihood = jnp.sum(y * eta - jnp.logaddexp(0.0, eta))
        log_prior = log_prior_normaliser - 0.5 * jnp.sum(beta * beta) / (prior_sd * prior_sd)
        return -(log_likelihood + log_prior)

    return potential, d, 0.02  # step size as in bench/bm_hmc.cpp


def eight_schools_potential(jnp):
    """-log p for models::EightSchools: mu ~ N(0, 5^2), tau ~ HalfCauchy(0, 5) on log tau (with
    its Jacobian), eta_j ~ N(0, 1), y_j ~ N(mu + tau eta_j, sigma_j^2)."""
    y = jnp.asarray([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigma = jnp.asarray([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])

    def normal_log_density(x, mean, sd):
        return -HALF_LOG_TWO_PI - jnp.log(sd) - 0.5 * ((x - mean) / sd) ** 2

    def potential(z):
        mu, log_tau, eta = z[0], z[1], z[2:]
        tau = jnp.exp(log_tau)
        log_prior = (normal_log_density(mu, 0.0, 5.0) + math.log(2.0 / (5.0 * math.pi))
                     - jnp.logaddexp(0.0, 2.0 * (log_tau - math.log(5.0))) + log_tau
                     + jnp.sum(normal_log_density(eta, 0.0, 1.0)))
        return -(log_prior + jnp.sum(normal_log_density(y, mu + tau * eta, sigma)))

    return potential, 10, 0.2  # step size as in bench/bm_hmc.cpp


BM_HMC_MODELS = ["gaussian", "logistic", "eight_schools"]


def bm_hmc_workload(name, jnp, np, dtype, seed, gaussian_dim=100):
    """(potential, dim, step size) of BM_hmc's workload `name`, one of BM_HMC_MODELS."""
    if name == "gaussian":
        return gaussian_potential(jnp, dim=gaussian_dim)
    if name == "logistic":
        return logistic_potential(jnp, np, dtype, seed)
    return eight_schools_potential(jnp)


def add_bm_hmc_arguments(parser, chains):
    """--model, --chains (default: the list `chains`), --samples, --steps, --precision."""
    parser.add_argument("--model", nargs="+", default=BM_HMC_MODELS, choices=BM_HMC_MODELS)
    parser.add_argument("--chains", nargs="+", type=int, default=chains)
    parser.add_argument("--samples", type=int, default=20, help="HMC iterations per run")
    parser.add_argument("--steps", type=int, default=8, help="leapfrog steps per iteration")
    parser.add_argument("--precision", choices=["f64", "f32"], default="f64")


def bm_hmc_throughput(chains, samples, steps, first, times):
    """The measured fields of a BM_hmc peer's line, in its order: the gradient evaluations
    (chains x samples x steps, exact for fixed-length HMC) and their rate at the fastest of the
    timed runs (time_compiled's first and times)."""
    evaluations = chains * samples * steps
    seconds = min(times)
    return {
        "chains": chains,
        "samples": samples,
        "leapfrog_steps": steps,
        "gradient_evaluations": evaluations,
        "seconds": seconds,
        "seconds_runs": times,
        "gradient_evaluations_per_second": evaluations / seconds,
        "first_run_seconds_with_compile": first,
    }


def versions(jax, library):
    """The versions a peer's line records: JAX's and its sampling library's, under the name the
    library is imported by."""
    return {"jax": jax.__version__, library.__name__: library.__version__}


def print_failure(peer, model, chains, error):
    """A JSON line in place of a (model, chain count) that failed, an exception (e.g. out of
    memory at the largest counts) or a message, so that a sweep goes on to the next."""
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"[:500]
    print(json.dumps({"peer": peer, "model": model, "chains": chains, "error": message}),
          flush=True)


def student_t_log_density(jnp, x, nu, loc, scale):
    """Stan's student_t_lpdf(x | nu, loc, scale), all constants included."""
    constant = (math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu)
                - 0.5 * math.log(nu * math.pi) - math.log(scale))
    z = (x - loc) / scale
    return constant - 0.5 * (nu + 1.0) * jnp.log1p(z * z / nu)


DIAMONDS_DIR = "/work/shared/posteriordb/diamonds-diamonds"
DIAMONDS_NAMES = [f"b[{k}]" for k in range(1, 25)] + ["Intercept", "sigma"]


def diamonds_data(np, directory=DIAMONDS_DIR):
    """(Y, Xc) of model.stan: Xc = X[:, 1:] minus its column means (brms's centred design)."""
    with open(os.path.join(directory, "data.json")) as f:
        data = json.load(f)
    x = np.asarray(data["X"], dtype=float)
    y = np.asarray(data["Y"], dtype=float)
    if data.get("prior_only", 0):
        raise ValueError("diamonds: prior_only = 1 is not supported")
    assert x.shape == (data["N"], data["K"]) and y.shape == (data["N"],)
    xc = x[:, 1:] - x[:, 1:].mean(axis=0)
    return y, xc


def diamonds_potential(jnp, np, dtype, directory=DIAMONDS_DIR):
    """-log p of posteriordb's diamonds (model.stan, brms 2.10) on the unconstrained scale
    z = (b_1..b_24, Intercept, log sigma), every constant included:
      b ~ N(0, 1), Intercept ~ student_t(3, 8, 10), sigma ~ student_t(3, 0, 10) truncated to
      sigma > 0 (minus student_t_lccdf(0 | 3, 0, 10) = log 1/2), Y ~ N(Intercept + Xc b, sigma^2)
      (normal_id_glm), plus log sigma, the Jacobian of sigma = exp(z_26).
    The likelihood forms the N = 5000 residuals each call (O(N K) per gradient, as Stan's
    normal_id_glm does), not sufficient statistics. Returns (potential, 26, to_constrained),
    the last mapping draws (..., 26) to (b, Intercept, sigma)."""
    y_np, xc_np = diamonds_data(np, directory)
    n, kc = xc_np.shape
    y = jnp.asarray(y_np, dtype=dtype)
    xc = jnp.asarray(xc_np, dtype=dtype)
    dim = kc + 2

    def potential(z):
        b, intercept, log_sigma = z[:kc], z[kc], z[kc + 1]
        sigma = jnp.exp(log_sigma)
        log_prior = (jnp.sum(-HALF_LOG_TWO_PI - 0.5 * b * b)
                     + student_t_log_density(jnp, intercept, 3.0, 8.0, 10.0)
                     + student_t_log_density(jnp, sigma, 3.0, 0.0, 10.0) - math.log(0.5))
        residual = y - intercept - xc @ b
        log_likelihood = (-n * HALF_LOG_TWO_PI - n * log_sigma
                          - 0.5 * jnp.sum(residual * residual) / (sigma * sigma))
        return -(log_prior + log_likelihood + log_sigma)

    def to_constrained(draws):
        out = np.array(draws, dtype=float, copy=True)
        out[..., kc + 1] = np.exp(out[..., kc + 1])
        return out

    return potential, dim, to_constrained


def diamonds_reference(np, directory=DIAMONDS_DIR):
    """Reference mean and sd per variable, in DIAMONDS_NAMES order, from reference.csv."""
    rows = {}
    with open(os.path.join(directory, "reference.csv")) as f:
        header = f.readline().strip().split(",")
        for line in f:
            fields = line.strip().split(",")
            if len(fields) == len(header):
                rows[fields[0]] = dict(zip(header[1:], map(float, fields[1:])))
    mean = np.asarray([rows[name]["mean"] for name in DIAMONDS_NAMES])
    sd = np.asarray([rows[name]["sd"] for name in DIAMONDS_NAMES])
    mcse = np.asarray([rows[name]["mcse_mean"] for name in DIAMONDS_NAMES])
    return mean, sd, mcse


def time_compiled(jax, run, *args):
    """Calls run(*args) once (compiling) and three more times on the same arguments (the same
    work), each timed by wall clock after jax.block_until_ready. Returns (the last result, the
    first call's seconds with compilation, the three timed calls' seconds): the peers report the
    fastest of the three."""
    import time
    start = time.perf_counter()
    result = jax.block_until_ready(run(*args))
    first = time.perf_counter() - start
    times = []
    for _ in range(3):
        start = time.perf_counter()
        result = jax.block_until_ready(run(*args))
        times.append(time.perf_counter() - start)
    return result, first, times
