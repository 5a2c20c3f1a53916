#pragma once
// Stan's heuristic for a first step size (Hoffman & Gelman 2014, Algorithm 4, pooled over the
// ensemble): double or halve ε until the pooled acceptance of a short trajectory crosses 0.8.

namespace myriad {

/// `probe(ε)` runs one iteration at step size ε and returns the pooled acceptance probability.
template <class Probe>
double find_reasonable_step_size(Probe probe, double initial = 1.0, int max_probes = 60) {
  double step = initial;
  int direction = 0;
  for (int i = 0; i < max_probes; ++i) {
    const int want = probe(step) > 0.8 ? 1 : -1;
    if (direction == 0) direction = want;
    if (want != direction) break;
    step = direction > 0 ? step * 2 : step / 2;
    if (step < 1e-10 || step > 1e7) break;
  }
  return step;
}

}  // namespace myriad
