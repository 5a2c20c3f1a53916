#include "myriad/diag/rhat.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "myriad/diag/normal_quantile.hpp"

namespace myriad::diag {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// R̂ of m sequences of n draws read through value(sequence, draw); BDA3 eq. (11.3)–(11.4) in
// the form of ArviZ: R̂ = sqrt(B_n/W + (n − 1)/n) with B_n the variance of the sequence means
// (divisor m − 1) and W the mean of the within-sequence variances (divisor n − 1).
template <class Value>
double scale_reduction(int64_t m, int64_t n, const Value& value) {
  if (m < 2 || n < 2) return kNaN;
  double sum_of_means = 0.0;
  double sum_of_variances = 0.0;
  std::vector<double> means(static_cast<size_t>(m));
  for (int64_t s = 0; s < m; ++s) {
    double sum = 0.0;
    for (int64_t t = 0; t < n; ++t) sum += value(s, t);
    const double mean = sum / static_cast<double>(n);
    double squares = 0.0;
    for (int64_t t = 0; t < n; ++t) {
      const double d = value(s, t) - mean;
      squares += d * d;
    }
    means[s] = mean;
    sum_of_means += mean;
    sum_of_variances += squares / static_cast<double>(n - 1);
  }
  const double grand_mean = sum_of_means / static_cast<double>(m);
  double between = 0.0;
  for (double mean : means) between += (mean - grand_mean) * (mean - grand_mean);
  between /= static_cast<double>(m - 1);
  const double within = sum_of_variances / static_cast<double>(m);
  if (!std::isfinite(within) || !std::isfinite(between)) return kNaN;
  if (within == 0.0) return between == 0.0 ? kNaN : std::numeric_limits<double>::infinity();
  return std::sqrt(between / within + static_cast<double>(n - 1) / static_cast<double>(n));
}

bool all_finite(DrawsView v) {
  for (int64_t c = 0; c < v.chains; ++c) {
    for (int64_t t = 0; t < v.draws; ++t) {
      if (!std::isfinite(v(c, t))) return false;
    }
  }
  return true;
}

// Maps a double to an unsigned integer with the same order (IEEE 754 total order for
// non-NaN values): flip all bits of negatives, set the sign bit of non-negatives.
uint64_t order_preserving_bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return (u >> 63) != 0 ? ~u : (u | (uint64_t{1} << 63));
}

// LSD radix sort of `keys` on bits [low_bit, 64), 11 bits per pass; `scratch` is resized.
// Passes in which every key has the same digit are skipped.
void radix_sort_high_bits(std::vector<uint64_t>& keys, std::vector<uint64_t>& scratch,
                          int low_bit) {
  constexpr int kDigitBits = 11;
  constexpr int64_t kBuckets = int64_t{1} << kDigitBits;
  const int passes = (64 - low_bit + kDigitBits - 1) / kDigitBits;
  const int64_t n = static_cast<int64_t>(keys.size());
  std::vector<int64_t> counts(static_cast<size_t>(passes * kBuckets), 0);
  for (uint64_t key : keys) {
    for (int p = 0; p < passes; ++p) {
      ++counts[p * kBuckets +
               static_cast<int64_t>((key >> (low_bit + p * kDigitBits)) & (kBuckets - 1))];
    }
  }
  scratch.resize(keys.size());
  for (int p = 0; p < passes; ++p) {
    int64_t* count = counts.data() + p * kBuckets;
    bool trivial = false;
    int64_t offset = 0;
    for (int64_t b = 0; b < kBuckets; ++b) {
      if (count[b] == n) trivial = true;
      const int64_t c = count[b];
      count[b] = offset;
      offset += c;
    }
    if (trivial) continue;
    const int shift = low_bit + p * kDigitBits;
    for (uint64_t key : keys) scratch[count[(key >> shift) & (kBuckets - 1)]++] = key;
    keys.swap(scratch);
  }
}

}  // namespace

double potential_scale_reduction(DrawsView chains) {
  return scale_reduction(chains.chains, chains.draws,
                         [&](int64_t s, int64_t t) { return chains(s, t); });
}

double split_rhat_basic(DrawsView draws) {
  if (draws.chains < 1 || draws.draws < 4 || !all_finite(draws)) return kNaN;
  const int64_t half = draws.draws / 2;
  const int64_t second = draws.draws - half;  // first draw of the second half
  return scale_reduction(2 * draws.chains, half,
                         [&](int64_t s, int64_t t) { return draws(s >> 1, (s & 1) * second + t); });
}

double rhat(DrawsView draws) {
  const RankedDraws ranked(draws);
  if (!ranked.valid()) return kNaN;
  const double bulk = potential_scale_reduction(ranked.bulk());
  const double tail = potential_scale_reduction(ranked.folded());
  if (std::isnan(bulk) || std::isnan(tail)) return kNaN;
  return std::max(bulk, tail);
}

void RankedDraws::assign(DrawsView draws) {
  const bool empty = draws.data == nullptr || draws.chains <= 0 || draws.draws <= 0;
  chains_ = empty ? 0 : draws.chains;
  const int64_t n = empty ? 0 : draws.draws;
  half_ = n / 2;
  const int64_t split_size = 2 * chains_ * half_;
  const int64_t size = chains_ * n;

  // Split layout: chain c's first half is split chain 2c, its last half split chain 2c + 1;
  // the middle draws of odd-length chains follow all split chains.
  values_.resize(static_cast<size_t>(size));
  const int64_t second = n - half_;
  double sum = 0.0;
  for (int64_t c = 0; c < chains_; ++c) {
    double* first_half = values_.data() + 2 * c * half_;
    double* second_half = first_half + half_;
    for (int64_t t = 0; t < half_; ++t) {
      first_half[t] = draws(c, t);
      second_half[t] = draws(c, second + t);
      sum += first_half[t] + second_half[t];
    }
    if (second != half_) {
      values_[split_size + c] = draws(c, half_);
      sum += draws(c, half_);
    }
  }
  // A non-finite sum means a non-finite draw, or finite draws large enough to overflow.
  const bool finite = std::isfinite(sum) || std::all_of(values_.begin(), values_.end(),
                                                        [](double x) { return std::isfinite(x); });

  sorted_valid_ = finite && size > 0;
  valid_ = sorted_valid_ && chains_ >= 1 && n >= 4;
  sorted_.clear();
  bulk_.clear();
  folded_.clear();
  if (!sorted_valid_) return;
  sort_values();
  if (valid_) rank_split_draws();
}

void RankedDraws::sort_values() {
  const int64_t size = static_cast<int64_t>(values_.size());
  // Each key packs the value's order-preserving bits above a values_ index, so one 64-bit sort
  // moves both. The index overwrites the low mantissa bits; draws that agree on all kept bits
  // are put in exact order afterwards.
  index_bits_ = 1;
  while ((int64_t{1} << index_bits_) < size) ++index_bits_;
  const uint64_t index_mask = (uint64_t{1} << index_bits_) - 1;
  keys_.resize(values_.size());
  for (int64_t i = 0; i < size; ++i) {
    keys_[i] = (order_preserving_bits(values_[i]) & ~index_mask) | static_cast<uint64_t>(i);
  }
  // LSD radix sort is O(S) and several times faster than std::sort for large pools.
  if (size < 4096) {
    std::sort(keys_.begin(), keys_.end());
  } else {
    radix_sort_high_bits(keys_, scratch_, index_bits_);
  }
  sorted_.resize(values_.size());
  for (int64_t p = 0; p < size; ++p) {
    sorted_[p] = values_[keys_[p] & index_mask];
  }
  // Runs that share the truncated bits are in index order; sort those that are out of order.
  std::vector<std::pair<double, uint64_t>> run;
  for (int64_t a = 0; a < size;) {
    int64_t b = a + 1;
    while (b < size && (keys_[b] >> index_bits_) == (keys_[a] >> index_bits_)) ++b;
    if (b - a > 1 && !std::is_sorted(sorted_.begin() + a, sorted_.begin() + b)) {
      run.clear();
      for (int64_t p = a; p < b; ++p) run.emplace_back(sorted_[p], keys_[p]);
      std::sort(run.begin(), run.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      for (int64_t p = a; p < b; ++p) {
        sorted_[p] = run[p - a].first;
        keys_[p] = run[p - a].second;
      }
    }
    a = b;
  }
}

// Receives the split draws in ascending order of some value (the draw, or its distance from
// the median) and writes their Blom scores at their split positions. Equal values share the
// average of their ranks. Scores arrive in rank order but belong at random positions; writing
// them there directly costs a cache miss each, so they go first to buckets of 2^kBlockBits
// consecutive positions (one sequential stream per bucket) and then into each
// cache-resident block.
class RankedDraws::ScoreScatter {
 public:
  ScoreScatter(RankedDraws& owner, int64_t size)
      : owner_(owner), size_(size), buckets_((size >> kBlockBits) + 1) {
    owner_.scattered_.resize(static_cast<size_t>(buckets_ * kBucketStride));
    owner_.bucket_ends_.resize(static_cast<size_t>(buckets_));
    restart();
  }

  void restart() {
    for (int64_t b = 0; b < buckets_; ++b) owner_.bucket_ends_[b] = b * kBucketStride;
    ranks_below_ = 0;
    group_size_ = 0;
  }

  void add(double value, int64_t index) {
    if (group_size_ > 0 && value == group_value_) {
      if (group_size_ == 1) {
        owner_.tie_group_.clear();
        owner_.tie_group_.push_back(first_index_);
      }
      owner_.tie_group_.push_back(index);
      ++group_size_;
      return;
    }
    close_group();
    group_value_ = value;
    first_index_ = index;
    group_size_ = 1;
  }

  void finish(std::vector<double>& out) {
    close_group();
    out.resize(static_cast<size_t>(size_));
    for (int64_t b = 0; b < buckets_; ++b) {
      for (int64_t i = b * kBucketStride; i < owner_.bucket_ends_[b]; ++i) {
        out[owner_.scattered_[i].index] = owner_.scattered_[i].score;
      }
    }
  }

 private:
  static constexpr int kBlockBits = 14;  // blocks of 128 KiB stay in L2; 256 write streams
  // Buckets are 2^kBlockBits entries plus 3 cache lines apart: with a power-of-two spacing all
  // write streams would map to the same cache sets and evict each other.
  static constexpr int64_t kBucketStride = (int64_t{1} << kBlockBits) + 12;

  void close_group() {
    if (group_size_ == 1) {
      emit(first_index_, owner_.blom_scores_[ranks_below_]);
    } else if (group_size_ > 1) {
      const double z = tied_score();
      for (int64_t index : owner_.tie_group_) emit(index, z);
    }
    ranks_below_ += group_size_;
    group_size_ = 0;
  }

  // The tied draws hold ranks ranks_below + 1 … ranks_below + k; each gets their average.
  double tied_score() const {
    const int64_t k = group_size_;
    if (k % 2 == 1) return owner_.blom_scores_[ranks_below_ + (k - 1) / 2];
    const double rank = static_cast<double>(ranks_below_) + 0.5 * static_cast<double>(k + 1);
    return normal_quantile((rank - 0.375) / (static_cast<double>(size_) + 0.25));
  }

  void emit(int64_t index, double z) {
    int64_t& end = owner_.bucket_ends_[index >> kBlockBits];
    owner_.scattered_[end++] = {index, z};
  }

  RankedDraws& owner_;
  int64_t size_;
  int64_t buckets_;
  int64_t ranks_below_ = 0;
  int64_t group_size_ = 0;
  double group_value_ = 0.0;
  int64_t first_index_ = 0;
};

void RankedDraws::rank_split_draws() {
  const int64_t size = static_cast<int64_t>(values_.size());
  const int64_t split_size = 2 * chains_ * half_;
  const uint64_t index_mask = (uint64_t{1} << index_bits_) - 1;
  if (static_cast<int64_t>(blom_scores_.size()) != split_size) {
    // Blom (1958) scores z_r = Φ⁻¹((r − 3/8)/(S + 1/4)) at integer ranks, tabulated once per
    // pool size: evaluating Φ⁻¹ per draw would otherwise dominate the cost of a summary.
    blom_scores_.resize(static_cast<size_t>(split_size));
    const double denominator = static_cast<double>(split_size) + 0.25;
    for (int64_t r = 1; r <= split_size; ++r) {
      blom_scores_[r - 1] = normal_quantile((static_cast<double>(r) - 0.375) / denominator);
    }
  }

  // The split draws in ascending order: the sorted draws themselves for even chain lengths,
  // else a copy without the middle draws.
  const double* split_sorted = sorted_.data();
  const uint64_t* split_keys = keys_.data();
  if (size != split_size) {
    split_sorted_.resize(static_cast<size_t>(split_size));
    scratch_.resize(static_cast<size_t>(split_size));
    int64_t kept = 0;
    for (int64_t p = 0; p < size; ++p) {
      if (static_cast<int64_t>(keys_[p] & index_mask) < split_size) {
        split_sorted_[kept] = sorted_[p];
        scratch_[kept] = keys_[p];
        ++kept;
      }
    }
    split_sorted = split_sorted_.data();
    split_keys = scratch_.data();
  }
  auto index_at = [&](int64_t p) { return static_cast<int64_t>(split_keys[p] & index_mask); };

  // Bulk: ranks of the split draws themselves.
  ScoreScatter scatter(*this, split_size);
  for (int64_t p = 0; p < split_size; ++p) scatter.add(split_sorted[p], index_at(p));
  scatter.finish(bulk_);

  // Folded: |x − m| grows leftwards and rightwards from the median m (numpy's: the mean of the
  // two central draws, split_size being even), so its order is a merge of the two runs of the
  // sorted draws. (x − m is computed exactly as ArviZ does, so ties fall where they do there.)
  const double median = (split_sorted[split_size / 2 - 1] + split_sorted[split_size / 2]) / 2.0;
  int64_t left = std::lower_bound(split_sorted, split_sorted + split_size, median) - split_sorted;
  int64_t right = left--;
  scatter.restart();
  while (left >= 0 && right < split_size) {
    const double from_left = std::fabs(split_sorted[left] - median);
    const double from_right = std::fabs(split_sorted[right] - median);
    // Branch-free selection: which side comes next is a coin flip for symmetric draws.
    const int64_t take_left = from_left <= from_right ? 1 : 0;
    scatter.add(std::min(from_left, from_right), index_at(right + take_left * (left - right)));
    left -= take_left;
    right += 1 - take_left;
  }
  for (; left >= 0; --left) scatter.add(std::fabs(split_sorted[left] - median), index_at(left));
  for (; right < split_size; ++right) {
    scatter.add(std::fabs(split_sorted[right] - median), index_at(right));
  }
  scatter.finish(folded_);
}

double RankedDraws::quantile(double prob) const {
  if (!sorted_valid_ || !(prob >= 0.0 && prob <= 1.0)) return kNaN;
  const int64_t n = static_cast<int64_t>(sorted_.size());
  const double h = static_cast<double>(n - 1) * prob;
  const int64_t below = std::min<int64_t>(static_cast<int64_t>(std::floor(h)), n - 1);
  if (below + 1 >= n) return sorted_[n - 1];
  const double a = sorted_[below];
  const double b = sorted_[below + 1];
  const double t = h - static_cast<double>(below);
  // numpy's _lerp: interpolate from the nearer end so that t = 1 returns b exactly.
  return t < 0.5 ? a + (b - a) * t : b - (b - a) * (1.0 - t);
}

DrawsView RankedDraws::trimmed() const {
  return DrawsView{values_.data(), chains_, 2 * half_, 2 * half_, 1};
}

DrawsView RankedDraws::bulk() const {
  if (!valid_) return DrawsView{};
  return DrawsView{bulk_.data(), 2 * chains_, half_, half_, 1};
}

DrawsView RankedDraws::folded() const {
  if (!valid_) return DrawsView{};
  return DrawsView{folded_.data(), 2 * chains_, half_, half_, 1};
}

}  // namespace myriad::diag
