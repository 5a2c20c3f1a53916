#pragma once
// The log-semiring GEMM (mpis.md §3.4): a log-sum-product step U = LSE_E Σ_j T_j whose terms
// vary over the eliminated assignments through exactly two inputs,
//
//   C[s, a, b] = LSE_e (A[s, a, e] + B[s, b, e]) + Σ_c T_c[s, a, b],
//
// with e the eliminated axes (the reduction), a the kept axes of A only (rows), b those of B
// only (columns), s the kept axes both carry or neither does (the batch: runs, plates, shared
// K-dims), and T_c the inputs constant over E (the backward pass's kept input), added once per
// output. Each group may span several axes in any order and with any strides; a flat index of
// a group is decoded into per-input offsets as LogSumProductElement::base_offsets does.
//
// This header holds what the host and the CUDA kernels share (DESIGN.md rule 1):
//  - LogSemiringGemm, the analysed step, with MYRIAD_HD decoders, the epilogue (constants,
//    strided output) and the exact per-element fallback;
//  - the tiled path's block arithmetic (LogGemmBlock, LogGemmAccumulator) over a stage of
//    operand tiles, which the CUDA kernel (kernels/log_semiring_gemm.cuh) keeps in shared
//    memory and the host twin (run_log_semiring_gemm_tiled_host) in a plain struct: each
//    phase between two barriers is a function of (thread, threads), so running it for every
//    thread in turn on the host is exactly the block's computation;
//  - the max-shift (cuBLAS) path's per-row packing and its checked epilogue
//    (kernels/log_semiring_gemm_cublas.cuh and its host twin run_log_semiring_gemm_max_shift_host).
//
// Exactness. The tiled path keeps, per output, an online max-rescaled sum (the "online
// softmax" of flash attention): per chunk of the reduction it takes the chunk's maximum,
// rescales the running sum once when the maximum grows, and adds exp(x − max) of every term. No
// eps is added, −inf is a zero weight, and with the whole reduction in one chunk the
// arithmetic is the generic element's max pass and shifted-sum pass, term for term. Across
// chunks each rescale adds one rounding of the running sum, so the result differs from the
// generic element by at most ~(2K/chunk + K) unit roundoffs in the log (plus the rounding of
// adding the constant inputs once instead of per term).
//
// The max-shift path factorises exp(A + B − m_A − m_B) = exp(A − m_A) exp(B − m_B) with
// per-row maxima m_A[s, a] = max_e A, m_B[s, b] = max_e B, so the sum is an ordinary GEMM of
// exponentials that lie in [0, 1]. When the maximising e of A and of B differ, the shifted sum
// S can be far below 1: it underflows once the gap passes ~708 nats (double), and loses
// relative precision in the subnormal range before that. Each term lost to underflow is below
// 2^-1073 in absolute value, so when S ≥ 4 K DBL_MIN = K 2^-1020 those losses are below one unit
// roundoff of S and the result is as accurate as the tiled path's; below that threshold (and
// for non-finite maxima) the epilogue recomputes the element exactly with the generic
// element's two passes. The fallback costs K terms per flagged element and is rare in
// practice; it makes the path exact to rounding for every input.

#include <cstdint>
#include <optional>
#include <string>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/estimate/contraction_path.hpp"
#include "myriad/estimate/log_sum_product_element.hpp"

namespace myriad {

/// One group of a GEMM-shaped step's axes (batch, rows, columns or reduction), flattened
/// row-major in the element's axis order (last fastest). Axes of extent 1 are left out: their
/// index is always 0.
struct LogGemmGroup {
  int axes = 0;
  bool reduction = false;  ///< the eliminated axes (else kept axes)
  std::int64_t size = 1;   ///< Π extent
  std::int64_t extent[kMaxStepAxes] = {};
  /// The element's kept axis (batch, rows, columns) or eliminated axis (reduction) of each.
  int axis[kMaxStepAxes] = {};
};

/// A log-sum-product step analysed as a batched GEMM: C[s, a, b] = LSE_e A + B + Σ constants
/// (see the file comment). Trivially copyable: the kernels take it by value (about 3 KB).
struct LogSemiringGemm {
  /// Offset slot of the output in the decoders' offset arrays (after the inputs').
  static constexpr int kOutputSlot = kMaxStepInputs;

  LogSumProductStep step;
  int a_input = 0;  ///< element input of A (varying_input[0])
  int b_input = 1;  ///< element input of B (varying_input[1])
  LogGemmGroup batch, rows, cols, reduce;
  /// Whether A (B) is contiguous along the innermost reduction axis, so that staging a tile
  /// with the reduction index fastest coalesces the loads.
  bool a_reduce_contiguous = false;
  bool b_reduce_contiguous = false;

  MYRIAD_HD std::int64_t m() const { return rows.size; }
  MYRIAD_HD std::int64_t n() const { return cols.size; }
  MYRIAD_HD std::int64_t k() const { return reduce.size; }
  MYRIAD_HD std::int64_t batches() const { return batch.size; }

  /// Stride of `slot` (an input, or kOutputSlot) along the group's i-th axis.
  MYRIAD_HD std::int64_t stride(const LogGemmGroup& g, int i, int slot) const {
    if (g.reduction) return slot == kOutputSlot ? 0 : step.element.elim_stride[slot][g.axis[i]];
    return slot == kOutputSlot ? step.out_stride[g.axis[i]]
                               : step.element.out_stride[slot][g.axis[i]];
  }

  /// Offset of `slot` at flat index `flat` of group g (flat in [0, g.size)).
  MYRIAD_HD std::int64_t offset(const LogGemmGroup& g, std::int64_t flat, int slot) const {
    std::int64_t offset = 0;
    for (int i = g.axes - 1; i > 0; --i) {
      const std::int64_t q = flat / g.extent[i];
      offset += (flat - q * g.extent[i]) * stride(g, i, slot);
      flat = q;
    }
    // The first axis takes what is left: no division for single-axis groups.
    return g.axes > 0 ? offset + flat * stride(g, 0, slot) : offset;
  }

  /// Adds the offsets of every input and of the output (offset[kOutputSlot]) at flat index
  /// `flat` of a kept group.
  MYRIAD_HD void add_offsets(const LogGemmGroup& g, std::int64_t flat, std::int64_t* offset) const {
    const int inputs = step.element.inputs;
    for (int i = g.axes - 1; i >= 0; --i) {
      std::int64_t digit = flat;
      if (i > 0) {
        const std::int64_t q = flat / g.extent[i];
        digit = flat - q * g.extent[i];
        flat = q;
      }
      for (int j = 0; j < inputs; ++j) offset[j] += digit * stride(g, i, j);
      offset[kOutputSlot] += digit * stride(g, i, kOutputSlot);
    }
  }

  /// Offsets of every input and of the output at output (batch, row, col).
  MYRIAD_HD void output_offsets(std::int64_t s, std::int64_t row, std::int64_t col,
                                std::int64_t* offset) const {
    for (int j = 0; j <= kOutputSlot; ++j) offset[j] = 0;
    add_offsets(batch, s, offset);
    add_offsets(rows, row, offset);
    add_offsets(cols, col, offset);
  }

  /// Writes C = log_sum + Σ constants at output (batch, row, col): the epilogue of the tiled
  /// and max-shift paths. The constants are summed in the generic element's order.
  MYRIAD_HD void write(std::int64_t s, std::int64_t row, std::int64_t col, double log_sum) const {
    std::int64_t offset[kOutputSlot + 1];
    output_offsets(s, row, col, offset);
    const LogSumProductElement& e = step.element;
    double constant = 0.0;
    for (int c = 0; c < e.constants; ++c)
      constant += e.data[e.constant_input[c]][offset[e.constant_input[c]]];
    step.out[offset[kOutputSlot]] = log_sum + constant;
  }

  /// Writes the generic element's value at output (batch, row, col): its max pass and
  /// shifted-sum pass over every eliminated assignment (the max-shift path's fallback).
  MYRIAD_HD void write_exact(std::int64_t s, std::int64_t row, std::int64_t col) const {
    std::int64_t offset[kOutputSlot + 1];
    output_offsets(s, row, col, offset);
    double max, sum;
    step.element.max_and_sum(offset, max, sum);
    step.out[offset[kOutputSlot]] = sum > 0.0 ? max + myriad::log(sum) : max;
  }

  // --- the max-shift (cuBLAS) path -------------------------------------------------------

  /// Smallest shifted sum S, per reduction term, that the max-shift epilogue accepts: terms
  /// lost to underflow are each below 2^-1073, so S ≥ K · 2^-1020 keeps their total below one
  /// unit roundoff (2^-53) of S.
  static constexpr double kMaxShiftSafeSumPerTerm = 0x1p-1020;

  /// Packs one operand row of the max-shift path: m = max_e X[s, index, e] for X = A (side 0,
  /// index a row) or B (side 1, index a column), and packed[e · pitch] = exp(X − m) for every
  /// e (all 0 when m is not finite, which the epilogue handles). Returns m.
  MYRIAD_HD double pack_max_shifted(int side, std::int64_t s, std::int64_t index, double* packed,
                                    std::int64_t pitch) const {
    const int input = side == 0 ? a_input : b_input;
    const double* data = step.element.data[input];
    const std::int64_t base =
        offset(batch, s, input) + offset(side == 0 ? rows : cols, index, input);
    const std::int64_t terms = reduce.size;
    double max = -INFINITY;
    for (std::int64_t e = 0; e < terms; ++e) {
      const double x = data[base + offset(reduce, e, input)];
      max = x > max ? x : max;
    }
    const bool finite = max > -INFINITY && max < INFINITY;
    for (std::int64_t e = 0; e < terms; ++e)
      packed[e * pitch] = finite ? myriad::exp(data[base + offset(reduce, e, input)] - max) : 0.0;
    return max;
  }

  /// Whether the max-shift result log S + m_A + m_B is accurate (see kMaxShiftSafeSumPerTerm):
  /// finite maxima and S ≥ K · 2^-1020 (false for NaN).
  MYRIAD_HD bool max_shift_accurate(double shifted_sum, double max_a, double max_b) const {
    const bool finite =
        max_a > -INFINITY && max_a < INFINITY && max_b > -INFINITY && max_b < INFINITY;
    return finite && shifted_sum >= kMaxShiftSafeSumPerTerm * static_cast<double>(reduce.size);
  }

  /// The max-shift epilogue at output (batch, row, col) from the GEMM's shifted sum S and the
  /// two row maxima: −inf when a whole row is zero weight; log S + m_A + m_B (+ constants) when
  /// accurate; otherwise, when `exact_fallback`, the generic element's value (with it off, the
  /// raw formula, −inf once S underflows: the documented limit of the plain algorithm).
  MYRIAD_HD void write_max_shift(std::int64_t s, std::int64_t row, std::int64_t col,
                                 double shifted_sum, double max_a, double max_b,
                                 bool exact_fallback = true) const {
    if (max_a == -INFINITY || max_b == -INFINITY)
      write(s, row, col, -INFINITY);  // every term has a zero-weight factor: exactly −inf
    else if (max_shift_accurate(shifted_sum, max_a, max_b) || !exact_fallback)
      write(s, row, col, myriad::log(shifted_sum) + max_a + max_b);
    else
      write_exact(s, row, col);
  }
};

/// The GEMM form of `step`, or nothing when the step is not GEMM-shaped: it must have an
/// output and exactly two inputs that vary over the eliminated assignments (one varying input
/// is a reduction, not a product; three or more do not factor into two operands). `why_not`,
/// when given, receives the reason.
std::optional<LogSemiringGemm> as_log_semiring_gemm(const LogSumProductStep& step,
                                                    std::string* why_not = nullptr);

// --- the tiled path --------------------------------------------------------------------------

/// A block's thread layout and tile: ThreadRows × ThreadCols threads, each owning
/// RowsPerThread × ColsPerThread outputs at rows ty + r·ThreadRows and columns
/// tx + c·ThreadCols of the tile (strided, so that a warp reads distinct consecutive shared
/// words or broadcasts), and kChunk reduction terms staged per round.
template <int ThreadRows, int ThreadCols, int RowsPerThread, int ColsPerThread>
struct LogGemmTiling {
  static constexpr int kThreadRows = ThreadRows;
  static constexpr int kThreadCols = ThreadCols;
  static constexpr int kRowsPerThread = RowsPerThread;
  static constexpr int kColsPerThread = ColsPerThread;
  static constexpr int kThreads = ThreadRows * ThreadCols;
  static constexpr int kTileRows = ThreadRows * RowsPerThread;
  static constexpr int kTileCols = ThreadCols * ColsPerThread;
  static constexpr int kChunk = 16;
  /// Row pitch of the staged tiles: one double of padding keeps the reduction-fastest
  /// staging stores (stride kPitch doubles across a warp) free of bank conflicts.
  static constexpr int kPitchA = kTileRows + 1;
  static constexpr int kPitchB = kTileCols + 1;
};

/// The tilings the tiled path instantiates, chosen by choose_log_gemm_tiling:
///   gemv_rows  256 × 1 threads, 256 × 1 tile: N = 1 (a batched GEMV over the rows);
///   gemv_cols  1 × 256, 1 × 256: M = 1;
///   tall       32 × 8, 2 × 1 each: 64 × 8 tile, N ≤ 8 (e.g. Chimpanzees' K⁴ × K block);
///   wide       8 × 32, 1 × 2 each: 8 × 64, M ≤ 8;
///   small      16 × 16, 1 × 1: 16 × 16, M, N ≤ 16 (chains at K ≤ 16);
///   square     16 × 16, 2 × 2: 32 × 32 otherwise.
/// 256 threads each; each thread's outputs keep (max, sum, chunk max) in registers, 12 doubles
/// for square, so several blocks fit per SM.
enum class LogGemmTilingId { gemv_rows, gemv_cols, tall, wide, small, square };
using LogGemmGemvRows = LogGemmTiling<256, 1, 1, 1>;
using LogGemmGemvCols = LogGemmTiling<1, 256, 1, 1>;
using LogGemmTall = LogGemmTiling<32, 8, 2, 1>;
using LogGemmWide = LogGemmTiling<8, 32, 1, 2>;
using LogGemmSmall = LogGemmTiling<16, 16, 1, 1>;
using LogGemmSquare = LogGemmTiling<16, 16, 2, 2>;

/// The tiling for an M × N output per batch (see LogGemmTilingId).
inline LogGemmTilingId choose_log_gemm_tiling(std::int64_t m, std::int64_t n) {
  if (n == 1) return LogGemmTilingId::gemv_rows;
  if (m == 1) return LogGemmTilingId::gemv_cols;
  if (n <= 8 && m > n) return LogGemmTilingId::tall;
  if (m <= 8) return LogGemmTilingId::wide;
  if (m <= 16 && n <= 16) return LogGemmTilingId::small;
  return LogGemmTilingId::square;
}

/// Calls f(Tiling{}) with the tiling type named by `id`.
template <class F>
decltype(auto) with_log_gemm_tiling(LogGemmTilingId id, F&& f) {
  switch (id) {
    case LogGemmTilingId::gemv_rows:
      return f(LogGemmGemvRows{});
    case LogGemmTilingId::gemv_cols:
      return f(LogGemmGemvCols{});
    case LogGemmTilingId::tall:
      return f(LogGemmTall{});
    case LogGemmTilingId::wide:
      return f(LogGemmWide{});
    case LogGemmTilingId::small:
      return f(LogGemmSmall{});
    case LogGemmTilingId::square:
      break;
  }
  return f(LogGemmSquare{});
}

/// Rows and columns of a tiling's tile, for host-side heuristics.
struct LogGemmTileShape {
  int rows = 0;
  int cols = 0;
};
inline LogGemmTileShape log_gemm_tile_shape(LogGemmTilingId id) {
  return with_log_gemm_tiling(id, [](auto tiling) {
    using Tiling = decltype(tiling);
    return LogGemmTileShape{Tiling::kTileRows, Tiling::kTileCols};
  });
}

/// What a block stages per round of the reduction (shared memory in the CUDA kernel): kChunk
/// reduction terms of a kTileRows-row tile of A and a kTileCols-column tile of B, stored
/// [k][row] and [k][col]; the operands' offsets at the tile's rows, columns (batch offset
/// included) and the round's reduction indices. Plain arrays, no constructor, so that it can
/// be a __shared__ variable.
template <class Tiling>
struct LogGemmStage {
  double a[Tiling::kChunk * Tiling::kPitchA];
  double b[Tiling::kChunk * Tiling::kPitchB];
  std::int64_t a_row[Tiling::kTileRows];
  std::int64_t b_col[Tiling::kTileCols];
  std::int64_t a_reduce[Tiling::kChunk];
  std::int64_t b_reduce[Tiling::kChunk];
};

/// One thread's outputs: the running maximum and the sum of exp(term − maximum) of each.
template <class Tiling>
struct LogGemmAccumulator {
  static constexpr int R = Tiling::kRowsPerThread;
  static constexpr int C = Tiling::kColsPerThread;
  double max[R][C];
  double sum[R][C];

  MYRIAD_HD void clear() {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        max[r][c] = -INFINITY;
        sum[r][c] = 0.0;
      }
  }

  /// The tile body: folds the staged terms k < count of the thread at (thread_row,
  /// thread_col) of the layout into its outputs. Two passes over the chunk as in the generic
  /// element (maximum, then shifted sum), the running sum rescaled once when the maximum
  /// grows (flash-attention's online softmax): one exp per term and per rescale, exact to
  /// rounding for any offsets, no eps; a non-finite maximum (all terms −inf so far, or +inf)
  /// shifts by 0, so a −inf term adds exp(−inf) = 0 and never NaN.
  MYRIAD_HD void fold(const double* a, const double* b, int thread_row, int thread_col, int count) {
    double shift[R][C];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) shift[r][c] = -INFINITY;  // the chunk's maximum first
    // The thread's operands of term k: R rows of A and C columns of B.
    const auto load = [&](int k, double* ar, double* bc) {
      for (int r = 0; r < R; ++r)
        ar[r] = a[k * Tiling::kPitchA + thread_row + r * Tiling::kThreadRows];
      for (int c = 0; c < C; ++c)
        bc[c] = b[k * Tiling::kPitchB + thread_col + c * Tiling::kThreadCols];
    };
    for (int k = 0; k < count; ++k) {
      double ar[R], bc[C];
      load(k, ar, bc);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
          const double x = ar[r] + bc[c];
          shift[r][c] = x > shift[r][c] ? x : shift[r][c];
        }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < C; ++c) {
        if (shift[r][c] > max[r][c]) {
          sum[r][c] *= myriad::exp(max[r][c] - shift[r][c]);  // exp(−inf) = 0 on the first
          max[r][c] = shift[r][c];
        }
        shift[r][c] = max[r][c] > -INFINITY && max[r][c] < INFINITY ? max[r][c] : 0.0;
      }
    for (int k = 0; k < count; ++k) {
      double ar[R], bc[C];
      load(k, ar, bc);
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) sum[r][c] += myriad::exp(ar[r] + bc[c] - shift[r][c]);
    }
  }

  /// LSE of the folded terms of output (r, c): max + log(sum), or max when the sum is 0 (all
  /// terms −inf) — the generic element's final step.
  MYRIAD_HD double log_sum(int r, int c) const {
    return sum[r][c] > 0.0 ? max[r][c] + myriad::log(sum[r][c]) : max[r][c];
  }
};

/// Which outputs a block computes: batch index and first row and column of its tile.
struct LogGemmTile {
  std::int64_t batch = 0;
  std::int64_t row0 = 0;
  std::int64_t col0 = 0;
};

/// The phases of one block of the tiled path, separated by barriers:
///   begin (tile offsets) | stage_reduce_offsets | stage_operands | fold | … | finish
/// with stage_reduce_offsets … fold repeated per chunk of kChunk reduction terms. Each phase
/// is run by every thread of the block with its index `thread`; no phase reads what another
/// thread writes in the same phase.
template <class Tiling>
struct LogGemmBlock {
  using Stage = LogGemmStage<Tiling>;
  using Accumulator = LogGemmAccumulator<Tiling>;

  static MYRIAD_HD std::int64_t row_tiles(const LogSemiringGemm& g) {
    return (g.m() + Tiling::kTileRows - 1) / Tiling::kTileRows;
  }
  static MYRIAD_HD std::int64_t col_tiles(const LogSemiringGemm& g) {
    return (g.n() + Tiling::kTileCols - 1) / Tiling::kTileCols;
  }
  /// Tiles of the whole step: batch slowest, then row tiles, column tiles fastest.
  static MYRIAD_HD std::int64_t tiles(const LogSemiringGemm& g) {
    return g.batches() * row_tiles(g) * col_tiles(g);
  }
  static MYRIAD_HD LogGemmTile tile_at(const LogSemiringGemm& g, std::int64_t t) {
    const std::int64_t cols = col_tiles(g), per_batch = row_tiles(g) * cols;
    LogGemmTile tile;
    tile.batch = t / per_batch;
    const std::int64_t rest = t - tile.batch * per_batch;
    tile.row0 = rest / cols * Tiling::kTileRows;
    tile.col0 = (rest % cols) * Tiling::kTileCols;
    return tile;
  }

  /// A's offsets at the tile's rows and B's at its columns (batch included).
  static MYRIAD_HD void begin(const LogSemiringGemm& g, const LogGemmTile& tile, Stage& stage,
                              int thread) {
    for (int i = thread; i < Tiling::kTileRows + Tiling::kTileCols; i += Tiling::kThreads) {
      if (i < Tiling::kTileRows) {
        const std::int64_t row = tile.row0 + i;
        stage.a_row[i] = row < g.m() ? g.offset(g.batch, tile.batch, g.a_input) +
                                           g.offset(g.rows, row, g.a_input)
                                     : 0;
      } else {
        const int j = i - Tiling::kTileRows;
        const std::int64_t col = tile.col0 + j;
        stage.b_col[j] = col < g.n() ? g.offset(g.batch, tile.batch, g.b_input) +
                                           g.offset(g.cols, col, g.b_input)
                                     : 0;
      }
    }
  }

  /// A's and B's offsets at the reduction indices k0 … k0 + kChunk − 1.
  static MYRIAD_HD void stage_reduce_offsets(const LogSemiringGemm& g, std::int64_t k0,
                                             Stage& stage, int thread) {
    for (int i = thread; i < 2 * Tiling::kChunk; i += Tiling::kThreads) {
      const int k = i % Tiling::kChunk;
      const std::int64_t e = k0 + k;
      const bool b_side = i >= Tiling::kChunk;
      const std::int64_t offset =
          e < g.k() ? g.offset(g.reduce, e, b_side ? g.b_input : g.a_input) : 0;
      (b_side ? stage.b_reduce : stage.a_reduce)[k] = offset;
    }
  }

  /// The chunk's operand tiles; entries outside the step (rows ≥ M, columns ≥ N, reduction
  /// indices ≥ K) are −inf, a zero weight. The reduction index runs fastest across threads
  /// when the operand is contiguous along it, else the row (column) index, so that a warp's
  /// loads coalesce in either layout.
  static MYRIAD_HD void stage_operands(const LogSemiringGemm& g, const LogGemmTile& tile,
                                       std::int64_t k0, Stage& stage, int thread) {
    const std::int64_t k_left = g.k() - k0;
    stage_operand<Tiling::kTileRows, Tiling::kPitchA>(
        g.step.element.data[g.a_input], g.a_reduce_contiguous, k_left, tile.row0, g.m(),
        stage.a_row, stage.a_reduce, stage.a, thread);
    stage_operand<Tiling::kTileCols, Tiling::kPitchB>(
        g.step.element.data[g.b_input], g.b_reduce_contiguous, k_left, tile.col0, g.n(),
        stage.b_col, stage.b_reduce, stage.b, thread);
  }

  /// One operand's kChunk × kExtent tile for stage_operands: A's rows (kExtent = kTileRows) or
  /// B's columns (kTileCols). Entry (k, j) goes to tile[k · kPitch + j] from
  /// x[index_offset[j] + reduce_offset[k]], or is −inf when k ≥ k_left or first + j ≥ extent.
  template <int kExtent, int kPitch>
  static MYRIAD_HD void stage_operand(const double* x, bool reduce_contiguous, std::int64_t k_left,
                                      std::int64_t first, std::int64_t extent,
                                      const std::int64_t* index_offset,
                                      const std::int64_t* reduce_offset, double* tile, int thread) {
    for (int i = thread; i < Tiling::kChunk * kExtent; i += Tiling::kThreads) {
      const int k = reduce_contiguous ? i % Tiling::kChunk : i / kExtent;
      const int j = reduce_contiguous ? i / Tiling::kChunk : i % kExtent;
      const bool inside = k < k_left && first + j < extent;
      tile[k * kPitch + j] = inside ? x[index_offset[j] + reduce_offset[k]] : -INFINITY;
    }
  }

  static MYRIAD_HD int thread_row(int thread) { return thread / Tiling::kThreadCols; }
  static MYRIAD_HD int thread_col(int thread) { return thread % Tiling::kThreadCols; }

  /// The tile body on the staged chunk: terms k0 … min(k0 + kChunk, K) − 1.
  static MYRIAD_HD void fold(const LogSemiringGemm& g, std::int64_t k0, const Stage& stage,
                             Accumulator& acc, int thread) {
    const std::int64_t left = g.k() - k0;
    const int count = left < Tiling::kChunk ? static_cast<int>(left) : Tiling::kChunk;
    acc.fold(stage.a, stage.b, thread_row(thread), thread_col(thread), count);
  }

  /// The epilogue: each of the thread's outputs inside the step, plus the constant inputs,
  /// written through the step's output strides.
  static MYRIAD_HD void finish(const LogSemiringGemm& g, const LogGemmTile& tile,
                               const Accumulator& acc, int thread) {
    for (int r = 0; r < Tiling::kRowsPerThread; ++r)
      for (int c = 0; c < Tiling::kColsPerThread; ++c) {
        const std::int64_t row = tile.row0 + thread_row(thread) + r * Tiling::kThreadRows;
        const std::int64_t col = tile.col0 + thread_col(thread) + c * Tiling::kThreadCols;
        if (row < g.m() && col < g.n()) g.write(tile.batch, row, col, acc.log_sum(r, c));
      }
  }
};

// --- host twins and path choice ----------------------------------------------------------

/// The tiled path on the host: every tile of `gemm` computed by running each phase of
/// LogGemmBlock for every thread in turn (exactly the CUDA block's computation, barriers
/// included), written through the step's output strides. Data pointers must be host memory.
void run_log_semiring_gemm_tiled_host(const LogSemiringGemm& gemm, LogGemmTilingId tiling);
inline void run_log_semiring_gemm_tiled_host(const LogSemiringGemm& gemm) {
  run_log_semiring_gemm_tiled_host(gemm, choose_log_gemm_tiling(gemm.m(), gemm.n()));
}

/// Scratch doubles per batch of the max-shift path: the packed operands (K · (M + N)), their
/// row maxima (M + N) and the GEMM's output (M · N).
std::int64_t max_shift_scratch_per_batch(const LogSemiringGemm& gemm);
/// Batches the max-shift path processes at once so that its scratch stays within
/// `budget_bytes` (at least one), also capped by cuBLAS's int batch count.
std::int64_t max_shift_batches_per_round(const LogSemiringGemm& gemm, std::int64_t budget_bytes);
/// Scratch budget of the max-shift path's rounds on the device.
inline constexpr std::int64_t kMaxShiftScratchBytes = std::int64_t{256} << 20;

/// The max-shift (cuBLAS) path on the host, with a plain triple loop for the GEMM: per round
/// of batches, pack exp(A − m_A) and exp(B − m_B) into [batch][e][a] and [batch][e][b]
/// buffers, sum over e, then the epilogue. With `exact_fallback` off the inaccurate elements
/// keep the raw formula (to demonstrate the underflow limit of mpis.md §3.4).
void run_log_semiring_gemm_max_shift_host(const LogSemiringGemm& gemm, bool exact_fallback = true,
                                          std::int64_t budget_bytes = kMaxShiftScratchBytes);

/// Reduction extent at or above which `automatic` takes the tiled path: below it the generic
/// element's two passes are only a few terms each. Unmeasured (no device was at hand when it
/// was written); BM_log_semiring_gemm is the place to tune it.
inline constexpr std::int64_t kAutoTiledMinReduction = 8;
/// Smallest fraction of a tile's outputs that must lie inside the step for `automatic` to
/// take the tiled path (a 16 × 16 tile over a 4 × 4 output idles 15/16 of its threads).
/// Unmeasured, as above.
inline constexpr double kAutoTiledMinTileFill = 0.25;

/// The path run_log_sum_product takes on the CUDA policy for a step whose GEMM form is `gemm`
/// (nullptr when not GEMM-shaped): generic stays generic; tiled and cublas need a GEMM shape
/// (else generic), and cublas also M, N, K within cuBLAS's int and one batch's scratch within
/// kMaxShiftScratchBytes (else tiled), so that its scratch never exceeds that; automatic is
/// tiled when K ≥ kAutoTiledMinReduction and the tile fill is at least kAutoTiledMinTileFill,
/// else generic — never cublas, which is exact only within double range (mpis.md §3.4).
/// Returns generic, tiled or cublas.
ContractionPath resolve_contraction_path(ContractionPath requested, const LogSemiringGemm* gemm);

}  // namespace myriad
