// The host side of a tempering run (run/temper.hpp): start, the transitions in chunks with
// progress between them, and the reductions of the chains' outputs
// (estimate/tempering_estimate.hpp): log Ẑ, the w₁- and w₀-weighted moments, the base check and
// rank-normalised R-hat of the chains' β traces.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "myriad/diag/draws_view.hpp"
#include "myriad/diag/rhat.hpp"
#include "myriad/run/temper.hpp"

namespace myriad {

TemperResult run_tempering(TemperingBackend& backend, const TemperingSetup& setup,
                           const TemperConfig& config, const std::vector<std::string>& names) {
  const auto start = std::chrono::steady_clock::now();
  TemperResult result;
  result.failed_starts = backend.start();
  MYRIAD_EXPECTS(result.failed_starts == 0, result.failed_starts,
                 " chains found no finite start from the base");
  const int total = setup.warmup + setup.draws;
  for (int done = 0; done < total;) {
    const int count = std::min(config.chunk_iterations, total - done);
    result.stats += backend.run(done, count);
    done += count;
    if (config.progress) config.progress(done <= setup.warmup ? "warmup" : "sampling", done, total);
  }
  TemperingOutputs out = backend.outputs();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const int d = static_cast<int>(names.size());
  result.method = to_string(setup.method);
  result.device = backend.device_name();
  result.dim = d;
  result.chains = setup.chains;
  result.warmup = setup.warmup;
  result.draws = setup.draws;
  result.temperatures = static_cast<int>(setup.ladder.size());
  result.log_zeta = setup.log_zeta;
  result.log_z_base = setup.log_z_base;
  result.dropped = out.dropped;
  result.log_z = out.sums.log_z(setup.log_zeta);
  result.names = names;
  for (int i = 0; i < d; ++i) {
    const EstimateWithError mean = out.sums.target_mean(i);
    const double square = out.sums.target_mean(d + i).value;
    result.target_mean.push_back(mean);
    result.target_sd.push_back(std::sqrt(std::max(0.0, square - mean.value * mean.value)));
    const double centre = setup.base_mean.empty() ? 0.0 : setup.base_mean[i];
    result.base_mean.push_back(out.sums.base_mean(i));
    result.base_exact_mean.push_back(centre);
    const EstimateWithError& m = result.base_mean.back();
    result.max_base_error_in_se =
        std::max(result.max_base_error_in_se, std::fabs(m.value - centre) / m.se);
  }
  // The trace is [draw][chain]: chain stride 1, draw stride `chains`.
  result.beta_rhat = diag::rhat(
      diag::DrawsView{out.beta_trace.data(), setup.chains, setup.draws, 1, setup.chains});
  double beta_sum = 0;
  for (double b : out.beta_trace) beta_sum += b;
  result.mean_beta = beta_sum / static_cast<double>(out.beta_trace.size());
  result.beta_trace = std::move(out.beta_trace);
  return result;
}

}  // namespace myriad
