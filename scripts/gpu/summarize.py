#!/usr/bin/env python3
"""The goals' table of one `scripts/gpu-check measure` run.

Usage: summarize.py LOG_DIR

Reads LOG_DIR/*.json (Google Benchmark's JSON output of myriad_bench, possibly cut short by a
time limit: every complete row is read) and LOG_DIR/numpyro.jsonl (bench/peers/numpyro_hmc.py),
and prints one table per goal of issue 20:
  HMC            gradient evaluations per second, roofline fraction, NumPyro on the same GPU
                 with the same model, chains and leapfrog steps, and the ratio (goal >= 20x at
                 >= 4096 chains)
  constrained    ESS per second against one core of the same machine (goal >= 1000x), and the
                 rows that set the `auto` thresholds
  HAIS           the paper's protocol in seconds (goal < 1 s) and against one core
  MP IS          seconds per run against the reference's A100 times (goal >= 5x), largest K
Python's standard library only.
"""

import glob
import json
import os
import sys


def benchmark_rows(path):
    """Complete rows of a Google Benchmark JSON file, also when the file was cut short."""
    with open(path) as f:
        text = f.read()
    start = text.find('"benchmarks"')
    if start < 0:
        return []
    position = text.find("[", start) + 1
    decoder = json.JSONDecoder()
    rows = []
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] != "{":
            break
        try:
            row, position = decoder.raw_decode(text, position)
        except ValueError:
            break  # the row being written when the process was stopped
        rows.append(row)
    return rows


def seconds(row):
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row.get("time_unit", "ns")]
    return row["real_time"] * scale


def fmt(value, spec=".3g"):
    return "-" if value is None else format(value, spec)


def print_table(title, header, rows):
    print(f"\n{title}")
    if not rows:
        print("  (no rows)")
        return
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    print("  " + "  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def row_name(row):
    """The row's name without the suffixes Google Benchmark appends (/real_time, ...)."""
    parts = [p for p in row["name"].split("/")
             if p not in ("real_time", "manual_time") and not p.startswith("iterations:")]
    return "/".join(parts)


def error_of(row):
    return row.get("error_message") if row.get("error_occurred") else None


def main(log_dir):
    rows = []
    for path in sorted(glob.glob(os.path.join(log_dir, "*.json"))):
        rows.extend(benchmark_rows(path))
    by_name = {row_name(r): r for r in rows}
    peers = {}
    peer_path = os.path.join(log_dir, "numpyro.jsonl")
    if os.path.exists(peer_path):
        with open(peer_path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    p = json.loads(line)
                    peers[(p["model"], p["chains"])] = p

    # HMC against NumPyro.
    table = []
    for name, r in by_name.items():
        if not name.startswith("BM_hmc/") or "/cuda/" not in name:
            continue
        _, model, _, chains = name.split("/")
        chains = int(chains.split(":")[1])
        rate = r.get("items_per_second")
        peer = peers.get((model, chains), {})
        peer_rate = peer.get("gradient_evaluations_per_second")
        ratio = rate / peer_rate if rate and peer_rate else None
        table.append([model, chains, fmt(rate), fmt(r.get("roofline_fraction")),
                      fmt(r.get("accept_rate"), ".2f"), fmt(peer_rate),
                      peer.get("error", "")[:40] or fmt(ratio, ".1f"), error_of(r) or ""])
    for (model, chains), peer in peers.items():
        if f"BM_hmc/{model}/cuda/chains:{chains}" not in by_name:
            table.append([model, chains, "-", "-", "-",
                          fmt(peer.get("gradient_evaluations_per_second")), "-",
                          peer.get("error", "")[:40]])
    table.sort(key=lambda t: (t[0], t[1]))
    print_table("HMC: gradient evaluations/s (goal: >= 20x NumPyro at >= 4096 chains)",
                ["model", "chains", "myriad", "roofline", "accept", "numpyro", "x numpyro",
                 "error"],
                table)

    # Constrained HMC: ESS/s and one core.
    table = []
    for name, r in by_name.items():
        if not name.startswith("BM_chmc/"):
            continue  # (BM_chmc_mapping rows have a table of their own)
        table.append([name[len("BM_chmc/"):], fmt(r.get("ess_per_second")),
                      fmt(r.get("vs_one_core"), ".3g"),
                      fmt(r.get("gradient_evaluations_per_second")),
                      fmt(r.get("accept_rate"), ".2f"), fmt(r.get("failed_fraction"), ".2g"),
                      fmt(r.get("max_rhat"), ".4g"), fmt(r.get("backed_off_chains"), ".0f"),
                      r.get("label", ""), error_of(r) or ""])
    print_table("Constrained HMC: ESS/s (goal: >= 1000x one core of this machine)",
                ["row", "ESS/s", "x one core", "grad/s", "accept", "failed", "max R-hat",
                 "backed off", "label", "error"],
                table)

    # The mapping rows: chain-iterations per second by chain mapping and Gram factorisation, and
    # against the generator's one-core row where the logs have one (the same transition, so the
    # throughput ratio; ESS per iteration also depends on the adapted step, shown beside it).
    table = []
    for name, r in by_name.items():
        if name.startswith("BM_chmc_mapping/"):
            generator = name.split("/")[1]
            one_core = by_name.get(f"BM_chmc/{generator}/cpu/chains:1", {})
            rate, one_core_rate = r.get("items_per_second"), one_core.get("items_per_second")
            ratio = rate / one_core_rate if rate and one_core_rate else None
            table.append([name[len("BM_chmc_mapping/"):], fmt(rate), fmt(ratio, ".3g"),
                          fmt(r.get("gradient_evaluations_per_second")),
                          fmt(r.get("accept_rate"), ".2f"), fmt(r.get("step_size"), ".3g"),
                          error_of(r) or ""])
    print_table("Constrained HMC: chain-iterations/s by mapping (the auto thresholds)",
                ["row", "chain-it/s", "x one core", "grad/s", "accept", "step", "error"], table)

    # HAIS.
    table = []
    for name, r in by_name.items():
        if not name.startswith(("BM_ais/", "BM_ais_protocol/")):
            continue
        protocol = r.get("protocol_seconds")
        if name.startswith("BM_ais_protocol/"):
            protocol = seconds(r)
        table.append([name, fmt(r.get("particle_temperatures_per_second")), fmt(protocol),
                      fmt(r.get("vs_one_core"), ".3g"), fmt(r.get("roofline_fraction")),
                      error_of(r) or ""])
    print_table("HAIS: the protocol (36-D, 1e5 temperatures x 200 particles; goal < 1 s)",
                ["row", "pt/s", "protocol s", "x one core", "roofline", "error"], table)

    # Tempering.
    table = []
    for name, r in by_name.items():
        if name.startswith("BM_temper/"):
            table.append([name[len("BM_temper/"):], fmt(r.get("chain_iterations_per_second")),
                          fmt(r.get("vs_one_core"), ".3g"), fmt(r.get("roofline_fraction")),
                          error_of(r) or ""])
    print_table("Tempering: chain-iterations/s (30-unit Boltzmann relaxation, L = 20)",
                ["row", "chain-it/s", "x one core", "roofline", "error"], table)

    # MP IS.
    table = []
    for name, r in by_name.items():
        if name.startswith("BM_mpis/"):
            table.append([name[len("BM_mpis/"):], fmt(r.get("seconds_per_run")),
                          fmt(r.get("reference_a100_seconds")), fmt(r.get("vs_reference"), ".1f"),
                          fmt(r.get("peak_bytes", 0) / 1e9, ".3g"), error_of(r) or ""])
    print_table("MP IS: seconds per run (goal: >= 5x faster than the reference's A100)",
                ["row", "s/run", "A100 s", "x A100", "peak GB", "error"], table)
    table = []
    for name, r in by_name.items():
        if name.startswith("BM_mpis_largest_k/"):
            table.append([name.split("/")[1], fmt(r.get("largest_k_this_card"), ".0f"),
                          fmt(r.get("this_card_budget_bytes", 0) / 1e9, ".3g"),
                          fmt(r.get("largest_k_80GB"), ".0f"),
                          fmt(r.get("largest_k_80GB_chunked"), ".0f"),
                          fmt(r.get("reference_k"), ".0f")])
    print_table("MP IS: largest K (plan estimate)",
                ["model", "this card", "budget GB", "80 GB", "80 GB chunked", "reference"], table)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
