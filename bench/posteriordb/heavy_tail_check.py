#!/usr/bin/env python3
"""How far the normal approximation of the sd's standard error holds, per flagged variable.

The z-score of the sd in myriad_posteriordb.py and report.py uses se_sd ~= sd*sqrt(1/(2*ESS)),
exact for normal draws. For a variable with kurtosis k (not excess) the large-sample standard
error of a sample sd is se_sd ~= (sd/2)*sqrt((k - 1)/ESS) (the normal case, k = 3, gives the
formula above). This script takes every variable whose |z| of the sd exceeds --limit in either
JSON-lines file, estimates k from posteriordb's reference draws (reference_draws.npy, 10 chains
x 1000 draws of Stan; not in tests/data, found in ../shared/posteriordb), and prints:
  - the reference's kurtosis and its sd's standard error three ways: from the spread of the
    10 chains' sds (empirical, sd of the chain sds / sqrt(10)), normal, and kurtosis-aware;
  - for each library, |z| of the sd with the normal and with the kurtosis-aware standard error
    (the reference's k on both sides), and |z| of the mean, the quantiles against the reference's.

Needs numpy.  Usage:
  python bench/posteriordb/heavy_tail_check.py [--limit 4] [--posteriordb DIR]
      [--myriad bench/results/posteriordb-myriad-cpu.jsonl]
      [--numpyro bench/results/posteriordb-numpyro-cpu.jsonl]
"""

import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import myriad_posteriordb as mp  # noqa: E402
import report  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    res = os.path.join(REPO, "bench", "results")
    p.add_argument("--myriad", default=os.path.join(res, "posteriordb-myriad-cpu.jsonl"))
    p.add_argument("--numpyro", default=os.path.join(res, "posteriordb-numpyro-cpu.jsonl"))
    p.add_argument("--posteriordb", default=None, metavar="DIR",
                   help="where reference_draws.npy is (default: ../shared/posteriordb, "
                        "then <repo>/shared/posteriordb)")
    p.add_argument("--limit", type=float, default=4.0)
    args = p.parse_args(argv)
    bases = ([args.posteriordb] if args.posteriordb else
             [os.path.join(os.path.dirname(REPO), "shared", "posteriordb"),
              os.path.join(REPO, "shared", "posteriordb")])
    libs = {"myriad": report.read_jsonl(args.myriad), "NumPyro": report.read_jsonl(args.numpyro)}
    ns = argparse.Namespace(posteriordb=None)
    for rec in libs["NumPyro"].values():
        report.add_numpyro_z_sd(rec, ns)
    flagged = {}
    for recs in libs.values():
        for name, rec in recs.items():
            for v, x in rec.get("variables", {}).items():
                if report.fin(x.get("z_sd")) and x["z_sd"] > args.limit:
                    flagged.setdefault(name, set()).add(v)
    if not flagged:
        print(f"no variable has |z| of the sd above {args.limit}")
        return 0
    for name in mp.POSTERIORS:
        if name not in flagged:
            continue
        folder = next((os.path.join(b, name) for b in bases
                       if os.path.isfile(os.path.join(b, name, "reference_draws.npy"))), None)
        ref_rows = mp.read_csv_rows(os.path.join(mp.find_posterior(ns, name), "reference.csv"))
        if folder is None:
            print(f"{name}: no reference_draws.npy under {bases}")
            continue
        draws = np.load(os.path.join(folder, "reference_draws.npy"))   # chains x draws x vars
        order = list(ref_rows)
        print(f"{name} (reference draws {draws.shape[0]} x {draws.shape[1]})")
        for v in order:
            if v not in flagged[name]:
                continue
            x = draws[:, :, order.index(v)]
            flat = x.ravel()
            sd = flat.std(ddof=1)
            k = float(np.mean((flat - flat.mean()) ** 4) / sd ** 4)
            ref_ess = ref_rows[v]["ess_bulk"]
            emp = float(x.std(axis=1, ddof=1).std(ddof=1) / math.sqrt(x.shape[0]))
            se_norm = sd * math.sqrt(1 / (2 * ref_ess))
            se_kurt = sd / 2 * math.sqrt((k - 1) / ref_ess)
            print(f"  {v}: kurtosis {k:.1f}, max draw {flat.max():.4g}; the reference sd "
                  f"{sd:.4g} has se {emp:.3g} from its chains' spread, {se_norm:.3g} normal, "
                  f"{se_kurt:.3g} kurtosis-aware")
            for lib, recs in libs.items():
                r = recs.get(name)
                if not r or v not in r.get("variables", {}):
                    continue
                y = r["variables"][v]
                se_lib_k = y["sd"] / 2 * math.sqrt((k - 1) / y["ess_bulk"])
                z_k = abs(y["sd"] - sd) / math.sqrt(se_lib_k ** 2 + se_kurt ** 2)
                zm = y.get("z_mean", y.get("z"))
                print(f"    {lib:8s} sd {y['sd']:.4g}: |z| {y['z_sd']:.1f} normal, {z_k:.1f} "
                      f"kurtosis-aware; mean {y['mean']:.4g} (|z| {zm:.2f}); q5/q50/q95 "
                      f"{y['q5']:.4g}/{y['q50']:.4g}/{y['q95']:.4g} against "
                      f"{y['ref_q5']:.4g}/{y['ref_q50']:.4g}/{y['ref_q95']:.4g}; "
                      f"{r['chains']} chains, ESS {y['ess_bulk']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
