#pragma once
// A known posterior mean and standard deviation of one quantity: what built-in models with a
// closed-form posterior report so that runs (and tests) can be checked against the truth.

#include <string>

namespace myriad {

/// A known posterior mean and standard deviation of a recorded quantity.
struct ExactMoment {
  std::string name;
  double mean;
  double sd;
};

}  // namespace myriad
