// The log-semiring GEMM's host parts (estimate/log_semiring_gemm.hpp): the shape analysis of a
// log-sum-product step, the path choice of the CUDA policy, and the CPU twins of the tiled and
// max-shift paths that the tests compare with the generic element.

#include "myriad/estimate/log_semiring_gemm.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>
#include <vector>

#include "myriad/core/error.hpp"

namespace myriad {

namespace {

void push_axis(LogGemmGroup& group, int axis, std::int64_t extent) {
  group.axis[group.axes] = axis;
  group.extent[group.axes] = extent;
  ++group.axes;
  group.size *= extent;
}

template <class Tiling>
void run_tiled_host(const LogSemiringGemm& g) {
  using Block = LogGemmBlock<Tiling>;
  // The block's shared memory and its threads' registers; each phase below runs for every
  // thread before the next starts, which is what the kernel's barriers enforce.
  const auto stage = std::make_unique<LogGemmStage<Tiling>>();
  std::vector<LogGemmAccumulator<Tiling>> acc(Tiling::kThreads);
  const std::int64_t tiles = Block::tiles(g);
  for (std::int64_t t = 0; t < tiles; ++t) {
    const LogGemmTile tile = Block::tile_at(g, t);
    for (int thread = 0; thread < Tiling::kThreads; ++thread) {
      Block::begin(g, tile, *stage, thread);
      acc[thread].clear();
    }
    for (std::int64_t k0 = 0; k0 < g.k(); k0 += Tiling::kChunk) {
      for (int thread = 0; thread < Tiling::kThreads; ++thread)
        Block::stage_reduce_offsets(g, k0, *stage, thread);
      for (int thread = 0; thread < Tiling::kThreads; ++thread)
        Block::stage_operands(g, tile, k0, *stage, thread);
      for (int thread = 0; thread < Tiling::kThreads; ++thread)
        Block::fold(g, k0, *stage, acc[thread], thread);
    }
    for (int thread = 0; thread < Tiling::kThreads; ++thread)
      Block::finish(g, tile, acc[thread], thread);
  }
}

}  // namespace

std::optional<LogSemiringGemm> as_log_semiring_gemm(const LogSumProductStep& step,
                                                    std::string* why_not) {
  const LogSumProductElement& e = step.element;
  const auto reject = [&](std::string reason) -> std::optional<LogSemiringGemm> {
    if (why_not) *why_not = std::move(reason);
    return std::nullopt;
  };
  if (step.out_size <= 0 || step.out == nullptr) return reject("the step has no output");
  if (e.varying != 2)
    return reject(
        detail::concat(e.varying, " inputs vary over the eliminated assignments; a GEMM has two"));

  LogSemiringGemm g;
  g.step = step;
  g.a_input = e.varying_input[0];
  g.b_input = e.varying_input[1];
  g.reduce.reduction = true;
  for (int a = 0; a < e.out_axes; ++a) {
    if (e.out_extent[a] <= 1) continue;
    const bool in_a = e.out_stride[g.a_input][a] != 0;
    const bool in_b = e.out_stride[g.b_input][a] != 0;
    // An axis both operands carry, or neither (only constant inputs or the output do), is a
    // batch axis: the GEMM is repeated along it.
    LogGemmGroup& group = in_a && !in_b ? g.rows : (!in_a && in_b ? g.cols : g.batch);
    push_axis(group, a, e.out_extent[a]);
  }
  // The eliminated axes in the element's order, so a flat reduction index visits the terms in
  // the generic element's order (the same sums, term for term, within one chunk).
  for (int b = 0; b < e.elim_axes; ++b)
    if (e.elim_extent[b] > 1) push_axis(g.reduce, b, e.elim_extent[b]);
  if (g.reduce.axes > 0) {
    const int innermost = g.reduce.axis[g.reduce.axes - 1];
    g.a_reduce_contiguous = std::llabs(e.elim_stride[g.a_input][innermost]) == 1;
    g.b_reduce_contiguous = std::llabs(e.elim_stride[g.b_input][innermost]) == 1;
  }
  return g;
}

ContractionPath resolve_contraction_path(ContractionPath requested, const LogSemiringGemm* gemm) {
  if (requested == ContractionPath::generic || gemm == nullptr) return ContractionPath::generic;
  if (requested == ContractionPath::tiled) return ContractionPath::tiled;
  if (requested == ContractionPath::cublas) {
    const bool fits_int = gemm->m() <= INT_MAX && gemm->n() <= INT_MAX && gemm->k() <= INT_MAX;
    // One batch's scratch within the round budget keeps the path's memory bounded by
    // kMaxShiftScratchBytes, which is what the MP IS memory plan adds for it.
    const bool fits_scratch =
        max_shift_scratch_per_batch(*gemm) * std::int64_t{sizeof(double)} <= kMaxShiftScratchBytes;
    return fits_int && fits_scratch ? ContractionPath::cublas : ContractionPath::tiled;
  }
  if (gemm->k() < kAutoTiledMinReduction) return ContractionPath::generic;
  const LogGemmTileShape tile = log_gemm_tile_shape(choose_log_gemm_tiling(gemm->m(), gemm->n()));
  const auto covered = [](std::int64_t extent, int tile_extent) {
    return static_cast<double>((extent + tile_extent - 1) / tile_extent * tile_extent);
  };
  const double fill = static_cast<double>(gemm->m()) * static_cast<double>(gemm->n()) /
                      (covered(gemm->m(), tile.rows) * covered(gemm->n(), tile.cols));
  return fill >= kAutoTiledMinTileFill ? ContractionPath::tiled : ContractionPath::generic;
}

void run_log_semiring_gemm_tiled_host(const LogSemiringGemm& gemm, LogGemmTilingId tiling) {
  with_log_gemm_tiling(tiling, [&](auto t) { run_tiled_host<decltype(t)>(gemm); });
}

std::int64_t max_shift_scratch_per_batch(const LogSemiringGemm& g) {
  return g.k() * (g.m() + g.n()) + g.m() + g.n() + g.m() * g.n();
}

std::int64_t max_shift_batches_per_round(const LogSemiringGemm& g, std::int64_t budget_bytes) {
  const std::int64_t per_batch = max_shift_scratch_per_batch(g) * std::int64_t{sizeof(double)};
  const std::int64_t fit = budget_bytes / std::max<std::int64_t>(per_batch, 1);
  return std::max<std::int64_t>(1, std::min<std::int64_t>({fit, g.batches(), INT_MAX}));
}

void run_log_semiring_gemm_max_shift_host(const LogSemiringGemm& g, bool exact_fallback,
                                          std::int64_t budget_bytes) {
  const std::int64_t m = g.m(), n = g.n(), k = g.k();
  const std::int64_t per_round = max_shift_batches_per_round(g, budget_bytes);
  std::vector<double> packed_a(static_cast<std::size_t>(per_round * k * m));
  std::vector<double> packed_b(static_cast<std::size_t>(per_round * k * n));
  std::vector<double> max_a(static_cast<std::size_t>(per_round * m));
  std::vector<double> max_b(static_cast<std::size_t>(per_round * n));
  std::vector<double> shifted_sum(static_cast<std::size_t>(per_round * m * n));
  for (std::int64_t first = 0; first < g.batches(); first += per_round) {
    const std::int64_t count = std::min(per_round, g.batches() - first);
    for (std::int64_t s = 0; s < count; ++s) {
      for (std::int64_t a = 0; a < m; ++a)
        max_a[s * m + a] = g.pack_max_shifted(0, first + s, a, &packed_a[(s * k) * m + a], m);
      for (std::int64_t b = 0; b < n; ++b)
        max_b[s * n + b] = g.pack_max_shifted(1, first + s, b, &packed_b[(s * k) * n + b], n);
    }
    // The GEMM as cuBLAS computes it: C = P_A P_Bᵀ per batch, column-major M × N.
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t a = 0; a < m; ++a) {
          double sum = 0.0;
          for (std::int64_t e = 0; e < k; ++e)
            sum += packed_a[(s * k + e) * m + a] * packed_b[(s * k + e) * n + b];
          shifted_sum[(s * n + b) * m + a] = sum;
        }
    for (std::int64_t s = 0; s < count; ++s)
      for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t a = 0; a < m; ++a)
          g.write_max_shift(first + s, a, b, shifted_sum[(s * n + b) * m + a], max_a[s * m + a],
                            max_b[s * n + b], exact_fallback);
  }
}

}  // namespace myriad
