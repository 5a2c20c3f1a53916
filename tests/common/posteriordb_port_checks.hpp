#pragma once
// What the tests of the posteriordb ports (unit/models/test_<port>.cpp: arK, arma11, garch11,
// low_dim_gauss_mix, gp_pois_regr, hmm_example, one_comp_mm_elim_abs) share, and the reading of
// tests/data/posteriordb (BSD 3-Clause, from stan-dev/posteriordb) that the statistical tests
// share too (stat/posteriordb.hpp):
//  - posteriordb's files: a posterior's data.json and the variables of its reference.csv;
//  - the test points: near the reference, in Stan's start region, and far;
//  - RoundedSum: a transcription of Stan's model block summed with its first-order rounding bound;
//  - the checks: the model's log density against a transcription, its gradient by duals against
//    scalar duals and central finite differences, and the traits every port has.
// Each test brings its own transcription and its own bounds: the helpers take them as callables.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/density_derivatives.hpp"
#include "common/density_only.hpp"
#include "common/test_points.hpp"
#include "myriad/model/concept.hpp"
#include "myriad/model/library_instances.hpp"

#ifndef MYRIAD_TEST_DATA_DIR
#error "MYRIAD_TEST_DATA_DIR must name tests/data (tests/CMakeLists.txt)"
#endif

namespace myriad::testing {

// ---------------------------------------------------------------------------------------------
// posteriordb's files.

/// tests/data/posteriordb/<posterior>/<file>.
inline std::string posteriordb_path(const std::string& posterior, const std::string& file) {
  // The environment's MYRIAD_TEST_DATA_DIR first: on the GPU machine the tree that the binaries
  // were built from is elsewhere (scripts/gpu-check sets it).
  const char* dir = std::getenv("MYRIAD_TEST_DATA_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : MYRIAD_TEST_DATA_DIR) +
         "/posteriordb/" + posterior + "/" + file;
}

/// The posterior's <file>, opened; a file that cannot be read fails the test (the checks that
/// follow would only see an empty posterior).
inline std::ifstream posteriordb_file(const std::string& posterior, const std::string& file) {
  std::ifstream in(posteriordb_path(posterior, file));
  EXPECT_TRUE(in.good()) << "cannot read " << posteriordb_path(posterior, file);
  return in;
}

/// One row of a reference.csv: Stan's reference draws summarised (mcse_mean = sd / √ess_bulk).
struct ReferenceSummary {
  std::string name;
  double mean = 0, sd = 0, mcse_mean = 0, q5 = 0, q50 = 0, q95 = 0, ess_bulk = 0;
};

/// The posterior's reference.csv, its rows in the file's order.
inline std::vector<ReferenceSummary> posteriordb_reference_rows(const std::string& posterior) {
  std::ifstream in = posteriordb_file(posterior, "reference.csv");
  std::vector<ReferenceSummary> rows;
  std::string line;
  std::getline(in, line);  // variable,mean,sd,mcse_mean,q5,q50,q95,ess_bulk
  EXPECT_EQ(line, "variable,mean,sd,mcse_mean,q5,q50,q95,ess_bulk");
  while (std::getline(in, line)) {
    std::stringstream fields(line);
    ReferenceSummary r;
    std::string cell;
    std::getline(fields, r.name, ',');
    double* values[] = {&r.mean, &r.sd, &r.mcse_mean, &r.q5, &r.q50, &r.q95, &r.ess_bulk};
    for (double* v : values) {
      std::getline(fields, cell, ',');
      *v = std::stod(cell);
    }
    rows.push_back(r);
  }
  return rows;
}

/// The posterior's data.json.
inline nlohmann::json posteriordb_data(const std::string& posterior) {
  std::ifstream in = posteriordb_file(posterior, "data.json");
  return nlohmann::json::parse(in);
}

/// The posterior's data.json as a Data, by nlohmann-json's from_json for it: a port's test
/// declares its data block's members by their names in data.json with
/// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Data, members...), and each is read by json.at(name).
template <class Data>
Data posteriordb_data_as(const std::string& posterior) {
  return posteriordb_data(posterior).get<Data>();
}

/// The first column of the posterior's reference.csv: its variables, in order, which a port's
/// recorded quantities must name exactly (Stan's names and order, so that the statistical tests
/// can compare them by name).
inline std::vector<std::string> posteriordb_reference_variables(const std::string& posterior) {
  std::ifstream in = posteriordb_file(posterior, "reference.csv");
  std::vector<std::string> names;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) names.push_back(line.substr(0, line.find(',')));
  return names;
}

// ---------------------------------------------------------------------------------------------
// Test points.

/// Where a port's tests evaluate it: `seed`'s standard normals z for point p (Stan's default
/// start region is uniform on [−2, 2]; standard normals stand in for it), moved to
/// centre + width · spread ⊙ z for p < near (within `width` posterior sds of the reference's
/// unconstrained means `centre` and sds `spread`), and replaced by far[p − first_far] for
/// p ≥ first_far (far but finite points, each named where the test lists them); count() in all.
struct PortPoints {
  std::uint64_t seed = 0;
  std::vector<double> centre, spread;
  double width = 0;
  int near = 0, first_far = 0;
  std::vector<std::vector<double>> far;

  int count() const { return first_far + static_cast<int>(far.size()); }
  std::vector<double> operator()(int p) const {
    std::vector<double> x = standard_normals(seed, p, static_cast<int>(centre.size()));
    if (p < near) {
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = centre[i] + width * spread[i] * x[i];
    } else if (p >= first_far) {
      x = far[static_cast<std::size_t>(p - first_far)];
    }
    return x;
  }
};

/// Points 0 … count − 1 given by point(p), as the checks below take them (like PortPoints).
template <class Point>
struct CountedPoints {
  int n = 0;
  Point point;
  int count() const { return n; }
  std::vector<double> operator()(int p) const { return point(p); }
};

/// CountedPoints of `point`, `count` of them.
template <class Point>
CountedPoints<Point> counted_points(int count, Point point) {
  return {count, point};
}

// ---------------------------------------------------------------------------------------------
// The transcriptions' rounding.

/// What a check of the model's log p against a transcription needs at one point: the
/// transcription's value, the bound on |model − value| there, and whether the transcription
/// could be evaluated at all (one that cannot fails the test: the point is not checked).
struct Transcribed {
  double value = 0, tolerance = 0;
  bool ok = true;
};

/// What a check of the model's gradient by duals needs at one point (DerivativeTolerances):
/// `value`, the bound on |duals' or supplied log p − plain log p| (the same function evaluated
/// in another order), and `rounding`, δf, the bound on one evaluation's error, which sets the
/// central differences' rounding allowance δf/h.
struct DualBounds {
  double value = 0, rounding = 0;
};

/// A sum with its first-order rounding-error scale (Higham, "Accuracy and Stability of Numerical
/// Algorithms", 2nd ed., §3.1, §4.2): `scale` is Σ|t_i| plus, per term, the effect on t_i of the
/// rounding of its inputs (`propagated`, in units of ε). One evaluation of the sum, by this
/// transcription or by the model in another order, is then within (count/2 + 8) ε · scale of the
/// exact value: γ_n ≤ 1.01 n u = 0.505 n ε for the sum of n terms, and a few ulps per term.
struct RoundedSum {
  double value = 0, scale = 0;
  int count = 0;
  void add(double t, double propagated = 0) {
    value += t;
    scale += std::fabs(t) + propagated;
    ++count;
  }
  /// |model − transcription| ≤ twice one evaluation's bound, with a factor 2 to spare:
  /// 2 (count + 16) ε · scale (below 1e-12 · scale for the ≤ 1000 terms of these tests).
  double tolerance() const { return 2 * (count + 16) * kEps * scale; }
  /// One evaluation's bound, δf of the central differences.
  double rounding() const { return (count / 2.0 + 8) * kEps * scale; }
  /// As the log-density check takes it: within tolerance(); a non-finite sum is no transcription.
  operator Transcribed() const { return {value, tolerance(), std::isfinite(value)}; }
  /// As the gradient check takes it: the model against itself in another order within
  /// tolerance() (both are evaluations of the same sum), δf = rounding().
  operator DualBounds() const { return {tolerance(), rounding()}; }
};

/// log N(x; mean, sd) as its three terms. The rounding of x − mean, |x| + |mean| in units of ε,
/// plus `input_scale`, a bound in units of ε on the rounding of the arithmetic that formed x and
/// mean, moves −½z² by |z| ε (|x| + |mean| + input_scale)/sd; a relative error sd_error · ε of sd
/// moves −log sd by sd_error · ε and −½z² by z² sd_error · ε.
inline void add_normal(RoundedSum& terms, double x, double mean, double sd, double input_scale = 0,
                       double sd_error = 0) {
  const double z = (x - mean) / sd;
  terms.add(-0.5 * std::log(2 * M_PI));
  terms.add(-std::log(sd), sd_error);
  terms.add(-0.5 * z * z,
            std::fabs(z) * (std::fabs(x) + std::fabs(mean) + input_scale) / sd + z * z * sd_error);
}

// ---------------------------------------------------------------------------------------------
// The checks.

/// The traits every port has, checked at compile time: no gradient of its own (forward-mode
/// duals differentiate it), trivially copyable in double and float (passed to kernels by value),
/// a library instance for CUDA HMC in double and none in float, and data that own device memory
/// (movable, not copyable). Use: static_assert(port_traits<ArK, ArKData>(), "...").
template <template <class> class Model, template <class> class Data>
constexpr bool port_traits() {
  static_assert(!myriad::model_has_gradient<Model<double>>, "duals differentiate the port");
  static_assert(std::is_trivially_copyable<Model<double>>::value, "passed to kernels");
  static_assert(std::is_trivially_copyable<Model<float>>::value, "passed to kernels");
  static_assert(Model<double>::library_backends == myriad::library_backend::hmc, "CUDA HMC");
  static_assert(Model<float>::library_backends == 0u, "no float instance");
  static_assert(!std::is_copy_constructible<Data<double>>::value, "owns device memory");
  static_assert(std::is_move_constructible<Data<double>>::value, "movable");
  return true;
}

/// The model's log density at points(0) … points(points.count() − 1) (evaluated in the model's own
/// scalar, the point converted to it: a float model takes float-representable points) within the
/// bound transcribe(x) gives: each test derives its own from the rounding of its transcription and
/// of the model (RoundedSum for a plain sum, worked-out first-order bounds otherwise). A point
/// whose transcription is not ok fails and ends the check (ASSERT). Prints the worst |model −
/// value| / tolerance after `label`.
template <class Model, class Points, class Transcribe>
void expect_matches_transcription(const Model& model, const Points& points,
                                  const Transcribe& transcribe, const std::string& label = "") {
  using Scalar = typename Model::value_type;
  double worst = 0;
  for (int p = 0; p < points.count(); ++p) {
    const std::vector<double> x = points(p);
    const Transcribed direct = transcribe(x);
    ASSERT_TRUE(direct.ok) << "point " << p;
    const Scalar lp = model.log_density(std::vector<Scalar>(x.begin(), x.end()));
    EXPECT_NEAR(lp, direct.value, direct.tolerance) << "point " << p;
    worst = std::max(worst, std::fabs(lp - direct.value) / direct.tolerance);
  }
  std::printf("    %sworst |model - direct| / tolerance = %.3g\n", label.c_str(), worst);
}

/// The model with its gradient by forward-mode duals as the library takes it
/// (log_density_and_gradient, model/concept.hpp), so that expect_consistent_derivatives checks
/// that gradient against scalar duals and central finite differences.
template <class Model>
struct DualGradient : DensityOnly<Model> {
  template <class Vec, class Grad>
  double log_density_gradient(const Vec& x, Grad& grad) const {
    return myriad::log_density_and_gradient(this->model, x, grad);
  }
};

/// The model's gradient by duals (DualGradient) at points(0) … points(points.count() − 1) checked
/// by expect_consistent_derivatives with the bounds bounds(x) gives: log p within their `value` of
/// the plain evaluation; vector and scalar duals make the same operations (core/dual_vector.hpp),
/// so they agree to rounding of the gradient's scale, 1e-12 (1 + ‖∇‖∞) (components can cancel to
/// near zero, so not relative to each one); the central differences within
/// 4 (h²|f'''|/6 + δf/h) with δf their `rounding`. Prints the worst ratios after `label`.
template <class Model, class Points, class Bounds>
void expect_dual_gradient_agrees(const Model& model, const Points& points, const Bounds& bounds,
                                 const std::string& label = "") {
  const DualGradient<Model> dual{model};
  DerivativeAgreement agreement;
  for (int p = 0; p < points.count(); ++p) {
    SCOPED_TRACE("point " + std::to_string(p));
    const std::vector<double> x = points(p);
    const DualBounds b = bounds(x);
    const auto tolerances = [&](double, const std::vector<double>& gradient) {
      double norm = 0;
      for (double g : gradient) norm = std::max(norm, std::fabs(g));
      DerivativeTolerances tol;
      tol.value = b.value;
      tol.gradient.assign(gradient.size(), 1e-12 * (1 + norm));
      tol.rounding = b.rounding;
      return tol;
    };
    expect_consistent_derivatives(dual, x, tolerances, agreement);
  }
  std::printf("    %sworst ratios to tolerance: fd %.3g, value %.3g; max |grad - fd| = %.2e\n",
              label.c_str(), agreement.fd_ratio, agreement.value_ratio, agreement.fd_abs_error);
}

}  // namespace myriad::testing
