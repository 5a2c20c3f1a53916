#pragma once
// Slice sampling as per-chain updates (thesis-methods.md §1–2): linear slice sampling along a
// line (Neal 2003; thesis Alg. 4) with a random bracket, a randomly split step-out budget and
// shrinkage towards the current point, optionally reflected into [0, 1]^D (thesis §3.5), and
// elliptical slice sampling (Murray, Adams & MacKay 2010; thesis Alg. 5).
//
// Both are one shrink loop over a one-dimensional family of points through the current one,
// written here once: a "line" says what the log target is at a parameter t (λ along a
// direction, θ around an ellipse) and moves the chain to the accepted t. The loop is capped at
// max_shrinks evaluations; a capped update keeps the current point, which leaves the target
// invariant (thesis-methods.md §1, "capped shrink with stay-on-failure is valid": forward and
// reverse paths through the same rejected points have equal probability, and truncating them
// keeps the symmetry), and reports it, so that a GPU warp waits at most max_shrinks evaluations
// for its slowest chain and the caps are counted, never hidden (DESIGN.md rules 4 and 8).
//
// A non-finite log target at a trial point is outside the slice (NaN > h is false); it is
// reported, not fatal.

#include <cstdint>

#include "myriad/core/hd.hpp"
#include "myriad/core/math.hpp"
#include "myriad/core/random.hpp"

namespace myriad {

/// The random-number tags of one slice update (core/random.hpp). Two updates in one iteration
/// (APM's update of u and of x) use different tags, so their numbers are independent.
struct SliceTags {
  Purpose height;     ///< the slice height's exponential
  Purpose direction;  ///< the line's direction, or the ellipse's ν
  Purpose bracket;    ///< draw 0: the bracket's offset, 1: the step-out split, 2 + k: shrink k
  /// Added to every draw index: several updates with the same tags in one iteration (one per
  /// coordinate) take disjoint draws, kSliceDrawsPerUpdate apart.
  std::uint32_t offset = 0;
};

/// Draws one slice update may take of its tags (so max_shrinks < kSliceDrawsPerUpdate − 2).
constexpr std::uint32_t kSliceDrawsPerUpdate = 1u << 16;

/// The settings of a linear slice update: the bracket width w in units of the direction, the
/// step-out budget M (0: none, as in the thesis's experiments) and the cap K on evaluations
/// inside the bracket.
template <class T>
struct SliceShape {
  T width = T(1);
  int step_out = 0;
  int max_shrinks = 64;
};

/// What a slice update did.
template <class T>
struct SliceOutcome {
  bool moved = false;       ///< a point other than the current one was accepted
  bool capped = false;      ///< the shrink loop reached its cap: the point was kept
  bool non_finite = false;  ///< some trial point's log target was not finite
  int evaluations = 0;      ///< log-target evaluations (step-out and shrink)
  T jump = T(0);            ///< |t| of the accepted point (0 when it stayed)
};

/// u reflected into [0, 1] (thesis §3.5): v = u − 2⌊u/2⌋ ∈ [0, 2), then 2 − v above 1. Unit
/// Jacobian, so reflective proposals stay symmetric. (C's fmod would keep the sign of negative u.)
template <class T>
MYRIAD_HD T reflect_into_unit(T u) {
  const T v = u - T(2) * myriad::floor(u / T(2));
  return v < T(1) ? v : T(2) - v;
}

namespace detail {

/// Shrinks the bracket (lower, upper) around t = 0 (the current point) until the line's log
/// target at a trial t exceeds log_height: the first trial is `first` (elliptical: the bracket's
/// end; linear: uniform inside it), the rest uniform in the bracket (draws 2, 3, … of
/// tags.bracket). Returns true with t at the accepted point, or false after max_shrinks trials.
template <class T, class Line>
MYRIAD_HD bool shrink_into_slice(Line& line, T log_height, T lower, T upper, T first,
                                 int max_shrinks, const RandomStream& rng, std::uint32_t iteration,
                                 const SliceTags& tags, SliceOutcome<T>& out, T& t) {
  t = first;
  for (int k = 0; k < max_shrinks; ++k) {
    if (k > 0) {
      const T u =
          rng.uniform<T>(iteration, tags.bracket, tags.offset + static_cast<std::uint32_t>(2 + k));
      t = lower + (upper - lower) * u;
    }
    const T log_target = line.log_target(t);
    ++out.evaluations;
    if (!myriad::isfinite(log_target)) out.non_finite = true;
    if (log_target > log_height) {
      line.move_to(t, log_target);
      return true;
    }
    if (t < T(0)) {
      lower = t;
    } else {
      upper = t;
    }
  }
  return false;
}

}  // namespace detail

/// One linear slice update (thesis Alg. 4) as a search that asks for one log target at a time:
/// start() draws the height, the bracket and the step-out split and names the first trial t,
/// and each tell(log π at t) moves on to the next t, until the update has accepted a point or
/// reached its cap. linear_slice_update below runs it against a line; a caller whose evaluations
/// happen elsewhere (a staged estimator's preparation, batched across chains on a GPU) keeps the
/// search per chain between them. The numbers drawn are the same either way.
template <class T>
struct LinearSliceSearch {
  enum Phase : int { step_left, step_right, shrink, accepted, capped };
  int phase = capped;
  int left = 0, right = 0;  ///< step-outs left at either end
  int shrinks = 0;          ///< trials made inside the bracket
  T log_height = T(0), lower = T(0), upper = T(0);
  T t = T(0);  ///< the trial point asked for, then the accepted one
  SliceOutcome<T> out;

  /// True while the search asks for log π at t.
  MYRIAD_HD bool pending() const { return phase < accepted; }

  /// The height log π(x₀) − E with E ~ Exp(1), the unit bracket (in units of the direction, times
  /// shape.width) placed uniformly around t = 0, the step-out budget split uniformly between its
  /// ends; then the first trial point.
  MYRIAD_HD void start(T log_current, const SliceShape<T>& shape, const RandomStream& rng,
                       std::uint32_t iteration, const SliceTags& tags) {
    out = SliceOutcome<T>{};
    shrinks = 0;
    log_height = log_current - rng.exponential<T>(iteration, tags.height, tags.offset);
    upper = shape.width * rng.uniform<T>(iteration, tags.bracket, tags.offset);
    lower = upper - shape.width;
    left = right = 0;
    if (shape.step_out > 0) {
      // L ~ UniformInt{0 … M}, R = M − L: the split must not depend on x₀.
      left = static_cast<int>(rng.uniform<T>(iteration, tags.bracket, tags.offset + 1) *
                              static_cast<T>(shape.step_out + 1));
      if (left > shape.step_out) left = shape.step_out;
      right = shape.step_out - left;
    }
    phase = step_left;
    next(shape, rng, iteration, tags);
  }

  /// Takes log π at t. Returns true when t is accepted (the caller moves there, with that value).
  MYRIAD_HD bool tell(T log_target, const SliceShape<T>& shape, const RandomStream& rng,
                      std::uint32_t iteration, const SliceTags& tags) {
    ++out.evaluations;
    if (phase == step_left) {
      if (log_target > log_height) {
        lower -= shape.width;
        --left;
      } else {
        left = 0;
      }
    } else if (phase == step_right) {
      if (log_target > log_height) {
        upper += shape.width;
        --right;
      } else {
        right = 0;
      }
    } else {  // shrink: a non-finite log target is outside the slice (NaN > h is false)
      if (!myriad::isfinite(log_target)) out.non_finite = true;
      if (log_target > log_height) {
        phase = accepted;
        out.moved = t != T(0);
        out.jump = myriad::fabs(t);
        return true;
      }
      if (t < T(0)) {
        lower = t;
      } else {
        upper = t;
      }
      ++shrinks;
    }
    next(shape, rng, iteration, tags);
    return false;
  }

 private:
  /// The next trial point: a bracket end while step-outs are left, then uniform in the bracket
  /// (draws 2, 3, … of tags.bracket) until max_shrinks trials are made.
  MYRIAD_HD void next(const SliceShape<T>& shape, const RandomStream& rng, std::uint32_t iteration,
                      const SliceTags& tags) {
    if (phase == step_left && left > 0) {
      t = lower;
      return;
    }
    if (phase <= step_right && right > 0) {
      phase = step_right;
      t = upper;
      return;
    }
    phase = shrink;
    if (shrinks >= shape.max_shrinks) {
      phase = capped;
      out.capped = true;
      t = T(0);
      return;
    }
    const T u = rng.uniform<T>(iteration, tags.bracket,
                               tags.offset + static_cast<std::uint32_t>(2 + shrinks));
    t = lower + (upper - lower) * u;
  }
};

/// One linear slice update along the line's direction (thesis Alg. 4; LinearSliceSearch).
/// `line.log_target(t)` is log π at x₀ + t·v (reflected, for the reflective variant) and
/// `line.move_to(t, log π)` moves there; `log_current` is log π(x₀).
template <class T, class Line>
MYRIAD_HD SliceOutcome<T> linear_slice_update(Line& line, T log_current, const SliceShape<T>& shape,
                                              const RandomStream& rng, std::uint32_t iteration,
                                              const SliceTags& tags) {
  LinearSliceSearch<T> search;
  search.start(log_current, shape, rng, iteration, tags);
  while (search.pending()) {
    const T log_target = line.log_target(search.t);
    if (search.tell(log_target, shape, rng, iteration, tags)) line.move_to(search.t, log_target);
  }
  return search.out;
}

/// One elliptical slice update (thesis Alg. 5, with the corrected slice set of erratum 1): the
/// height log f(x₀) − E, the angle bracket (θ − 2π, θ] with θ ~ U(0, 2π) tried first, then
/// shrinkage towards θ = 0. `ellipse.log_target(θ)` is log f at
/// x(θ) = μ + (x₀ − μ) cos θ + (ν − μ) sin θ for the ν it drew (tags.direction), f the target
/// divided by its Gaussian factor N(μ, Σ); `ellipse.move_to(θ, log f)` moves there.
template <class T, class Ellipse>
MYRIAD_HD SliceOutcome<T> elliptical_slice_update(Ellipse& ellipse, T log_current, int max_shrinks,
                                                  const RandomStream& rng, std::uint32_t iteration,
                                                  const SliceTags& tags) {
  constexpr T kTwoPi = T(6.283185307179586476925286766559);
  SliceOutcome<T> out;
  const T log_height = log_current - rng.exponential<T>(iteration, tags.height, tags.offset);
  const T upper = kTwoPi * rng.uniform<T>(iteration, tags.bracket, tags.offset);
  T theta = T(0);
  if (detail::shrink_into_slice(ellipse, log_height, upper - kTwoPi, upper, upper, max_shrinks, rng,
                                iteration, tags, out, theta)) {
    out.moved = theta != T(0);
    out.jump = myriad::fabs(theta);
  } else {
    out.capped = true;
  }
  return out;
}

}  // namespace myriad
