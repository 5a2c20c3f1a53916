"""Reference values for tests/unit/test_diagnostics.cpp (DiagnosticsArviz.*) from ArviZ.

The draws are generated deterministically (splitmix64 uniforms, no library RNG) so that the
C++ test rebuilds the same doubles: 4 chains x 301 draws (odd, so the middle draw is dropped)
of an AR(1) chain with phi = 0.95 (tau ~ 39, so Geyer's sequence runs well past the first
lags) and, as a second quantity, the same draws rounded to multiples of 0.25 (many ties).

Run:  python3 tests/unit/data/diagnostics_arviz_reference.py
Produced with arviz 0.23.4, numpy 2.4, scipy 1.17.
"""

import math

import numpy as np
from arviz.stats import diagnostics as d

MASK = (1 << 64) - 1


def splitmix64_uniforms(seed, count):
    state = seed
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append((z >> 11) * 2.0**-53)
    return out


def ar1_draws(chains, draws, phi, seed):
    u = splitmix64_uniforms(seed, chains * draws)
    scale = math.sqrt(12.0)
    innovation_scale = math.sqrt(1.0 - phi * phi)
    x = np.empty((chains, draws))
    for c in range(chains):
        previous = 0.0
        for t in range(draws):
            e = (u[c * draws + t] - 0.5) * scale
            previous = e if t == 0 else phi * previous + innovation_scale * e
            x[c, t] = previous
    return x


def main():
    x = ar1_draws(4, 301, 0.95, 2024)
    ties = np.round(x * 4.0) / 4.0
    for name, a in (("ar1", x), ("ties", ties)):
        values = {
            "rhat": d._rhat_rank(a),
            "split_rhat_basic": d._rhat(d._split_chains(a)),
            "ess_bulk": d._ess_bulk(a),
            "ess_tail": d._ess_tail(a),
            "ess_basic": d._ess_mean(a),
            "mcse_mean": d._mcse_mean(a),
            "q5": np.quantile(a, 0.05),
            "q95": np.quantile(a, 0.95),
        }
        print(name, {k: repr(float(v)) for k, v in values.items()})


if __name__ == "__main__":
    main()
