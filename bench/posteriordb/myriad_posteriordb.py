#!/usr/bin/env python3
"""myriad's CLI on the fifteen posteriordb posteriors, checked against their reference draws.

For each posterior (or a --posteriors subset) runs

  myriad sample --model MODEL --data DIR/POSTERIOR/data.json --chains C --warmup W --draws N
                --seed S --output TMP --no-progress --quiet [--myriad-args ...]

reads TMP/summary.csv and TMP/run.json, compares every variable of the posterior's
reference.csv with myriad's summary, and appends one JSON line per posterior to --out
(default bench/results/posteriordb-myriad-cpu.jsonl). A one-line summary per posterior goes to
stderr. Only the standard library is needed (no numpy): everything comes from myriad's own
summary.csv and run.json.

Usage:
  python3 bench/posteriordb/myriad_posteriordb.py [--posteriors NAME ...] [--chains 64]
      [--warmup 1000] [--draws 1000] [--seed 1] [--myriad build-cpu/bin/myriad]
      [--myriad-args "--sampler nuts"] [--posteriordb DIR] [--keep DIR] [--timeout S]
      [--wait-idle S]
      [--out bench/results/posteriordb-myriad-cpu.jsonl]

What each line records (see also bench/posteriordb/README.md):
  wall_seconds             warm-up + sampling, run.json's wall_time.warmup_seconds +
                           sampling_seconds (diagnostics and output excluded; the whole process,
                           start to exit, is process_seconds)
  gradient_evaluations     run.json's total, warm-up included (_warmup, _sampling: the parts)
  min_ess_bulk, min_ess_tail
                           the smallest bulk / tail ESS (myriad's, rank-normalised, Vehtari et al.
                           2021) over the reference's variables, with the variable
  min_ess_bulk_per_second  min_ess_bulk / wall_seconds
  min_ess_bulk_per_1000_gradients
                           1000 * min_ess_bulk / gradient_evaluations (warm-up + sampling)
  max_rhat                 the largest R-hat over the reference's variables, with the variable
  divergences              divergent transitions while sampling (run.json's "divergences");
                           divergences_warmup, non_finite(_warmup) from run.json's "failures"
  warmup_restarts          run.json's warmup.restarts (restarted_chains: how many chains)
  variables                per reference variable: myriad's mean, sd, mcse_mean, q5/q50/q95,
                           ess_bulk, ess_tail, rhat; the reference's ref_*; and
      z_mean = |mean - ref_mean| / sqrt(mcse_mean^2 + ref_mcse_mean^2)
      z_sd   = |sd - ref_sd| / sqrt(se_sd^2 + ref_se_sd^2),
               se_sd ~= sd * sqrt(1 / (2 * ess_bulk)) on each side: the standard error of a
               sample sd from ess_bulk independent normal draws. An approximation: it ignores
               the excess kurtosis (heavy tails make the true se larger, so |z_sd| reads high)
               and uses bulk ESS (the reference gives no other) as the ESS of the variance.
  max_abs_z_mean, max_abs_z_sd
                           the largest over the variables, with the variable (max_abs_z is
                           max_abs_z_mean, the field NumPyro's script uses)

A posterior whose run fails (non-zero exit, timeout, a reference variable missing from
summary.csv) writes a line with an "error" field instead, and the run goes on.
"""

import argparse
import csv
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# posteriordb's names (folder = "<data>-<model>"); myriad's model is the part after the dash.
POSTERIORS = [
    "eight_schools-eight_schools_noncentered",
    "arK-arK",
    "arma-arma11",
    "garch-garch11",
    "gp_pois_regr-gp_pois_regr",
    "kidiq-kidscore_momhsiq",
    "earnings-logearn_interaction_z",
    "mesquite-logmesquite_logvash",
    "low_dim_gauss_mix-low_dim_gauss_mix",
    "hmm_example-hmm_example",
    "diamonds-diamonds",
    "sblrc-blr",
    "kilpisjarvi_mod-kilpisjarvi",
    "nes1992-nes",
    "one_comp_mm_elim_abs-one_comp_mm_elim_abs",
]

BUSY_PATTERN = r"^(ninja|cc1plus|nvcc|ctest|myriad_.*te.*|myriad_bench|cmake|make)$"  # other work


def model_of(posterior):
    return posterior.split("-", 1)[1]


# The options below are numpyro_posteriordb.py's too, so that both libraries' runs are asked for
# the same way and their lines compare.

def add_run_arguments(p, chains):
    """--posteriors, --chains (default `chains`), --warmup, --draws, --seed."""
    p.add_argument("--posteriors", nargs="+", default=POSTERIORS, metavar="NAME",
                   help="posteriordb names, unique prefixes of them, or myriad model names")
    p.add_argument("--chains", type=int, default=chains)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)


def add_posteriordb_argument(p):
    # The help states posteriordb_dirs's search order: keep the two together.
    p.add_argument("--posteriordb", default=None, metavar="DIR",
                   help="folder of the posterior folders (default: the first of "
                        "$MYRIAD_POSTERIORDB, <repo>/tests/data/posteriordb, "
                        "<repo>/shared/posteriordb, <repo>/../shared/posteriordb that holds "
                        "the posterior)")


def resolve_posteriors(p, names):
    """The posteriordb name each of `names` stands for; p.error (exit 2) for one that stands for
    none or several."""
    resolved = []
    for name in names:
        hits = ([q for q in POSTERIORS if q == name or model_of(q) == name]
                or [q for q in POSTERIORS if q.startswith(name)])
        if len(hits) != 1:
            p.error(f"unknown or ambiguous posterior {name!r}; choose from {POSTERIORS}")
        resolved.append(hits[0])
    return resolved


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(p, chains=64)
    p.add_argument("--myriad", default=os.path.join(REPO, "build-cpu", "bin", "myriad"),
                   help="the myriad executable (default build-cpu/bin/myriad)")
    p.add_argument("--myriad-args", default="", metavar="ARGS",
                   help="extra options for 'myriad sample', one string (e.g. '--sampler nuts')")
    add_posteriordb_argument(p)
    p.add_argument("--keep", default=None, metavar="DIR",
                   help="keep each run's output folder as DIR/POSTERIOR (default: a temporary "
                        "folder, removed)")
    p.add_argument("--timeout", type=float, default=0, metavar="S",
                   help="stop a posterior's run after S seconds and record that (0: no limit)")
    p.add_argument("--wait-idle", type=float, default=0, metavar="S",
                   help="before each posterior, wait up to S seconds until no build or test "
                        "process (BUSY_PATTERN) has run for 10 s (0: do not wait)")
    p.add_argument("--out", default=os.path.join(REPO, "bench", "results",
                                                 "posteriordb-myriad-cpu.jsonl"),
                   metavar="FILE.jsonl", help="JSON lines appended here")
    args = p.parse_args(argv)
    args.posteriors = resolve_posteriors(p, args.posteriors)
    return args


def posteriordb_dirs(args):
    if args.posteriordb:
        return [args.posteriordb]
    dirs = []
    if os.environ.get("MYRIAD_POSTERIORDB"):
        dirs.append(os.environ["MYRIAD_POSTERIORDB"])
    return dirs + [os.path.join(REPO, "tests", "data", "posteriordb"),
                   os.path.join(REPO, "shared", "posteriordb"),
                   os.path.join(os.path.dirname(REPO), "shared", "posteriordb")]


def find_posterior(args, name):
    for base in posteriordb_dirs(args):
        folder = os.path.join(base, name)
        if all(os.path.isfile(os.path.join(folder, f)) for f in ("data.json", "reference.csv")):
            return folder
    raise FileNotFoundError(f"{name}: no data.json + reference.csv under any of "
                            f"{posteriordb_dirs(args)}")


def read_csv_rows(path):
    """{variable: {column: float}} from a csv whose first column is the variable's name."""
    rows = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        for cells in reader:
            if len(cells) == len(header):
                rows[cells[0]] = {h: float(c) for h, c in zip(header[1:], cells[1:])}
    return rows


def finite(x):
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def z_mean(m, mcse, ref_m, ref_mcse):
    den = math.sqrt(mcse ** 2 + ref_mcse ** 2)
    return abs(m - ref_m) / den if den > 0 else float("nan")


def se_sd(sd, ess):
    """Standard error of a sample sd from ess independent normal draws (an approximation)."""
    return sd * math.sqrt(1.0 / (2.0 * ess)) if finite(ess) and ess > 0 else float("nan")


def z_sd(sd, ess, ref_sd, ref_ess):
    den = math.sqrt(se_sd(sd, ess) ** 2 + se_sd(ref_sd, ref_ess) ** 2)
    return abs(sd - ref_sd) / den if den > 0 else float("nan")


def arg_extreme(values, largest):
    """(value, key) of the largest/smallest finite value; (nan, None) if none."""
    best = (float("nan"), None)
    for k, v in values.items():
        if finite(v) and (best[1] is None or (v > best[0] if largest else v < best[0])):
            best = (v, k)
    return best


def busy_processes():
    """Names of running processes (ps's comm, 15 characters) that match BUSY_PATTERN."""
    try:
        out = subprocess.run(["ps", "-eo", "comm="], capture_output=True, text=True).stdout
    except OSError:
        return ["(ps unavailable)"]
    return sorted(set(n.strip() for n in out.splitlines() if re.search(BUSY_PATTERN, n.strip())))


def wait_idle(limit):
    """Waits (at most limit seconds) until no BUSY_PATTERN process has run for 10 s.
    Returns the seconds waited."""
    t0 = time.monotonic()
    quiet_since = None
    while time.monotonic() - t0 < limit:
        if busy_processes():
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= 10:
            break
        time.sleep(2)
    return time.monotonic() - t0


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except OSError:
        return float("nan")


def git_commit():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        return head or None
    except OSError:
        return None


def git_dirty():
    """Whether tracked files differ from HEAD (the binary may hold uncommitted changes)."""
    try:
        out = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True).stdout
        return bool(out.strip())
    except OSError:
        return None


def run_posterior(args, name, outdir):
    folder = find_posterior(args, name)
    reference = read_csv_rows(os.path.join(folder, "reference.csv"))
    data = os.path.relpath(os.path.join(folder, "data.json"), REPO)
    cmd = [args.myriad, "sample", "--model", model_of(name), "--data", data,
           "--chains", str(args.chains), "--warmup", str(args.warmup),
           "--draws", str(args.draws), "--seed", str(args.seed),
           "--output", outdir, "--no-progress", "--quiet"] + shlex.split(args.myriad_args)
    waited = wait_idle(args.wait_idle) if args.wait_idle > 0 else 0.0
    busy_before, load_before = busy_processes(), loadavg()
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          timeout=args.timeout if args.timeout > 0 else None)
    process_seconds = time.perf_counter() - t
    busy_after, load_after = busy_processes(), loadavg()
    shown_cmd = [os.path.relpath(args.myriad, REPO) if os.path.isabs(args.myriad)
                 else args.myriad] + cmd[1:]
    shown_cmd[shown_cmd.index("--output") + 1] = "OUTDIR"
    shown = " ".join(shlex.quote(c) for c in shown_cmd)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-1500:]} [{shown}]")

    summary = read_csv_rows(os.path.join(outdir, "summary.csv"))
    with open(os.path.join(outdir, "run.json")) as f:
        run = json.load(f)
    missing = [v for v in reference if v not in summary]
    if missing:
        raise KeyError(f"{name}: summary.csv has no {missing} (has {sorted(summary)[:20]}...)")

    variables = {}
    for v, ref in reference.items():
        s = summary[v]
        ref_ess = ref.get("ess_bulk", float("nan"))
        variables[v] = {
            "mean": s["mean"], "sd": s["sd"], "mcse_mean": s["mcse_mean"],
            "q5": s.get("q5"), "q50": s.get("q50"), "q95": s.get("q95"),
            "ess_bulk": s["ess_bulk"], "ess_tail": s.get("ess_tail"), "rhat": s["rhat"],
            "ref_mean": ref["mean"], "ref_sd": ref["sd"], "ref_mcse_mean": ref["mcse_mean"],
            "ref_q5": ref.get("q5"), "ref_q50": ref.get("q50"), "ref_q95": ref.get("q95"),
            "ref_ess_bulk": ref_ess,
            "z_mean": z_mean(s["mean"], s["mcse_mean"], ref["mean"], ref["mcse_mean"]),
            "z_sd": z_sd(s["sd"], s["ess_bulk"], ref["sd"], ref_ess),
        }

    wt = run.get("wall_time", {})
    warm_s, samp_s = float(wt.get("warmup_seconds", "nan")), float(wt.get("sampling_seconds",
                                                                            "nan"))
    seconds = warm_s + samp_s
    grads = int(run["gradient_evaluations"])
    warm = run.get("warmup", {})
    samp = run.get("sampling", {})
    failures = run.get("failures", {})
    min_bulk, min_bulk_var = arg_extreme({v: x["ess_bulk"] for v, x in variables.items()}, False)
    min_tail, min_tail_var = arg_extreme({v: x["ess_tail"] for v, x in variables.items()}, False)
    max_rhat, max_rhat_var = arg_extreme({v: x["rhat"] for v, x in variables.items()}, True)
    max_zm, max_zm_var = arg_extreme({v: x["z_mean"] for v, x in variables.items()}, True)
    max_zs, max_zs_var = arg_extreme({v: x["z_sd"] for v, x in variables.items()}, True)
    traj = warm.get("trajectory", {})
    return {
        "posterior": name,
        "model": model_of(name),
        "library": "myriad",
        "sampler": run.get("method"),
        "metric": run.get("metric"),
        "myriad_version": run.get("myriad_version"),
        "commit": git_commit(),
        "git_dirty": git_dirty(),
        "myriad_mtime": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                      time.gmtime(os.path.getmtime(args.myriad))),
        "device": run.get("device"),
        "command": shown,
        "driver_argv": sys.argv[1:],
        "output_dir": outdir if args.keep else None,
        "chains": args.chains, "warmup": args.warmup, "draws": args.draws, "seed": args.seed,
        "settings": run.get("settings"),
        "wall_seconds": seconds,
        "wall_seconds_warmup": warm_s,
        "wall_seconds_sampling": samp_s,
        "process_seconds": process_seconds,
        "timing": "run.json wall_time.warmup_seconds + sampling_seconds; process_seconds: the "
                  "whole CLI process (data loading, diagnostics, output)",
        "gradient_evaluations": grads,
        "gradient_evaluations_warmup": warm.get("gradient_evaluations"),
        "gradient_evaluations_sampling": samp.get("gradient_evaluations"),
        "divergences": int(run.get("divergences", 0)),
        "divergences_warmup": failures.get("warmup_divergent"),
        "non_finite": failures.get("non_finite"),
        "non_finite_warmup": failures.get("warmup_non_finite"),
        "warmup_restarts": warm.get("restarts"),
        "restarted_chains": warm.get("restarted_chains"),
        "stuck_chains": samp.get("stuck_chains"),
        "step_size": run.get("step_size"),
        "acceptance": run.get("acceptance"),
        "trajectory_length": traj.get("length"),
        "mean_leapfrog_steps": traj.get("mean_leapfrog_steps"),
        "max_nested_rhat": run.get("diagnostics", {}).get("max_nested_rhat"),
        "variables": variables,
        "extra_variables": len(summary) - len(reference),
        "min_ess_bulk": min_bulk, "min_ess_bulk_variable": min_bulk_var,
        "min_ess_tail": min_tail, "min_ess_tail_variable": min_tail_var,
        "min_ess_bulk_per_second": min_bulk / seconds if seconds > 0 else float("nan"),
        "min_ess_bulk_per_gradient": min_bulk / grads if grads > 0 else float("nan"),
        "min_ess_bulk_per_1000_gradients": 1000 * min_bulk / grads if grads > 0
        else float("nan"),
        "max_rhat": max_rhat, "max_rhat_variable": max_rhat_var,
        "max_abs_z_mean": max_zm, "max_abs_z_mean_variable": max_zm_var,
        "max_abs_z_sd": max_zs, "max_abs_z_sd_variable": max_zs_var,
        "max_abs_z": max_zm,
        "z_sd_approximation": "se_sd = sd*sqrt(1/(2*ess_bulk)) on each side",
        "busy_processes": sorted(set(busy_before) | set(busy_after)),
        "loadavg_before": load_before, "loadavg_after": load_after,
        "waited_for_idle_seconds": waited,
    }


def main(argv=None):
    args = parse_args(argv)
    if not os.path.isfile(args.myriad):
        print(f"no myriad executable at {args.myriad}", file=sys.stderr)
        return 2
    if os.path.dirname(args.out):
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
    failures = 0
    for name in args.posteriors:
        print(f"[myriad_posteriordb] {name}: {args.chains} chains, {args.warmup} + "
              f"{args.draws}, seed {args.seed} {args.myriad_args}".rstrip(),
              file=sys.stderr, flush=True)
        if args.keep:
            outdir = os.path.join(args.keep, name)
            os.makedirs(outdir, exist_ok=True)
        else:
            outdir = tempfile.mkdtemp(prefix="myriad-posteriordb-")
        try:
            line = run_posterior(args, name, outdir)
        except Exception as error:  # keep going: one broken posterior should not stop a run
            failures += 1
            if isinstance(error, subprocess.TimeoutExpired):
                msg = f"timeout: stopped after {args.timeout:.0f} s"
            else:
                msg = f"{type(error).__name__}: {error}"
            line = {"posterior": name, "model": model_of(name), "library": "myriad",
                    "chains": args.chains, "warmup": args.warmup, "draws": args.draws,
                    "seed": args.seed, "commit": git_commit(), "error": msg[:2000]}
            print(f"  ERROR {line['error']}", file=sys.stderr, flush=True)
        else:
            busy = f", busy: {','.join(line['busy_processes'])}" if line["busy_processes"] else ""
            print(f"  {line['wall_seconds']:.2f} s, {line['gradient_evaluations']} gradients, "
                  f"{line['divergences']} divergences, {line['warmup_restarts']} restarts, "
                  f"max |z| mean {line['max_abs_z_mean']:.2f} ({line['max_abs_z_mean_variable']}), "
                  f"sd {line['max_abs_z_sd']:.2f} ({line['max_abs_z_sd_variable']}), "
                  f"max R-hat {line['max_rhat']:.3f}, min bulk ESS {line['min_ess_bulk']:.0f} "
                  f"({line['min_ess_bulk_per_second']:.1f}/s, "
                  f"{line['min_ess_bulk_per_1000_gradients']:.3f}/1000 gradients){busy}",
                  file=sys.stderr, flush=True)
        finally:
            if not args.keep:
                shutil.rmtree(outdir, ignore_errors=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
