#!/usr/bin/env python3
"""NumPyro's NUTS on the fifteen posteriordb posteriors, checked against their reference draws.

Reports, per posterior, the wall time of warm-up + sampling (compilation excluded), the
gradient evaluations, and each variable's mean, sd, bulk ESS, R-hat and z-score against
posteriordb's reference (shared/posteriordb), with min bulk ESS per second and per gradient.

Usage:
  python3 bench/posteriordb/numpyro_posteriordb.py [--posteriors NAME ...] [--chains 4]
      [--warmup 1000] [--draws 1000] [--seed 1] [--platform cpu|gpu]
      [--chain-method vectorized|parallel|sequential] [--precision f64|f32]
      [--posteriordb DIR] [--out bench/results/posteriordb-numpyro-cpu.jsonl]

Writes one JSON line per posterior to --out (appending) and a one-line summary per posterior to
stderr. See bench/posteriordb/README.md for what is measured and how.

The models are ports of each posterior's model.stan (same priors, same constraints, same
likelihood). Where Stan's model has no prior on a parameter (an improper flat prior),
numpyro's ImproperUniform with the same support stands for it; constants that do not depend
on the parameters (Stan's `~` drops them, `target +=` keeps them) are irrelevant to sampling.

Sampler: numpyro.infer.NUTS with its defaults (target_accept_prob 0.8, max_tree_depth 10,
diagonal mass matrix, Stan-style windowed adaptation of step size and mass matrix), each
chain initialised by init_to_uniform(radius=2), i.e. uniform(-2, 2) on the unconstrained
scale, as Stan does.

Driver: the same calls numpyro.infer.MCMC makes (kernel.init with one key per chain, then
kernel.sample in a loop), but the warm-up loop and the sampling loop are each one jitted
lax.scan compiled ahead of time (jax.jit(...).lower(...).compile()), so that compilation is
timed apart from sampling exactly. (MCMC.run recompiles its loop on every call, since the loop
closes over a new function each time.) chain_method:
  vectorized  one init with C keys (numpyro vmaps init and sample over chains), one device;
              what MCMC(chain_method="vectorized") runs.
  sequential  one chain at a time through the same compiled single-chain loops; the time is
              the sum over chains.
  parallel    the single-chain loops under jax.pmap, one chain per device (on a CPU the
              script asks XLA for C host devices).
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# The posteriors, the options that choose them and size the runs, and where their data and
# references are found: shared with the myriad side (myriad_posteriordb.py, standard library only).
sys.path.insert(0, HERE)
import myriad_posteriordb as mp  # noqa: E402

# ODE tolerances for one_comp_mm_elim_abs, and the most steps odeint may take between two
# output times (a guard against a stiff corner of parameter space stalling every chain; Stan's
# integrate_ode_bdf allows 1e8 steps in all).
ODE_RTOL, ODE_ATOL, ODE_MXSTEP = 1e-8, 1e-10, 100_000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mp.add_run_arguments(parser, chains=4)
    parser.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--chain-method", choices=["vectorized", "parallel", "sequential"],
                        default="vectorized")
    parser.add_argument("--precision", choices=["f64", "f32"], default="f64",
                        help="f64 (default; Stan's precision) or f32 (NumPyro's default)")
    mp.add_posteriordb_argument(parser)
    parser.add_argument("--out", default=None, metavar="FILE.jsonl",
                        help="JSON lines appended here (default: "
                             "bench/results/posteriordb-numpyro-PLATFORM.jsonl)")
    parser.add_argument("--save-draws", default=None, metavar="DIR",
                        help="also save each posterior's draws as DIR/NAME.npy (float64, "
                             "chains x draws x variables in reference.csv's order)")
    parser.add_argument("--no-arviz", action="store_true",
                        help="use this script's numpy ESS/R-hat even if ArviZ is installed")
    args = parser.parse_args(argv)
    args.posteriors = mp.resolve_posteriors(parser, args.posteriors)
    if args.out is None:
        args.out = os.path.join(REPO, "bench", "results",
                                f"posteriordb-numpyro-{args.platform}.jsonl")
    return args


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------
# Models: each make_* takes the parsed data.json and returns (model, data) where model(d) is a
# NumPyro model of the arrays in the dict d (passed as an argument, not closed over, so that
# the data are arguments of the compiled loops rather than constants folded into them).
# --------------------------------------------------------------------------------------------

def build_models(jax, jnp, np, numpyro, dist, constraints):
    lax = jax.lax
    flat = dist.ImproperUniform  # Stan's implicit flat prior on a parameter's support

    def vec(x):
        return jnp.asarray(np.asarray(x, dtype=np.float64), dtype=jnp.result_type(float))

    def eight_schools(raw):
        J = raw["J"]

        def model(d):
            theta_trans = numpyro.sample("theta_trans", dist.Normal(0.0, 1.0).expand([J])
                                         .to_event(1))
            mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
            tau = numpyro.sample("tau", dist.HalfCauchy(5.0))   # cauchy(0, 5), tau > 0
            theta = numpyro.deterministic("theta", theta_trans * tau + mu)
            numpyro.sample("y", dist.Normal(theta, d["sigma"]).to_event(1), obs=d["y"])
        return model, {"y": vec(raw["y"]), "sigma": vec(raw["sigma"])}

    def arK(raw):
        K, T = raw["K"], raw["T"]
        y = np.asarray(raw["y"], dtype=np.float64)
        # lags[t - K, k - 1] = y[t - k] for t = K .. T-1 (0-based), k = 1 .. K
        lags = np.stack([y[K - k:T - k] for k in range(1, K + 1)], axis=1)

        def model(d):
            alpha = numpyro.sample("alpha", dist.Normal(0.0, 10.0))
            beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([K]).to_event(1))
            sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
            mu = alpha + d["lags"] @ beta
            numpyro.sample("y", dist.Normal(mu, sigma).to_event(1), obs=d["y_obs"])
        return model, {"lags": vec(lags), "y_obs": vec(y[K:])}

    def arma11(raw):
        def model(d):
            mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
            phi = numpyro.sample("phi", dist.Normal(0.0, 2.0))
            theta = numpyro.sample("theta", dist.Normal(0.0, 2.0))
            sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
            y = d["y"]
            err1 = y[0] - (mu + phi * mu)           # err[0] == 0 assumed

            def step(err_prev, yy):                 # yy = (y[t], y[t-1])
                err = yy[0] - (mu + phi * yy[1] + theta * err_prev)
                return err, err
            _, errs = lax.scan(step, err1, (y[1:], y[:-1]))
            err = jnp.concatenate([err1[None], errs])
            numpyro.sample("err", dist.Normal(0.0, sigma).expand(err.shape).to_event(1),
                           obs=err)
        return model, {"y": vec(raw["y"])}

    def garch11(raw):
        sigma1 = float(raw["sigma1"])

        def model(d):
            mu = numpyro.sample("mu", flat(constraints.real, (), ()))
            alpha0 = numpyro.sample("alpha0", flat(constraints.positive, (), ()))
            alpha1 = numpyro.sample("alpha1", flat(constraints.unit_interval, (), ()))
            # real<lower=0, upper=(1 - alpha1)> beta1, flat: Stan's transform written out,
            # beta1 = (1 - alpha1) logistic(u), with its log-Jacobian log(1 - alpha1)
            # + log logistic(u) + log logistic(-u). (A normalised Uniform(0, 1 - alpha1) would
            # add -log(1 - alpha1) and change the posterior; an ImproperUniform with that
            # interval gives the right density but numpyro does not see the support as
            # dynamic when it post-processes draws, and reports beta1 with the initial
            # alpha1's bound.)
            u = numpyro.sample("beta1_unconstrained", flat(constraints.real, (), ()))
            numpyro.factor("beta1_log_jacobian", jnp.log1p(-alpha1) + jax.nn.log_sigmoid(u)
                           + jax.nn.log_sigmoid(-u))
            beta1 = numpyro.deterministic("beta1", (1.0 - alpha1) * jax.nn.sigmoid(u))
            y = d["y"]

            def step(sigma_prev, y_prev):
                s = jnp.sqrt(alpha0 + alpha1 * jnp.square(y_prev - mu)
                             + beta1 * jnp.square(sigma_prev))
                return s, s
            s1 = jnp.asarray(sigma1, dtype=y.dtype)
            _, rest = lax.scan(step, s1, y[:-1])
            sigma = jnp.concatenate([s1[None], rest])
            numpyro.sample("y", dist.Normal(mu, sigma).to_event(1), obs=y)
        return model, {"y": vec(raw["y"])}

    def gp_pois_regr(raw):
        N = raw["N"]

        def model(d):
            rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))       # shape 25, rate 4
            alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))   # normal(0, 2), alpha > 0
            f_tilde = numpyro.sample("f_tilde", dist.Normal(0.0, 1.0).expand([N]).to_event(1))
            x = d["x"]
            # gp_exp_quad_cov(x, alpha, rho) + 1e-10 I, its Cholesky factor, f = L f_tilde
            cov = alpha ** 2 * jnp.exp(-0.5 * jnp.square(x[:, None] - x[None, :]) / rho ** 2)
            cov = cov + 1e-10 * jnp.eye(N, dtype=x.dtype)
            L = jnp.linalg.cholesky(cov)
            f = numpyro.deterministic("f", L @ f_tilde)
            numpyro.sample("k", dist.Poisson(jnp.exp(f)).to_event(1), obs=d["k"])  # poisson_log
        return model, {"x": vec(raw["x"]), "k": vec(raw["k"])}

    def kidiq(raw):
        def model(d):
            beta = numpyro.sample("beta", flat(constraints.real_vector, (), (3,)))
            sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
            mu = beta[0] + beta[1] * d["mom_hs"] + beta[2] * d["mom_iq"]
            numpyro.sample("kid_score", dist.Normal(mu, sigma).to_event(1), obs=d["kid_score"])
        return model, {k: vec(raw[k]) for k in ("kid_score", "mom_hs", "mom_iq")}

    def earnings(raw):
        height = np.asarray(raw["height"], dtype=np.float64)
        male = np.asarray(raw["male"], dtype=np.float64)
        z_height = (height - height.mean()) / height.std(ddof=1)   # Stan's sd(): N - 1

        def model(d):
            beta = numpyro.sample("beta", flat(constraints.real_vector, (), (4,)))
            sigma = numpyro.sample("sigma", flat(constraints.positive, (), ()))
            mu = (beta[0] + beta[1] * d["z_height"] + beta[2] * d["male"]
                  + beta[3] * d["inter"])
            numpyro.sample("log_earn", dist.Normal(mu, sigma).to_event(1), obs=d["log_earn"])
        return model, {"log_earn": vec(np.log(np.asarray(raw["earn"], dtype=np.float64))),
                       "z_height": vec(z_height), "male": vec(male),
                       "inter": vec(z_height * male)}

    def mesquite(raw):
        a = {k: np.asarray(raw[k], dtype=np.float64)
             for k in ("weight", "diam1", "diam2", "canopy_height", "total_height", "group")}
        X = np.stack([np.log(a["diam1"] * a["diam2"] * a["canopy_height"]),   # canopy volume
                      np.log(a["diam1"] * a["diam2"]),                        # canopy area
                      np.log(a["diam1"] / a["diam2"]),                        # canopy shape
                      np.log(a["total_height"]),
                      a["group"]], axis=1)

        def model(d):
            beta = numpyro.sample("beta", flat(constraints.real_vector, (), (6,)))
            sigma = numpyro.sample("sigma", flat(constraints.positive, (), ()))
            mu = beta[0] + d["X"] @ beta[1:]
            numpyro.sample("log_weight", dist.Normal(mu, sigma).to_event(1),
                           obs=d["log_weight"])
        return model, {"X": vec(X), "log_weight": vec(np.log(a["weight"]))}

    def low_dim_gauss_mix(raw):
        def model(d):
            # ordered[2] mu: numpyro's OrderedTransform is Stan's (mu1 = x1, mu2 = mu1 + exp x2)
            mu = numpyro.sample("mu", flat(constraints.ordered_vector, (), (2,)))
            numpyro.factor("mu_prior", dist.Normal(0.0, 2.0).log_prob(mu).sum())
            sigma = numpyro.sample("sigma", dist.HalfNormal(2.0).expand([2]).to_event(1))
            theta = numpyro.sample("theta", dist.Beta(5.0, 5.0))
            y = d["y"]
            lp1 = jnp.log(theta) + dist.Normal(mu[0], sigma[0]).log_prob(y)
            lp2 = jnp.log1p(-theta) + dist.Normal(mu[1], sigma[1]).log_prob(y)
            numpyro.factor("log_mix", jnp.logaddexp(lp1, lp2).sum())
        return model, {"y": vec(raw["y"])}

    def hmm_example(raw):
        K = raw["K"]
        assert K == 2, "the reference (and the priors on mu[1], mu[2]) are for K = 2"

        def model(d):
            # simplex[K] with no prior statement: flat on the simplex, i.e. Dirichlet(1, ..., 1)
            # (constant density); numpyro's stick-breaking transform is Stan's.
            theta1 = numpyro.sample("theta1", dist.Dirichlet(jnp.ones(K)))
            theta2 = numpyro.sample("theta2", dist.Dirichlet(jnp.ones(K)))
            # positive_ordered[K] mu with Stan's transform (mu_1 = exp x_1, mu_k = mu_{k-1} +
            # exp x_k, log-Jacobian sum x) rather than numpyro's exp(ordered), which has the
            # same posterior on mu but another unconstrained geometry.
            mu_raw = numpyro.sample("mu_unconstrained", flat(constraints.real_vector, (), (K,)))
            numpyro.factor("mu_log_jacobian", mu_raw.sum())
            mu = numpyro.deterministic("mu", jnp.cumsum(jnp.exp(mu_raw)))
            numpyro.factor("mu_prior", dist.Normal(3.0, 1.0).log_prob(mu[0])
                           + dist.Normal(10.0, 1.0).log_prob(mu[1]))
            y = d["y"]
            log_theta = jnp.log(jnp.stack([theta1, theta2]))     # [j, k]: from j to k
            emit = dist.Normal(mu[None, :], 1.0).log_prob(y[:, None])   # [t, k]

            def forward(gamma_prev, emit_t):
                acc = gamma_prev[:, None] + log_theta + emit_t[None, :]
                gamma = jax.scipy.special.logsumexp(acc, axis=0)
                return gamma, None
            gamma_N, _ = lax.scan(forward, emit[0], emit[1:])
            numpyro.factor("forward", jax.scipy.special.logsumexp(gamma_N))
        return model, {"y": vec(raw["y"])}

    def diamonds(raw):
        X = np.asarray(raw["X"], dtype=np.float64)
        Xc = X[:, 1:] - X[:, 1:].mean(axis=0)      # brms's centred design without intercept
        Kc = Xc.shape[1]

        def model(d):
            b = numpyro.sample("b", dist.Normal(0.0, 1.0).expand([Kc]).to_event(1))
            intercept = numpyro.sample("Intercept", dist.StudentT(3.0, 8.0, 10.0))
            # student_t(3, 0, 10) truncated to sigma > 0: the truncation constant
            # (student_t_lccdf(0 | 3, 0, 10) = log 1/2) does not depend on the parameters.
            sigma = numpyro.sample("sigma", flat(constraints.positive, (), ()))
            numpyro.factor("sigma_prior", dist.StudentT(3.0, 0.0, 10.0).log_prob(sigma))
            mu = intercept + d["Xc"] @ b
            numpyro.sample("Y", dist.Normal(mu, sigma).to_event(1), obs=d["Y"])
        return model, {"Xc": vec(Xc), "Y": vec(raw["Y"])}

    def blr(raw):
        D = raw["D"]

        def model(d):
            beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([D]).to_event(1))
            sigma = numpyro.sample("sigma", dist.HalfNormal(10.0))   # normal(0, 10), sigma > 0
            numpyro.sample("y", dist.Normal(d["X"] @ beta, sigma).to_event(1), obs=d["y"])
        return model, {"X": vec(raw["X"]), "y": vec(raw["y"])}

    def kilpisjarvi(raw):
        p = {k: float(raw[k]) for k in ("pmualpha", "psalpha", "pmubeta", "psbeta")}

        def model(d):
            alpha = numpyro.sample("alpha", dist.Normal(p["pmualpha"], p["psalpha"]))
            beta = numpyro.sample("beta", dist.Normal(p["pmubeta"], p["psbeta"]))
            sigma = numpyro.sample("sigma", flat(constraints.positive, (), ()))
            numpyro.sample("y", dist.Normal(alpha + beta * d["x"], sigma).to_event(1),
                           obs=d["y"])
        return model, {"x": vec(raw["x"]), "y": vec(raw["y"])}

    def nes(raw):
        age = np.asarray(raw["age_discrete"])
        cols = [raw["real_ideo"], raw["race_adj"], age == 2, age == 3, age == 4,
                raw["educ1"], raw["gender"], raw["income"]]
        X = np.stack([np.asarray(c, dtype=np.float64) for c in cols], axis=1)

        def model(d):
            beta = numpyro.sample("beta", flat(constraints.real_vector, (), (9,)))
            sigma = numpyro.sample("sigma", flat(constraints.positive, (), ()))
            mu = beta[0] + d["X"] @ beta[1:]
            numpyro.sample("partyid7", dist.Normal(mu, sigma).to_event(1), obs=d["partyid7"])
        return model, {"X": vec(X), "partyid7": vec(raw["partyid7"])}

    def one_comp_mm_elim_abs(raw):
        from jax.experimental.ode import odeint
        D, V, t0 = float(raw["D"]), float(raw["V"]), float(raw["t0"])
        times = np.asarray(raw["times"], dtype=np.float64)
        assert np.all(times > t0)

        def rhs(y, t, k_a, K_m, V_m):
            dose = jnp.where(t > 0, jnp.exp(-k_a * t) * D * k_a / V, 0.0)
            elim = (V_m / V) * y / (K_m + y)
            return dose - elim

        def model(d):
            k_a = numpyro.sample("k_a", dist.HalfCauchy(1.0))
            K_m = numpyro.sample("K_m", dist.HalfCauchy(1.0))
            V_m = numpyro.sample("V_m", dist.HalfCauchy(1.0))
            sigma = numpyro.sample("sigma", dist.HalfCauchy(1.0))
            y0 = jnp.zeros((1,), dtype=d["t"].dtype)              # C0 = {0.0}
            C = odeint(rhs, y0, d["t"], k_a, K_m, V_m, rtol=ODE_RTOL, atol=ODE_ATOL,
                       mxstep=ODE_MXSTEP)[1:, 0]                 # drop t0
            numpyro.sample("C_hat", dist.LogNormal(jnp.log(C), sigma).to_event(1),
                           obs=d["C_hat"])
        return model, {"t": vec(np.concatenate([[t0], times])), "C_hat": vec(raw["C_hat"])}

    return {
        "eight_schools-eight_schools_noncentered": eight_schools,
        "arK-arK": arK,
        "arma-arma11": arma11,
        "garch-garch11": garch11,
        "gp_pois_regr-gp_pois_regr": gp_pois_regr,
        "kidiq-kidscore_momhsiq": kidiq,
        "earnings-logearn_interaction_z": earnings,
        "mesquite-logmesquite_logvash": mesquite,
        "low_dim_gauss_mix-low_dim_gauss_mix": low_dim_gauss_mix,
        "hmm_example-hmm_example": hmm_example,
        "diamonds-diamonds": diamonds,
        "sblrc-blr": blr,
        "kilpisjarvi_mod-kilpisjarvi": kilpisjarvi,
        "nes1992-nes": nes,
        "one_comp_mm_elim_abs-one_comp_mm_elim_abs": one_comp_mm_elim_abs,
    }


# --------------------------------------------------------------------------------------------
# Diagnostics: rank-normalised split-R-hat and bulk ESS (Vehtari, Gelman, Simpson, Carpenter
# and Buerkner 2021), as ArviZ and Stan compute them; used when ArviZ is not installed.
# --------------------------------------------------------------------------------------------

def _split_chains(x):
    """(chains, draws) -> (2 chains, draws // 2): halves of each chain (middle draw dropped)."""
    import numpy as np
    n = x.shape[1] // 2
    return x if n == 0 else np.concatenate([x[:, :n], x[:, -n:]], axis=0)


def _rank_normalise(x):
    from scipy.special import ndtri
    from scipy.stats import rankdata
    ranks = rankdata(x, method="average").reshape(x.shape)
    return ndtri((ranks - 0.375) / (x.size + 0.25))


def _autocov(x):
    """Biased autocovariance of each row by FFT."""
    import numpy as np
    n = x.shape[1]
    m = 1 << int(math.ceil(math.log2(2 * n)))
    xc = x - x.mean(axis=1, keepdims=True)
    f = np.fft.rfft(xc, n=m, axis=1)
    return np.fft.irfft(f * np.conjugate(f), n=m, axis=1)[:, :n] / n


def _ess(x):
    """ESS of (chains, draws) by Geyer's initial monotone sequence (Stan's, ArviZ's)."""
    import numpy as np
    chains, n = x.shape
    if n < 4 or not np.all(np.isfinite(x)):
        return float("nan")
    acov = _autocov(x)
    mean_var = np.mean(acov[:, 0]) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if chains > 1:
        var_plus += np.var(x.mean(axis=1), ddof=1)
    if var_plus <= 0:
        return float("nan")
    rho = np.zeros(n)
    rho_even, rho_odd = 1.0, 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[0], rho[1] = rho_even, rho_odd
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0.0:
        rho_even = 1.0 - (mean_var - np.mean(acov[:, t + 1])) / var_plus
        rho_odd = 1.0 - (mean_var - np.mean(acov[:, t + 2])) / var_plus
        if rho_even + rho_odd >= 0:
            rho[t + 1], rho[t + 2] = rho_even, rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    t = 1
    while t <= max_t - 2:                       # initial monotone sequence
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = rho[t + 2] = (rho[t - 1] + rho[t]) / 2.0
        t += 2
    size = chains * n
    tau = -1.0 + 2.0 * np.sum(rho[:max_t + 1]) + np.sum(rho[max_t + 1:max_t + 2])
    tau = max(tau, 1.0 / np.log10(size))
    return float(size / tau)


def _split_rhat(x):
    """R-hat of (already split) chains."""
    import numpy as np
    chains, n = x.shape
    between = n * np.var(x.mean(axis=1), ddof=1)
    within = np.mean(np.var(x, axis=1, ddof=1))
    return float(np.sqrt((between / n + within * (n - 1) / n) / within))


def numpy_diagnostics(x):
    """x: (chains, draws) of one scalar. Returns (bulk ESS, rank-normalised R-hat, mcse of
    the mean)."""
    import numpy as np
    x = np.asarray(x, dtype=np.float64)
    if np.ptp(x) == 0 or not np.all(np.isfinite(x)):
        return float("nan"), float("nan"), float("nan")
    ess_bulk = _ess(_rank_normalise(_split_chains(x)))
    rhat_bulk = _split_rhat(_rank_normalise(_split_chains(x)))
    rhat_tail = _split_rhat(_rank_normalise(_split_chains(np.abs(x - np.median(x)))))
    ess_mean = _ess(_split_chains(x))
    mcse = float(np.std(x, ddof=1) / np.sqrt(ess_mean))
    return ess_bulk, max(rhat_bulk, rhat_tail), mcse


def diagnostics(draws, use_arviz):
    """draws: {name: (chains, draws)}. Returns ({name: (ess_bulk, rhat, mcse_mean)}, impl)."""
    import numpy as np
    if use_arviz:
        try:
            warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing")
            import arviz as az
            out = {}
            for name, x in draws.items():
                x = np.asarray(x, dtype=np.float64)
                out[name] = (float(az.ess(x, method="bulk")), float(az.rhat(x)),
                             float(az.mcse(x, method="mean")))
            return out, f"arviz {az.__version__}"
        except ImportError:
            pass
    return ({name: numpy_diagnostics(x) for name, x in draws.items()},
            "numpy (rank-normalised split R-hat, bulk ESS: Vehtari et al. 2021)")


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------

def make_loops(jax, kernel, n_warmup, n_draws):
    """The warm-up loop (collects per-iteration diagnostics only) and the sampling loop
    (collects the unconstrained position too), each one lax.scan over kernel.sample."""
    def step(collect_z):
        def body(carry, _):
            state, data = carry
            state = kernel.sample(state, (data,), {})
            out = {"num_steps": state.num_steps, "diverging": state.diverging,
                   "accept_prob": state.accept_prob}
            if collect_z:
                out["z"] = state.z
            return (state, data), out
        return body

    def warmup(state, data):
        (state, _), out = jax.lax.scan(step(False), (state, data), None, length=n_warmup)
        return state, out

    def sample(state, data):
        (state, _), out = jax.lax.scan(step(True), (state, data), None, length=n_draws)
        return state, out
    return warmup, sample


def block(jax, tree):
    return jax.block_until_ready(tree)


def run_posterior(args, name, jax, jnp, np, numpyro, models):
    from numpyro.infer import NUTS, init_to_uniform

    folder = mp.find_posterior(args, name)
    with open(os.path.join(folder, "data.json")) as f:
        raw = json.load(f)
    reference = mp.read_csv_rows(os.path.join(folder, "reference.csv"))
    model, data = models[name](raw)
    C, W, N = args.chains, args.warmup, args.draws

    def new_kernel():
        # NumPyro's NUTS defaults, spelled out: target_accept_prob=0.8, max_tree_depth=10,
        # dense_mass=False (diagonal), adapt_step_size/adapt_mass_matrix=True.
        return NUTS(model, init_strategy=init_to_uniform(radius=2), target_accept_prob=0.8,
                    max_tree_depth=10, dense_mass=False)

    key = jax.random.PRNGKey(args.seed)
    keys = jax.random.split(key, C)          # what MCMC.run does with one key and C chains
    t_init = time.perf_counter()
    if args.chain_method == "vectorized":
        kernel = new_kernel()
        state = block(jax, kernel.init(keys, W, model_args=(data,)))
        warm_fn, sample_fn = make_loops(jax, kernel, W, N)
        warm_fn, sample_fn = jax.jit(warm_fn), jax.jit(sample_fn)
        states = [state]
    else:
        kernel = new_kernel()
        states = [block(jax, kernel.init(k, W, model_args=(data,))) for k in keys]
        warm_fn, sample_fn = make_loops(jax, kernel, W, N)
        if args.chain_method == "parallel":
            if jax.local_device_count() < C:
                raise RuntimeError(f"chain_method parallel needs {C} devices, "
                                   f"have {jax.local_device_count()}")
            states = [jax.tree.map(lambda *xs: jnp.stack(xs), *states)]
            warm_fn = jax.pmap(warm_fn, in_axes=(0, None))
            sample_fn = jax.pmap(sample_fn, in_axes=(0, None))
        else:
            warm_fn, sample_fn = jax.jit(warm_fn), jax.jit(sample_fn)
    init_seconds = time.perf_counter() - t_init

    # Compile both loops ahead of time (the sampling loop's input state has the warm-up
    # loop's output shapes, which are the initial state's).
    t_compile = time.perf_counter()
    warm_c = warm_fn.lower(states[0], data).compile()
    sample_c = sample_fn.lower(states[0], data).compile()
    compile_seconds = time.perf_counter() - t_compile

    warm_seconds = sample_seconds = 0.0
    warm_out, sample_out, last = [], [], []
    for s in states:                         # one pass (vectorized, parallel) or C (sequential)
        t = time.perf_counter()
        s, wo = block(jax, warm_c(s, data))
        warm_seconds += time.perf_counter() - t
        t = time.perf_counter()
        s, so = block(jax, sample_c(s, data))
        sample_seconds += time.perf_counter() - t
        warm_out.append(wo)
        sample_out.append(so)
        last.append(s)

    def chains_first(outs, field):
        """(chains, iterations, ...) from per-run outputs of (iterations, [chains,] ...)."""
        if args.chain_method == "vectorized":
            return np.swapaxes(np.asarray(outs[0][field]), 0, 1)
        if args.chain_method == "parallel":
            return np.asarray(outs[0][field])   # pmap: (chains, iterations, ...)
        return np.stack([np.asarray(o[field]) for o in outs])

    warm_steps = chains_first(warm_out, "num_steps").astype(np.int64)      # (C, W)
    steps = chains_first(sample_out, "num_steps").astype(np.int64)          # (C, N)
    warm_div = chains_first(warm_out, "diverging")
    div = chains_first(sample_out, "diverging")
    accept = chains_first(sample_out, "accept_prob")

    # Constrained draws and deterministic sites: numpyro's postprocess_fn, vmapped over draws.
    if args.chain_method == "vectorized":
        z = jax.tree.map(lambda a: jnp.swapaxes(a, 0, 1), sample_out[0]["z"])
    elif args.chain_method == "parallel":
        z = sample_out[0]["z"]
    else:
        z = jax.tree.map(lambda *xs: jnp.stack(xs), *[o["z"] for o in sample_out])
    flat_z = jax.tree.map(lambda a: a.reshape((C * N,) + a.shape[2:]), z)
    constrain = jax.jit(jax.vmap(kernel.postprocess_fn((data,), {})))
    values = {k: np.asarray(v).reshape((C, N) + v.shape[1:])
              for k, v in constrain(flat_z).items()}

    draws = {}
    for site, v in values.items():
        if v.ndim == 2:
            draws[site] = v
        else:
            flat_v = v.reshape(C, N, -1)
            for i in range(flat_v.shape[2]):
                idx = np.unravel_index(i, v.shape[2:])
                draws[f"{site}[{','.join(str(j + 1) for j in idx)}]"] = flat_v[:, :, i]
    missing = [v for v in reference if v not in draws]
    if missing:
        raise KeyError(f"{name}: the model records no {missing} (has {sorted(draws)})")
    draws = {v: draws[v] for v in reference}          # reference.csv's variables, its order

    diag, diag_impl = diagnostics(draws, use_arviz=not args.no_arviz)
    variables = {}
    for v, x in draws.items():
        ess_bulk, rhat, mcse = diag[v]
        ref = reference[v]
        mean, sd = float(np.mean(x)), float(np.std(x, ddof=1))
        zscore = abs(mean - ref["mean"]) / math.sqrt(mcse ** 2 + ref["mcse_mean"] ** 2)
        q5, q50, q95 = (float(q) for q in np.quantile(x, [0.05, 0.5, 0.95]))
        variables[v] = {"mean": mean, "sd": sd, "q5": q5, "q50": q50, "q95": q95,
                        "ess_bulk": ess_bulk, "rhat": rhat, "mcse_mean": mcse,
                        "ref_mean": ref["mean"], "ref_sd": ref["sd"],
                        "ref_mcse_mean": ref["mcse_mean"], "ref_q5": ref.get("q5"),
                        "ref_q50": ref.get("q50"), "ref_q95": ref.get("q95"), "z": zscore}
    if args.save_draws:
        os.makedirs(args.save_draws, exist_ok=True)
        np.save(os.path.join(args.save_draws, f"{name}.npy"),        # reference_draws.npy's
                np.stack([draws[v] for v in draws], axis=-1))         # layout: C x N x vars

    grads_warm, grads_sample = int(warm_steps.sum()), int(steps.sum())
    grads = grads_warm + grads_sample
    # Vectorised NUTS builds all chains' trees in lock step: an iteration costs the longest
    # trajectory of the C chains, for every chain (masked lanes still compute).
    lockstep = int(C * (warm_steps.max(axis=0).sum() + steps.max(axis=0).sum()))
    seconds = warm_seconds + sample_seconds
    ess = np.array([variables[v]["ess_bulk"] for v in variables], dtype=np.float64)
    min_ess = float(np.nanmin(ess)) if np.any(np.isfinite(ess)) else float("nan")
    depth = np.floor(np.log2(np.maximum(steps, 1))).astype(int) + 1       # numpyro's formula
    step_size = np.concatenate([np.asarray(s.adapt_state.step_size).reshape(-1) for s in last])
    dim = int(sum(np.prod(np.shape(a)[1:] if args.chain_method != "sequential"
                          else np.shape(a)) for a in jax.tree.leaves(states[0].z)))
    zs = [variables[v]["z"] for v in variables]
    return {
        "posterior": name,
        "library": "numpyro",
        "sampler": "NUTS",
        "versions": versions(jax, numpyro, np),
        "device": str(jax.devices()[0]),
        "devices": [str(d) for d in jax.devices()],
        "platform": jax.devices()[0].platform,
        "precision": args.precision,
        "chain_method": args.chain_method,
        "chains": C,
        "warmup": W,
        "draws": N,
        "seed": args.seed,
        "dim": dim,
        "settings": {"target_accept_prob": 0.8, "max_tree_depth": 10, "mass_matrix": "diagonal",
                     "init": "init_to_uniform(radius=2): uniform(-2, 2) unconstrained"},
        "wall_seconds": seconds,
        "wall_seconds_warmup": warm_seconds,
        "wall_seconds_sampling": sample_seconds,
        "compile_seconds": compile_seconds,
        "init_seconds": init_seconds,
        "timing": "warm-up + sampling: two compiled lax.scan loops (AOT, compile excluded), "
                  "wall clock to block_until_ready; init (kernel.init) and compile reported "
                  "apart; sequential: summed over chains",
        "gradient_evaluations": grads,
        "gradient_evaluations_warmup": grads_warm,
        "gradient_evaluations_sampling": grads_sample,
        "gradient_evaluations_lockstep": lockstep,
        "divergences": int(np.sum(div)),
        "divergences_warmup": int(np.sum(warm_div)),
        "accept_prob_mean": float(np.mean(accept)),
        "step_size": {"median": float(np.median(step_size)), "min": float(step_size.min()),
                      "max": float(step_size.max())},
        "tree_depth_mean": float(depth.mean()),
        "max_tree_depth_fraction": float(np.mean(steps >= 2 ** 10 - 1)),
        "diagnostics": diag_impl,
        "variables": variables,
        "max_abs_z": float(np.nanmax(zs)),
        "max_rhat": float(np.nanmax([variables[v]["rhat"] for v in variables])),
        "min_ess_bulk": min_ess,
        "min_ess_bulk_per_second": min_ess / seconds if seconds > 0 else float("nan"),
        "min_ess_bulk_per_gradient": min_ess / grads if grads > 0 else float("nan"),
        "min_ess_bulk_per_sampling_gradient": (min_ess / grads_sample if grads_sample > 0
                                               else float("nan")),
    }


def versions(jax, numpyro, np):
    import jaxlib
    out = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
           "numpyro": numpyro.__version__, "numpy": np.__version__,
           "python": sys.version.split()[0]}
    try:
        import arviz
        out["arviz"] = arviz.__version__
    except ImportError:
        pass
    return out


def main(argv=None):
    args = parse_args(argv)
    # Platform and host devices must be fixed before JAX initialises its backends.
    os.environ.setdefault("JAX_PLATFORMS", "cpu" if args.platform == "cpu" else "cuda")
    if args.platform == "cpu" and args.chain_method == "parallel":
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_force_host_platform_device_count" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_force_host_platform_device_count="
                                       f"{args.chains}").strip()
    import jax
    if args.precision == "f64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    platform = jax.devices()[0].platform
    if (args.platform == "gpu") != (platform == "gpu"):
        print(f"asked for {args.platform}, JAX runs on {jax.devices()}", file=sys.stderr)
        return 2
    models = build_models(jax, jnp, np, numpyro, dist, constraints)
    if os.path.dirname(args.out):
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
    failures = 0
    for name in args.posteriors:
        print(f"[numpyro_posteriordb] {name}: {args.chains} chains ({args.chain_method}), "
              f"{args.warmup} + {args.draws}, {args.precision}, {jax.devices()[0]}",
              file=sys.stderr, flush=True)
        try:
            line = run_posterior(args, name, jax, jnp, np, numpyro, models)
        except Exception as error:  # keep going: one broken posterior should not stop a run
            failures += 1
            line = {"posterior": name, "library": "numpyro", "chains": args.chains,
                    "warmup": args.warmup, "draws": args.draws,
                    "chain_method": args.chain_method, "device": str(jax.devices()[0]),
                    "error": f"{type(error).__name__}: {error}"[:2000]}
            print(f"  ERROR {line['error']}", file=sys.stderr, flush=True)
        else:
            print(f"  {line['wall_seconds']:.2f} s (+{line['compile_seconds']:.1f} s compile), "
                  f"{line['gradient_evaluations']} gradients, "
                  f"{line['divergences']} divergences, max |z| {line['max_abs_z']:.2f}, "
                  f"max R-hat {line['max_rhat']:.3f}, min bulk ESS {line['min_ess_bulk']:.0f} "
                  f"({line['min_ess_bulk_per_second']:.1f}/s, "
                  f"{1000 * line['min_ess_bulk_per_gradient']:.3f}/1000 gradients)",
                  file=sys.stderr, flush=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
