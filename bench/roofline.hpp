#pragma once
// Rooflines of the benchmark workloads (STYLE.md, "Benchmarks"): bytes moved and floating-point
// operations per gradient evaluation, per model, and the peak rates of the CUDA device, so that
// a benchmark can report the fraction of the attainable rate it reaches.
//
// Unit of work: one gradient evaluation of one chain, i.e. one leapfrog step of hmc_transition
// (mcmc/hmc.hpp), together with its share of the once-per-transition work.
//
// Bytes: the compulsory device-memory traffic of the SoA ensemble state, counting each element
// that a loop of hmc_transition or of the model's gradient touches as moved once per loop (no
// reuse across loops: at 10⁵–10⁶ chains the state is far larger than the caches; reuse inside a
// loop is free). The inverse metric and model data (logistic's X and y) are the same for every
// chain, read in lockstep by a warp, and served from cache: not counted. Per leapfrog step, in
// elements of the state per dimension:
//   half kick + drift   p ← p + ε/2 g; q ← q + ε M⁻¹p      read p, g, q; write p, q    3R 2W
//   model gradient      (per model below)                                          mR mW
//   half kick           p ← p + ε/2 g                       read p, g; write p         2R 1W
// Once per transition, amortised over the L steps of the trajectory: momentum draw (1W), its
// scaling (1R 1W), two kinetic energies (2R), copies of q, g into the proposal (2R 2W), and on
// acceptance (counted always) the copy back (2R 2W): 7R 6W = 13 per dimension.
//
// FLOPs: additions, multiplications and divisions (an FMA counts 2), transcendental functions
// counted as one each; the random numbers (Philox, Box-Muller) are not counted. Leapfrog
// arithmetic outside the model: 5 per dimension for kick + drift, 2 for the second kick; once
// per transition, 7 per dimension (scaling, two kinetic energies).
//
// Models (D = dimension; the gradient part of a leapfrog step):
//   gaussian       reads x twice (sum and Σ(x−m)², then the gradient), writes ∇: 2R 1W;
//                  7 FLOPs per dimension (y = x − m, Σy, Σy² by FMA; ∇ = −s((x − m) − c Σy)).
//   funnel         reads z once, writes ∇: 1R 1W; 3 per coordinate (Σx² by FMA, ∇ = −e^{−v} x).
//   eight_schools  reads z once, writes ∇: 1R 1W (D = 10); per school ~16 plus log σ_j, and
//                  exp, log1p once: ~16·8 + 20 = 150 in all.
//   logistic       reads β and writes ∇ once each at DRAM level (the per-row re-reads of β and
//                  updates of ∇ hit L1): 1R 1W (D = d); per observation 2d (η) + 2d (∇ update)
//                  + ~10 (softplus, sigmoid with exp, log1p and a division) + 3d for the prior:
//                  n(4d + 10) + 3d.
//   poe_student_t  (AIS) reads x once, writes ∇: 1R 1W; per expert l of L: u = Φ_l·x (2D),
//                  λ log1p(u²) (4), slope 2λu/(1 + u²) (5), ∇ −= slope Φ_l (2D): L(4D + 9).
//                  Φ is shared by every particle and served from cache: not counted.
//
// AIS (BM_ais). Unit of work: one particle-temperature of anneal_particle (estimate/hais.hpp)
// with the Hamiltonian transition: the weight increment (scalars only) and one transition of
// L leapfrog steps. Per leapfrog step, in state elements per dimension:
//   kick + drift        v' += ε/2 (α ∇log q + β g'); x' += ε v'     read x', v', g'; write v', x'
//                                                                                  3R 2W
//   model gradient      (per model above)                                          mR mW
//   kick                v' += ε/2 (α ∇log q + β g')                 read x', v', g'; write v'
//                                                                                  3R 1W
// Once per transition: copy x, v, g to the proposal (3R 3W; the kinetic energy rides on the
// read of v), base log density and kinetic energy at the end point (2R), the copy back on
// acceptance (counted always: 3R 3W), the partial refresh (r into v': 1W; v ← √(1−γ) v + √γ v':
// 2R 1W): 10R 8W = 18 per dimension. FLOPs: 15 per dimension and step (the two kicks with the
// standard-normal base's analytic ∇log q, the drift), 10 per dimension and transition (two
// kinetic energies, the base log density, the refresh).

#include <cmath>
#include <cstddef>
#include <optional>
#include <string>

#if defined(MYRIAD_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace myriad::bench {

/// Per-model cost of the gradient part of a leapfrog step.
struct GradientCost {
  int reads_per_dim;   ///< state elements read per dimension
  int writes_per_dim;  ///< state elements written per dimension
  double flops;        ///< total FLOPs of one gradient evaluation
};

inline GradientCost gaussian_gradient_cost(int dim) { return {2, 1, 7.0 * dim}; }
inline GradientCost funnel_gradient_cost(int dim) { return {1, 1, 3.0 * (dim - 1) + 8}; }
inline GradientCost eight_schools_gradient_cost() { return {1, 1, 150.0}; }
inline GradientCost logistic_gradient_cost(int n, int d) {
  return {1, 1, n * (4.0 * d + 10) + 3.0 * d};
}
inline GradientCost poe_student_t_gradient_cost(int dim, int experts) {
  return {1, 1, experts * (4.0 * dim + 9)};
}
/// Qx + b and Qᵀ tanh(·) (2 D D_B FLOPs each), tanh and log cosh per unit (≈ 20 each: the libm
/// calls as a few dozen FLOPs, like the Student-t's log1p), − x; Q is shared by every chain and
/// stays in cache, so only the state counts as traffic.
inline GradientCost boltzmann_relaxation_gradient_cost(int units, int dim) {
  return {1, 1, 4.0 * dim * units + 40.0 * units + 2.0 * dim};
}

/// Bytes and FLOPs per unit of work.
struct Roofline {
  double bytes;
  double flops;
  double intensity() const { return flops / bytes; }  ///< FLOPs per byte
};

/// A gradient evaluation alone (BM_gradient): the model reads the point and writes ∇.
inline Roofline gradient_roofline(const GradientCost& cost, int dim, std::size_t value_bytes) {
  return {static_cast<double>((cost.reads_per_dim + cost.writes_per_dim) * dim) *
              static_cast<double>(value_bytes),
          cost.flops};
}

/// A leapfrog step of hmc_transition with the once-per-transition work amortised over
/// `leapfrog_steps` steps (BM_hmc), from the table in the file comment.
inline Roofline hmc_roofline(const GradientCost& cost, int dim, std::size_t value_bytes,
                             int leapfrog_steps) {
  const double per_step_elements = 3 + 2 + cost.reads_per_dim + cost.writes_per_dim + 2 + 1;
  const double per_transition_elements = 13;
  const double elements = dim * (per_step_elements + per_transition_elements / leapfrog_steps);
  const double flops = cost.flops + dim * (7.0 + 7.0 / leapfrog_steps);
  return {elements * static_cast<double>(value_bytes), flops};
}

/// A particle-temperature of Hamiltonian AIS with `leapfrog_steps` steps (BM_ais), from the AIS
/// table in the file comment.
inline Roofline ais_roofline(const GradientCost& cost, int dim, std::size_t value_bytes,
                             int leapfrog_steps) {
  const double per_step_elements = 3 + 2 + cost.reads_per_dim + cost.writes_per_dim + 3 + 1;
  const double elements = dim * (leapfrog_steps * per_step_elements + 18);
  const double flops = leapfrog_steps * (cost.flops + 15.0 * dim) + 10.0 * dim;
  return {elements * static_cast<double>(value_bytes), flops};
}

/// A chain-iteration of a tempering sampler (BM_temper): an HMC transition of `leapfrog_steps`
/// steps on the tempered density (the target's gradient and the base's, 4 D more FLOPs a step),
/// then one more target gradient at the new x (the end densities, run/temper.hpp).
inline Roofline tempering_roofline(const GradientCost& cost, int dim, std::size_t value_bytes,
                                   int leapfrog_steps) {
  GradientCost tempered = cost;
  tempered.flops += 4.0 * dim;
  const Roofline step = hmc_roofline(tempered, dim, value_bytes, leapfrog_steps);
  const Roofline end = gradient_roofline(cost, dim, value_bytes);
  return {leapfrog_steps * step.bytes + end.bytes, leapfrog_steps * step.flops + end.flops};
}

/// Peak rates of a CUDA device.
struct DevicePeak {
  std::string name;
  double bytes_per_second;  ///< DRAM bandwidth: 2 (double data rate) × memory clock × bus width
  double fp64_flops;        ///< SMs × clock × FP64 FMA units per SM × 2
  double fp32_flops;        ///< SMs × clock × FP32 FMA units per SM × 2

  /// min(peak FLOPs, intensity × bandwidth) for the precision of `value_bytes`.
  double attainable_flops(const Roofline& r, std::size_t value_bytes) const {
    const double compute = value_bytes == 4 ? fp32_flops : fp64_flops;
    return std::fmin(compute, r.intensity() * bytes_per_second);
  }
};

/// FMA units per SM (FP64, FP32) by compute capability, from NVIDIA's architecture whitepapers;
/// {0, 0} for an architecture not listed (the benchmark then omits the roofline fraction).
inline void fma_units_per_sm(int major, int minor, int& fp64, int& fp32) {
  fp64 = 0;
  fp32 = 0;
  if (major == 7 && minor == 0) {
    fp64 = 32;
    fp32 = 64;
  }  // V100
  else if (major == 8 && minor == 0) {
    fp64 = 32;
    fp32 = 64;
  }  // A100
  else if (major == 8 && minor >= 6) {
    fp64 = 2;
    fp32 = 128;
  }  // Ampere/Ada consumer
  else if (major == 9 && minor == 0) {
    fp64 = 64;
    fp32 = 128;
  }  // H100, H200
  else if (major == 10 && minor == 0) {
    fp64 = 64;
    fp32 = 128;
  }  // B200
}

/// Peak rates of the current CUDA device, or nothing without one (or in a CPU-only build).
inline std::optional<DevicePeak> cuda_device_peak() {
#if defined(MYRIAD_HAS_CUDA)
  int device = 0, count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
      cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  cudaDeviceProp properties{};
  int clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0;
  // CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp; the attributes remain.
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device) !=
          cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  int fp64 = 0, fp32 = 0;
  fma_units_per_sm(properties.major, properties.minor, fp64, fp32);
  DevicePeak peak;
  peak.name = properties.name;
  peak.bytes_per_second = 2.0 * memory_clock_khz * 1e3 * bus_width_bits / 8.0;
  const double sm_hz = static_cast<double>(properties.multiProcessorCount) * clock_khz * 1e3;
  peak.fp64_flops = sm_hz * fp64 * 2.0;
  peak.fp32_flops = sm_hz * fp32 * 2.0;
  return peak;
#else
  return std::nullopt;
#endif
}

}  // namespace myriad::bench
