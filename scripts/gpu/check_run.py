#!/usr/bin/env python3
"""Checks one `myriad` run directory against the exact answers its model knows.

Usage:
  check_run.py sample DIR   HMC or constrained HMC: every recorded quantity's mean and second
                            moment against run.json's `exact` (mean, sd), and max R-hat
  check_run.py ais DIR      log Z against log_z_exact
  check_run.py temper DIR   tempering: log Z against log_z_exact, the target means against the
                            exact posterior and the base check (run.json's exact_posterior_check
                            and base_check), no dropped samples
  check_run.py mpis DIR     P-hat / P against 1 over the runs, and the posterior means against
                            the exact posterior (run.json's exact_posterior_check)
  check_run.py runs DIR     a model without an exact answer (the GP probit on its full data):
                            every draw finite, some proposals accepted, at most 1% of the
                            sampling transitions failing; its agreement with the CPU is
                            tests/cuda's, this only shows it runs

Prints one line, `PASS ...` or `FAIL ...`, and exits 0 or 1 (2 for a run directory it cannot
read). Python's standard library only: it runs on the GPU machine's image and here alike.

Tolerances (the same k = 5 as tests/stat/posterior_check.hpp; a false alarm has probability
about 6e-7 per comparison when the estimator is normal):
  sample  chains are independent after warm-up, so each chain's average of x and of x^2 is one
          independent draw of a quantity whose mean is the exact moment; their standard error is
          the spread across chains over sqrt(chains), with no autocorrelation estimate needed.
          |estimate - exact| <= 5 se for E[x] and E[x^2] = sd^2 + mean^2; max R-hat <= 1.01.
  ais     |log Z-hat - log Z| <= 5 log_z_se (the delta-method standard error over particles).
  temper  |log Z-hat - log Z| <= 4 log_z_se (the issue's bound; ratio estimators, se over
          chains), every target mean within 5 se, the base check under 5 se.
  mpis    P-hat is unbiased (mpis.md section 2.2): w_r = exp(log P-hat_r - log P) has mean 1, so
          |mean(w) - 1| <= 5 sd(w)/sqrt(runs); and every posterior mean within 5 MCSE of exact.
"""

import ast
import csv
import json
import math
import os
import struct
import sys
from array import array

K_SIGMA = 5.0
MAX_RHAT = 1.01


class Unreadable(Exception):
    pass


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise Unreadable(f"{path}: {error}") from error


def load_npy(path):
    """(shape, array('d')) of a little-endian float64, C-ordered .npy file."""
    try:
        with open(path, "rb") as f:
            if f.read(6) != b"\x93NUMPY":
                raise Unreadable(f"{path}: not an .npy file")
            major = f.read(2)[0]
            length_format = "<H" if major == 1 else "<I"
            (header_length,) = struct.unpack(length_format, f.read(struct.calcsize(length_format)))
            header = ast.literal_eval(f.read(header_length).decode("latin1"))
            if header["descr"] != "<f8" or header["fortran_order"]:
                raise Unreadable(f"{path}: expected C-ordered '<f8', found {header}")
            values = array("d")
            values.frombytes(f.read())
    except (OSError, ValueError, KeyError, IndexError, struct.error) as error:
        raise Unreadable(f"{path}: {error}") from error
    shape = tuple(header["shape"])
    if math.prod(shape) != len(values):
        raise Unreadable(f"{path}: shape {shape} but {len(values)} values")
    if sys.byteorder != "little":
        values.byteswap()
    return shape, values


def quantity_names(path):
    try:
        with open(path, newline="") as f:
            return [row["variable"] for row in csv.DictReader(f)]
    except (OSError, KeyError) as error:
        raise Unreadable(f"{path}: {error}") from error


def fmt_number(value):
    return "none" if value is None else f"{value:.2f}"


def require_within(problems, value, limit, problem):
    """Adds `problem` unless value is at most limit: a value the run did not record (None) or
    could not compute (NaN) fails too."""
    if value is None or not value <= limit:
        problems.append(problem)


def require_no_failures(problems, report, counter, problem):
    """Adds "<count> <problem>" when run.json's failures count any under `counter`."""
    count = (report.get("failures") or {}).get(counter)
    if count:
        problems.append(f"{count} {problem}")


def mean_and_se(values):
    """Mean of independent values and its standard error."""
    n = len(values)
    mean = math.fsum(values) / n
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


def check_sample(run_dir):
    report = load_report(run_dir, "exact")
    exact = report["exact"]
    (chains, draws, quantities), values = load_npy(os.path.join(run_dir, "draws.npy"))
    names = quantity_names(os.path.join(run_dir, "summary.csv"))
    if len(names) != quantities:
        raise Unreadable(f"summary.csv names {len(names)} quantities, draws.npy has {quantities}")
    if chains < 32:
        raise Unreadable(f"{chains} chains: too few for a between-chain standard error")
    problems, worst_z, compared = [], 0.0, 0
    for q, name in enumerate(names):
        if name not in exact:
            continue
        compared += 1
        first, second = [], []
        for c in range(chains):
            # A chain's draws of quantity q: every `quantities`-th value of its block.
            block = values[(c * draws) * quantities + q:((c + 1) * draws) * quantities:quantities]
            first.append(math.fsum(block) / draws)
            second.append(math.fsum(v * v for v in block) / draws)
        mean, sd = exact[name]["mean"], exact[name]["sd"]
        second_moment = sd * sd + mean * mean
        for label, moment, target in (("E[x]", first, mean), ("E[x^2]", second, second_moment)):
            estimate, se = mean_and_se(moment)
            z = abs(estimate - target) / se if se > 0 else math.inf
            worst_z = max(worst_z, z)
            if not z <= K_SIGMA:
                problems.append(f"{label} of {name}: {estimate:.5g} vs exact {target:.5g} "
                                f"({z:.1f} se)")
    if compared == 0:
        raise Unreadable("no recorded quantity has an exact moment")
    max_rhat = (report.get("diagnostics") or {}).get("max_rhat")
    require_within(problems, max_rhat, MAX_RHAT, f"max R-hat {max_rhat} (> {MAX_RHAT})")
    failures = report.get("failures") or {}
    counted = ", ".join(f"{k} {v}" for k, v in sorted(failures.items()) if v)
    detail = (f"{report.get('method')} {report.get('model')} on {report.get('device')}: "
              f"{compared} quantities x 2 moments over {chains} chains x {draws} draws, "
              f"max {worst_z:.2f} se (limit {K_SIGMA:g}), max R-hat {max_rhat}"
              f"{'; failures: ' + counted if counted else ''}")
    return problems, detail


def load_report(run_dir, exact_key):
    """run.json of a run whose model knows its exact answer under exact_key."""
    report = load_json(os.path.join(run_dir, "run.json"))
    if exact_key not in report:
        raise Unreadable(f"{run_dir}/run.json has no {exact_key} (model {report.get('model')})")
    return report


def check_ais(run_dir):
    report = load_report(run_dir, "log_z_exact")
    log_z, se, exact = report["log_z"], report["log_z_se"], report["log_z_exact"]
    z = abs(log_z - exact) / se if se and se > 0 else math.inf
    problems = [] if z <= K_SIGMA else [f"log Z {log_z:.6g} vs exact {exact:.6g} ({z:.1f} se)"]
    detail = (f"ais {report.get('model')} on {report.get('device')}: "
              f"log Z {log_z:.6g} +- {se:.2g}, "
              f"exact {exact:.6g} ({z:.2f} se, limit {K_SIGMA:g}), ess {report.get('ess')}")
    return problems, detail


def check_temper(run_dir):
    report = load_report(run_dir, "log_z_exact")
    log_z, se, exact = report["log_z"], report["log_z_se"], report["log_z_exact"]
    z = abs(log_z - exact) / se if se and se > 0 else math.inf
    problems = [] if z <= 4.0 else [f"log Z {log_z:.6g} vs exact {exact:.6g} ({z:.1f} se)"]
    posterior_z = (report.get("exact_posterior_check") or {}).get("max_error_in_mcse")
    require_within(problems, posterior_z, K_SIGMA, f"target means: max error {posterior_z} se")
    base_z = (report.get("base_check") or {}).get("max_error_in_se")
    require_within(problems, base_z, K_SIGMA, f"base check: max error {base_z} se")
    require_no_failures(problems, report, "dropped_samples", "dropped samples")
    detail = (f"temper {report.get('method')} {report.get('model')} on {report.get('device')}: "
              f"log Z {log_z:.6g} +- {se:.2g}, exact {exact:.6g} ({z:.2f} se, limit 4), means "
              f"max {fmt_number(posterior_z)} se, base check {fmt_number(base_z)} se, beta R-hat "
              f"{fmt_number(report.get('beta_rhat'))}, "
              f"{fmt_number(report.get('chain_iterations_per_second'))} chain-iterations/s")
    return problems, detail


def check_mpis(run_dir):
    report = load_report(run_dir, "log_marginal_exact")
    exact = report["log_marginal_exact"]
    per_run = report["log_marginal"]["per_run"]
    if len(per_run) < 10:
        raise Unreadable(f"{len(per_run)} runs: too few for a standard error over runs")
    ratio, se = mean_and_se([math.exp(v - exact) for v in per_run])
    z = abs(ratio - 1.0) / se if se > 0 else math.inf
    problems = [] if z <= K_SIGMA else [f"mean P-hat/P {ratio:.5g} ({z:.1f} se from 1)"]
    check = report.get("exact_posterior_check") or {}
    posterior_z = check.get("max_error_in_mcse")
    require_within(problems, posterior_z, K_SIGMA, f"posterior means: max error {posterior_z} MCSE")
    require_no_failures(problems, report, "failed_runs", "failed runs")
    detail = (f"mpis {report.get('model')} K={report['settings']['k']} on {report.get('device')}: "
              f"mean P-hat/P {ratio:.4f} +- {se:.2g} over {len(per_run)} runs ({z:.2f} se), "
              f"posterior means max {fmt_number(posterior_z)} MCSE over {check.get('quantities')} "
              f"quantities, {report.get('seconds_per_run'):.3g} s per run")
    return problems, detail


def check_runs(run_dir):
    report = load_json(os.path.join(run_dir, "run.json"))
    (chains, draws, quantities), values = load_npy(os.path.join(run_dir, "draws.npy"))
    problems = []
    not_finite = sum(1 for v in values if not math.isfinite(v))
    if not_finite:
        problems.append(f"{not_finite} draws not finite")
    acceptance = report.get("acceptance")
    if acceptance is None or not 0 < acceptance <= 1:
        problems.append(f"acceptance {acceptance}")
    # An estimator may fail at a wild proposal (the GP probit's factorisation of an
    # ill-conditioned covariance): counted, and a rejection. More than 1% of the sampling
    # transitions failing is not that.
    failures = report.get("failures") or {}
    failed = sum(v for k, v in failures.items() if not k.startswith("warmup_") and v)
    if failed > 0.01 * chains * draws:
        problems.append(f"failures: " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())
                                                  if v and not k.startswith("warmup_")))
    sampling = (report.get("wall_time") or {}).get("sampling_seconds")
    detail = (f"{report.get('method')} {report.get('model')} on {report.get('device')}: "
              f"{chains} chains x {draws} draws x {quantities} quantities, acceptance "
              f"{fmt_number(acceptance)}, {failed} failed, max R-hat "
              f"{fmt_number((report.get('diagnostics') or {}).get('max_rhat'))}, sampling "
              f"{fmt_number(sampling)} s")
    return problems, detail


def main(argv):
    checks = {"sample": check_sample, "ais": check_ais, "temper": check_temper,
              "mpis": check_mpis, "runs": check_runs}
    if len(argv) != 3 or argv[1] not in checks:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        problems, detail = checks[argv[1]](argv[2])
    except Unreadable as error:
        print(f"FAIL {argv[1]} {argv[2]}: {error}")
        return 2
    if problems:
        print(f"FAIL {detail}; " + "; ".join(problems))
        return 1
    print(f"PASS {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
