#pragma once
// A DrawSink for tests: keeps every delivered chunk and checks that chunks arrive in order,
// without gaps. Shared by the backend agreement tests (CUDA against CPU, and the FMA experiment).

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "myriad/backend/hmc_backend.hpp"

namespace myriad::testing {

template <class T>
class RecordingSink final : public DrawSink<T> {
 public:
  RecordingSink(std::int64_t chains, int quantities, std::int64_t first_draw)
      : chains_(chains), quantities_(quantities), next_draw_(first_draw) {}

  void consume(const T* values, std::int64_t first_draw, int num_draws) override {
    EXPECT_EQ(first_draw, next_draw_) << "chunks out of order or with a gap";
    next_draw_ = first_draw + num_draws;
    chunk_sizes.push_back(num_draws);
    values_.insert(values_.end(), values, values + num_draws * quantities_ * chains_);
  }

  /// Quantity q of chain c at draw i (counted from the first draw of the run).
  T at(int i, int q, std::int64_t c) const {
    return values_[static_cast<std::size_t>(
        (static_cast<std::int64_t>(i) * quantities_ + q) * chains_ + c)];
  }
  int draws() const { return static_cast<int>(values_.size() / (quantities_ * chains_)); }
  const std::vector<T>& values() const { return values_; }

  std::vector<int> chunk_sizes;

 private:
  std::int64_t chains_;
  int quantities_;
  std::int64_t next_draw_;
  std::vector<T> values_;
};

}  // namespace myriad::testing
