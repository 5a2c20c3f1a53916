#!/usr/bin/env python3
"""Side-by-side report of myriad and NumPyro on the posteriordb posteriors.

Reads the JSON lines of bench/posteriordb/myriad_posteriordb.py and
bench/posteriordb/numpyro_posteriordb.py and writes a markdown file: one table with both
libraries' rows for every posterior, the ratios, each library's details, the posteriors where a
run disagrees with the reference (|z| > 4) or has not converged (R-hat > 1.01), the machine, the
commit, the versions and the commands.

Usage:
  python3 bench/posteriordb/report.py [--myriad bench/results/posteriordb-myriad-cpu.jsonl]
      [--numpyro bench/results/posteriordb-numpyro-cpu.jsonl]
      [--out bench/results/posteriordb-cpu.md] [--notes FILE.md] [--posteriordb DIR]

Where a file holds several lines for one posterior (the scripts append), the last one counts.
NumPyro's lines carry no z-score of the sd; it is computed here, as myriad's script does, from
the line's sd and bulk ESS and the reference's (reference.csv): |sd - sd_ref| /
sqrt(se_sd^2 + se_sd_ref^2), se_sd ~= sd * sqrt(1 / (2 * ess_bulk)) on each side.
Standard library only.
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import myriad_posteriordb as mp  # noqa: E402  (POSTERIORS, reference reading, z-scores)

Z_LIMIT = 4.0
RHAT_LIMIT = 1.01


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    res = os.path.join(REPO, "bench", "results")
    p.add_argument("--myriad", default=os.path.join(res, "posteriordb-myriad-cpu.jsonl"))
    p.add_argument("--numpyro", default=os.path.join(res, "posteriordb-numpyro-cpu.jsonl"))
    p.add_argument("--out", default=os.path.join(res, "posteriordb-cpu.md"))
    p.add_argument("--notes", default=None, metavar="FILE.md",
                   help="markdown put into the report under 'Notes from this run'")
    p.add_argument("--posteriordb", default=None, metavar="DIR",
                   help="where reference.csv is found (as in myriad_posteriordb.py)")
    p.add_argument("--myriad-command", default=None,
                   help="the myriad driver command shown (default: built from the lines)")
    p.add_argument("--numpyro-command", default=None,
                   help="the NumPyro driver command shown (default: built from the lines)")
    p.add_argument("--machine", default=None,
                   help="the machine line (default: lscpu's model name and CPU count here)")
    return p.parse_args(argv)


def read_jsonl(path):
    """{posterior: last line} of a JSON-lines file ({} if it does not exist)."""
    out = {}
    if not os.path.isfile(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rec = json.loads(line)
                out[rec["posterior"]] = rec
    return out


def machine_line():
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown (no lscpu)"
    fields = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            fields.setdefault(k.strip(), v.strip())
    parts = [fields.get("Model name", "unknown CPU")]
    if fields.get("CPU family") and fields.get("Model"):
        parts.append(f"family {fields['CPU family']} model {fields['Model']}")
    parts.append(f"{fields.get('CPU(s)', '?')} CPUs")
    if fields.get("Hypervisor vendor"):
        parts.append(f"{fields['Hypervisor vendor']} guest")
    flags = fields.get("Flags", "").split()
    parts.append("AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2"))
    return ", ".join(parts)


def add_numpyro_z_sd(rec, args):
    """Adds z_sd to each variable of a NumPyro line and max_abs_z_sd(_variable) to the line."""
    if "error" in rec:
        return
    ns = argparse.Namespace(posteriordb=args.posteriordb)
    try:
        folder = mp.find_posterior(ns, rec["posterior"])
        ref = mp.read_csv_rows(os.path.join(folder, "reference.csv"))
    except (FileNotFoundError, OSError):
        ref = {}
    zs, zm = {}, {}
    for v, x in rec.get("variables", {}).items():
        ref_ess = ref.get(v, {}).get("ess_bulk", float("nan"))
        x["z_sd"] = mp.z_sd(x["sd"], x["ess_bulk"], x["ref_sd"], ref_ess)
        zs[v] = x["z_sd"]
        zm[v] = x["z"]
    rec["max_abs_z_sd"], rec["max_abs_z_sd_variable"] = mp.arg_extreme(zs, True)
    rec["max_abs_z_mean"], rec["max_abs_z_mean_variable"] = mp.arg_extreme(zm, True)
    rv = {v: x["rhat"] for v, x in rec.get("variables", {}).items()}
    rec["max_rhat_variable"] = mp.arg_extreme(rv, True)[1]
    ev = {v: x["ess_bulk"] for v, x in rec.get("variables", {}).items()}
    rec["min_ess_bulk_variable"] = mp.arg_extreme(ev, False)[1]
    g = rec.get("gradient_evaluations")
    rec["min_ess_bulk_per_1000_gradients"] = (1000 * rec["min_ess_bulk"] / g if g else
                                              float("nan"))


# ---------------------------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------------------------

def fin(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def num(x, digits=3):
    """A number with `digits` significant figures, without exponent below 1e6."""
    if not fin(x):
        return "—" if x is None else str(x)
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e6:
        return f"{x:.2e}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(a))))
    return f"{x:,.{decimals}f}"


def seconds(x):
    if not fin(x):
        return "—"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def short_var(v):
    return v if v is None or len(v) <= 18 else v[:17] + "…"


def zcell(z, var):
    if not fin(z):
        return "—"
    text = f"{z:.2f} ({short_var(var)})" if var else f"{z:.2f}"
    return f"**{text}**" if z > Z_LIMIT else text


def rhatcell(r):
    if not fin(r):
        return "—"
    return f"**{r:.3f}**" if r > RHAT_LIMIT else f"{r:.3f}"


def main_row(name, lib, rec):
    if rec is None:
        return f"| {name} | {lib} | not run | | | | | | | | | |"
    if "error" in rec:
        err = rec["error"].replace("|", "\\|").replace("\n", " ")
        err = err if len(err) < 160 else err[:157] + "…"
        return (f"| {name} | {lib} | {rec.get('chains')} × {rec.get('draws')} | "
                f"**failed**: {err} | | | | | | | | |")
    return (f"| {name} | {lib} | {rec['chains']} × {rec['draws']} | "
            f"{seconds(rec['wall_seconds'])} | {num(rec['gradient_evaluations'])} | "
            f"{num(rec['min_ess_bulk'])} | {num(rec['min_ess_bulk_per_second'])} | "
            f"{num(rec['min_ess_bulk_per_1000_gradients'])} | {rhatcell(rec['max_rhat'])} | "
            f"{rec['divergences']} | "
            f"{zcell(rec['max_abs_z_mean'], rec.get('max_abs_z_mean_variable'))} | "
            f"{zcell(rec['max_abs_z_sd'], rec.get('max_abs_z_sd_variable'))} |")


def ok(rec):
    return rec is not None and "error" not in rec


def ratio(a, b):
    return a / b if fin(a) and fin(b) and b > 0 else float("nan")


def flags_for(lib, rec):
    out = []
    if rec is None:
        return out
    if "error" in rec:
        return [f"{lib}: failed ({rec['error'][:200]})"]
    bad_z = [(v, x.get("z_mean", x.get("z")), x.get("z_sd")) for v, x in rec["variables"].items()
             if (fin(x.get("z_mean", x.get("z"))) and x.get("z_mean", x.get("z")) > Z_LIMIT)
             or (fin(x.get("z_sd")) and x["z_sd"] > Z_LIMIT)]
    if bad_z:
        parts = []
        for v, zm, zs in bad_z[:6]:
            x = rec["variables"][v]
            parts.append(f"`{v}` |z| mean {zm:.1f}, sd {zs:.1f} (mean {num(x['mean'], 4)} vs "
                         f"{num(x['ref_mean'], 4)}, sd {num(x['sd'], 4)} vs {num(x['ref_sd'], 4)})")
        more = f"; {len(bad_z) - 6} more" if len(bad_z) > 6 else ""
        out.append(f"{lib}: |z| > {Z_LIMIT:g} on {len(bad_z)} of {len(rec['variables'])} "
                   f"variables: " + "; ".join(parts) + more)
    if fin(rec["max_rhat"]) and rec["max_rhat"] > RHAT_LIMIT:
        n = sum(1 for x in rec["variables"].values() if fin(x["rhat"]) and x["rhat"] > RHAT_LIMIT)
        out.append(f"{lib}: max R-hat {rec['max_rhat']:.3f} (`{rec.get('max_rhat_variable')}`; "
                   f"{n} of {len(rec['variables'])} variables above {RHAT_LIMIT})")
    return out


def per_iter(rec):
    """Gradients per chain and iteration while sampling."""
    g = rec.get("gradient_evaluations_sampling")
    return g / (rec["chains"] * rec["draws"]) if g and rec.get("chains") and rec.get("draws") \
        else float("nan")


def details_table(w, names, records, header, cells):
    """One library's details: `header` (its columns after the posterior's) and a row of
    cells(rec) per posterior that ran without error."""
    w(f"| posterior | {header} |")
    w("|---" * (header.count("|") + 2) + "|")
    for n in names:
        r = records.get(n)
        if ok(r):
            w(f"| {mp.model_of(n)} | {cells(r)} |")
    w("")


def main(argv=None):
    args = parse_args(argv)
    my = read_jsonl(args.myriad)
    npy = read_jsonl(args.numpyro)
    for rec in npy.values():
        add_numpyro_z_sd(rec, args)
    names = [p for p in mp.POSTERIORS if p in my or p in npy]
    names += sorted((set(my) | set(npy)) - set(names))

    first_my = next((r for r in my.values() if ok(r)), None)
    first_np = next((r for r in npy.values() if ok(r)), None)
    commits = sorted({r.get("commit") for r in my.values() if r.get("commit")})
    built = sorted({r.get("myriad_mtime") for r in my.values() if r.get("myriad_mtime")})
    lines = []
    w = lines.append
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    w(f"# posteriordb: myriad against NumPyro's NUTS, checked against the reference (CPU, {today})")
    w("")
    w("Generated by `bench/posteriordb/report.py` from "
      f"`{os.path.relpath(args.myriad, REPO)}` and `{os.path.relpath(args.numpyro, REPO)}`.")
    w("")
    w(f"- **Machine**: {args.machine or machine_line()}.")
    dirty = any(r.get("git_dirty") for r in my.values())
    w(f"- **Commit**: {', '.join(commits) if commits else 'unknown'} (myriad's lines; "
      "`git rev-parse --short HEAD` when each ran; the executable's time stamp: "
      f"{', '.join(built) if built else 'unknown'}"
      + ("; the tree had uncommitted changes to tracked files, `git_dirty` in the lines"
         if dirty else "")
      + ("; HEAD moved during the runs, see the notes" if len(commits) > 1 else "")
      + "). myriad: `build-cpu` (Release, CPU only), "
      f"version {first_my.get('myriad_version') if first_my else '?'}, device "
      f"\"{first_my.get('device') if first_my else '?'}\".")
    if first_np:
        v = first_np.get("versions", {})
        w(f"- **NumPyro**: {v.get('numpyro')} on JAX {v.get('jax')} / jaxlib {v.get('jaxlib')}, "
          f"NumPy {v.get('numpy')}, Python {v.get('python')}"
          + (f", ArviZ {v['arviz']} (ESS, R-hat, MCSE)" if v.get("arviz") else "")
          + f"; {first_np.get('device')}, {first_np.get('precision')}, chain method "
          f"{first_np.get('chain_method')}.")
    busy = sorted({b for r in my.values() for b in r.get("busy_processes", [])})
    w(f"- **Other load**: myriad's lines record the processes matching "
      f"`{mp.BUSY_PATTERN}` before and after each run: "
      + (f"**{', '.join(busy)}** seen on "
         + ", ".join(n for n, r in my.items() if r.get("busy_processes")) if busy else "none")
      + ". NumPyro's lines record none; `run_numpyro_each.sh` prints them (see the notes).")
    w("")

    # Commands
    w("## Commands")
    w("")
    w("```sh")
    if args.myriad_command:
        w(args.myriad_command)
    elif first_my:
        w(f"python3 bench/posteriordb/myriad_posteriordb.py --chains {first_my['chains']} "
          f"--warmup {first_my['warmup']} --draws {first_my['draws']} --seed {first_my['seed']}")
    if args.numpyro_command:
        w(args.numpyro_command)
    elif first_np:
        w(f"/opt/venv-bench/bin/python bench/posteriordb/numpyro_posteriordb.py --chains "
          f"{first_np['chains']} --warmup {first_np['warmup']} --draws {first_np['draws']} "
          f"--seed {first_np['seed']} --chain-method {first_np['chain_method']} --precision "
          f"{first_np['precision']}"
          + ("      # = its defaults" if (first_np['chains'], first_np['warmup'],
             first_np['draws'], first_np['chain_method'], first_np['precision'])
             == (4, 1000, 1000, "vectorized", "f64") else ""))
    w("python3 bench/posteriordb/report.py"
      + (f" --notes {os.path.relpath(args.notes, REPO)}" if args.notes else ""))
    w("```")
    w("")
    if first_my:
        w("Each myriad line runs (the `command` field of its JSON line), for example:")
        w("")
        w("```sh")
        w(first_my["command"])
        w("```")
        w("")
        w("(`OUTDIR` is a temporary folder, removed after reading; `--keep DIR` keeps them.) Defaults of "
          f"`myriad sample` in force: sampler `{first_my.get('sampler')}`, metric `auto` (dense "
          "up to dimension 100), target acceptance 0.8, inits uniform(−2, 2) as Stan's but one "
          "per superchain (`--superchains` automatic: 16 superchains of 4 chains at 64 chains, for "
          "nested R-hat; the conformance test starts every chain on its own), restarts of "
          "stranded chains in warm-up on.")
        w("")

    # Main table
    w("## The table")
    w("")
    w("min bulk ESS: the smallest rank-normalised bulk ESS over the reference's variables. "
      "ESS/s: that over the wall time of warm-up + sampling. ESS/1000 grads: over 1000 gradient "
      "evaluations, warm-up included. R-hat: the largest (rank-normalised split R-hat, the larger "
      "of bulk and tail, in both libraries). div.: divergent transitions while sampling. "
      "|z| mean = |mean − ref| / √(mcse² + mcse_ref²); |z| sd = |sd − sd_ref| / "
      "√(se_sd² + se_sd_ref²) with **se_sd ≈ sd·√(1/(2·ESS_bulk))** on each side (exact for "
      "independent normal draws; heavy tails make it too small, so |z| sd reads high there). "
      f"Bold: |z| > {Z_LIMIT:g} or R-hat > {RHAT_LIMIT}.")
    w("")
    w("| posterior | library | chains × draws | wall s | grads | min bulk ESS | ESS/s | "
      "ESS/1000 grads | max R-hat | div. | max \\|z\\| mean | max \\|z\\| sd |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in names:
        short = mp.model_of(n) if "-" in n else n
        w(main_row(short, "myriad", my.get(n)))
        w(main_row("", "NumPyro", npy.get(n)))
    w("")

    # Ratios
    w("### myriad / NumPyro")
    w("")
    w("| posterior | ESS/s ratio | ESS/1000 grads ratio | wall s ratio | min bulk ESS ratio |")
    w("|---|---|---|---|---|")
    logs_s, logs_g = [], []
    for n in names:
        a, b = my.get(n), npy.get(n)
        if not (ok(a) and ok(b)):
            w(f"| {mp.model_of(n)} | — | — | — | — |")
            continue
        rs = ratio(a["min_ess_bulk_per_second"], b["min_ess_bulk_per_second"])
        rg = ratio(a["min_ess_bulk_per_1000_gradients"], b["min_ess_bulk_per_1000_gradients"])
        if fin(rs):
            logs_s.append(math.log(rs))
        if fin(rg):
            logs_g.append(math.log(rg))
        w(f"| {mp.model_of(n)} | {num(rs)} | {num(rg)} | "
          f"{num(ratio(a['wall_seconds'], b['wall_seconds']))} | "
          f"{num(ratio(a['min_ess_bulk'], b['min_ess_bulk']))} |")
    if logs_s:
        w(f"| **geometric mean** ({len(logs_s)}) | {num(math.exp(sum(logs_s) / len(logs_s)))} | "
          f"{num(math.exp(sum(logs_g) / len(logs_g))) if logs_g else '—'} | | |")
    w("")

    # Flags
    w(f"## Disagreement with the reference (|z| > {Z_LIMIT:g}) and R-hat > {RHAT_LIMIT}")
    w("")
    any_flag = False
    for n in names:
        fl = flags_for("myriad", my.get(n)) + flags_for("NumPyro", npy.get(n))
        for f in fl:
            w(f"- **{mp.model_of(n)}**, {f}")
            any_flag = True
    if not any_flag:
        w("None: every run agrees with the reference and has R-hat ≤ 1.01.")
    else:
        w("")
        w("The |z| of an sd uses the normal approximation of its standard error; for a "
          "heavy-tailed variable `heavy_tail_check.py` recomputes it with the kurtosis of the "
          "reference draws" + (" (see the notes)." if args.notes else "."))
    w("")

    # Details
    w("## Details")
    w("")
    w("myriad: sampler and metric, the adapted step size, gradients per chain and iteration while "
      "sampling (the mean trajectory length in leapfrog steps), warm-up restarts (chains restarted), divergent "
      "transitions in warm-up, min tail ESS, the whole process's seconds (data loading, "
      "diagnostics and output included).")
    w("")
    details_table(
        w, names, my, "sampler (metric) | step size | grads/iter. | restarts (chains) | "
        "warm-up div. | min tail ESS | warm-up s | sampling s | process s",
        lambda r: f"{r.get('sampler')} ({r.get('metric')}) | "
                  f"{num(r.get('step_size'))} | {num(per_iter(r))} | "
                  f"{r.get('warmup_restarts')} ({r.get('restarted_chains')}) | "
                  f"{r.get('divergences_warmup')} | {num(r.get('min_ess_tail'))} | "
                  f"{seconds(r['wall_seconds_warmup'])} | {seconds(r['wall_seconds_sampling'])} | "
                  f"{seconds(r.get('process_seconds'))}")
    w("NumPyro: dimension, median step size, leapfrog steps per chain and iteration while "
      "sampling, mean tree depth and the fraction of iterations at the "
      "maximum depth (10), lockstep gradients (what the vectorised chains compute: each iteration "
      "costs the longest tree of all chains, for every chain) over counted gradients, warm-up "
      "divergences, compile and init seconds (not in wall s).")
    w("")
    details_table(
        w, names, npy, "dim | step size | grads/iter. | tree depth | at max depth | "
        "lockstep / counted | warm-up div. | warm-up s | sampling s | compile s | init s",
        lambda r: f"{r.get('dim')} | {num(r['step_size']['median'])} | {num(per_iter(r))} | "
                  f"{num(r.get('tree_depth_mean'))} | {num(r.get('max_tree_depth_fraction'))} | "
                  f"{num(ratio(r['gradient_evaluations_lockstep'], r['gradient_evaluations']))} | "
                  f"{r.get('divergences_warmup')} | {seconds(r['wall_seconds_warmup'])} | "
                  f"{seconds(r['wall_seconds_sampling'])} | {seconds(r.get('compile_seconds'))} | "
                  f"{seconds(r.get('init_seconds'))}")

    # Notes
    w("## How to read it")
    w("")
    c_my = first_my["chains"] if first_my else "?"
    c_np = first_np["chains"] if first_np else "?"
    it_my = f"{first_my['warmup']} + {first_my['draws']}" if first_my else "?"
    it_np = f"{first_np['warmup']} + {first_np['draws']}" if first_np else "?"
    w(f"- **Chains.** myriad runs {c_my} chains ({it_my} iterations each), NumPyro {c_np} "
      f"({it_np}, vectorised). Each library "
      "runs at a chain count it is used with: "
      "myriad's samplers adapt across the ensemble and are built for many chains, NumPyro's NUTS "
      "adapts each chain alone. The totals (min bulk ESS, wall s, grads) therefore do not "
      "compare; the rates do: **ESS/s** is throughput on the same 2-core CPU (both libraries have "
      "both cores), **ESS/1000 grads** statistical efficiency per unit of work.")
    w("- **Different samplers.** myriad's default is ChEES-HMC (one trajectory length adapted "
      "across the ensemble, jittered) with an ensemble-adapted dense metric up to dimension 100; "
      "NumPyro's is NUTS with a per-chain diagonal metric. Neither is tuned per posterior.")
    w("- **Time.** NumPyro's wall s excludes JAX's compilation (compile s, in the details) and "
      "`kernel.init`. myriad's wall s is run.json's warm-up + sampling, excluding the process "
      "start, data loading, diagnostics and output (process s). On 2 cores every wall time is "
      "sensitive to other load (\"Other load\" above).")
    w("- **Gradients.** myriad counts every gradient evaluation of the run. NumPyro's are its "
      "leapfrog steps (`num_steps`), warm-up included; its step-size search and the initial "
      "gradient are not counted. Its vectorised chains compute more than that (each iteration "
      "costs the longest tree of all chains: lockstep / counted in the details), so NumPyro's "
      "ESS/1000 grads is per gradient a chain needed, not per gradient the CPU computed.")
    w(f"- **z-scores.** With {c_my} × {first_my['draws'] if first_my else '?'} draws myriad's "
      f"MCSE is smaller than NumPyro's with {c_np} × {first_np['draws'] if first_np else '?'}, "
      "so the same small bias gives myriad the larger |z|; the reference's own MCSE (Stan, "
      "10 × 1000 draws) bounds both. Over 15 posteriors and ~150 variables a |z| a little above "
      "3 is expected by chance; above 4 it is not. An R-hat near 1 with a large |z| points to a "
      "wrong model or a bias, a large R-hat to chains that have not mixed. Heavy-tailed "
      "posteriors (one_comp_mm_elim_abs' `K_m`, `V_m`) have unreliable MCSEs and sd standard "
      "errors: compare their quantiles (`variables` in the JSON lines) instead.")
    w(f"- **R-hat** over {c_my} chains is a stricter test than over {c_np} (more chains that "
      "can disagree).")
    w("- **Data.** myriad's script reads `tests/data/posteriordb/`, NumPyro's finds "
      "`../shared/posteriordb/` first; their `data.json` and `reference.csv` are byte-identical.")
    w("")
    if args.notes:
        w("## Notes from this run")
        w("")
        with open(args.notes) as f:
            w(f.read().rstrip())
        w("")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(names)} posteriors "
          f"({len(my)} myriad, {len(npy)} NumPyro lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
