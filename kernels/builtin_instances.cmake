# The library's instances of its CUDA backends for the built-in models, one generated .cu file
# (one nvcc job) per model, so that a two-core machine compiles them in parallel and editing one
# model recompiles only its kernels. A new built-in model is one line in its family's list (and
# the has_cuda_*_backend specialisation in its header, model/library_instances.hpp). Builds
# without CUDA need nothing: the factories are inline and throw there (backend/*_backend.hpp).
#
# Each entry is "<file stem> <header under myriad/models/> <type>":
#   hmc, ais  a class template, instantiated for float and double; an ais entry's file also holds
#             the target's tempering backend (double only: the samplers of run/temper.hpp
#             anneal the same targets between the same bases, and one file parses the target
#             once);
#   hmc64     a class template, instantiated for double only: the posteriordb ports, whose
#             references are double-precision runs (their library_backends say so), and the
#             stacked models of batched SBC (model/stacked.hpp);
#   chmc      a generator, instantiated with its noisy variant Noisy<G> (the CLI's noise=ε);
#   mpis      a plated model;
#   auxiliary the slice and pseudo-marginal samplers' backend, a model type in double precision.

set(myriad_cuda_hmc_builtins
  "gaussian gaussian.hpp models::Gaussian"
  "logistic logistic.hpp models::Logistic"
  "eight_schools eight_schools.hpp models::EightSchools"
  "funnel funnel.hpp models::Funnel"
  "banana banana.hpp models::Banana"
  "radon radon.hpp models::Radon")
set(myriad_cuda_hmc64_builtins
  "linear_regression linear_regression.hpp models::LinearRegression"
  "ar_k ar_k.hpp models::ArK"
  "arma11 arma11.hpp models::Arma11"
  "garch11 garch11.hpp models::Garch11"
  "low_dim_gauss_mix low_dim_gauss_mix.hpp models::LowDimGaussMix"
  "gp_pois_regr gp_pois_regr.hpp models::GpPoisRegr"
  "hmm_example hmm_example.hpp models::HmmExample"
  "one_comp_mm_elim_abs one_comp_mm_elim_abs.hpp models::OneCompMmElimAbs"
  "stacked_eight_schools eight_schools.hpp models::StackedEightSchools"
  "stacked_logistic logistic.hpp models::StackedLogistic")
set(myriad_cuda_ais_builtins
  "gaussian gaussian.hpp models::Gaussian"
  "product_of_experts product_of_experts.hpp models::ProductOfExperts"
  "mcrbm mcrbm.hpp models::Mcrbm"
  "linear_generative linear_generative.hpp models::LinearGenerative"
  "boltzmann_relaxation boltzmann_relaxation.hpp models::BoltzmannRelaxation"
  "radon radon.hpp models::Radon")
set(myriad_cuda_chmc_builtins
  "sphere sphere.hpp models::Sphere"
  "linear_gaussian linear_gaussian.hpp models::LinearGaussian"
  "gld gld.hpp models::Gld"
  "lotka_volterra lotka_volterra.hpp models::LotkaVolterra"
  "lotka_volterra_summaries lotka_volterra_summaries.hpp models::LotkaVolterraSummaries")
set(myriad_cuda_auxiliary_builtins
  "gaussian_latent_variable gaussian_latent_variable.hpp models::GaussianLatentVariable<double>"
  "gaussian_latent_variable_uniform gaussian_latent_variable.hpp models::GaussianLatentVariable<double,AuxiliaryLaw::uniform>"
  "standard_logistic standard_logistic.hpp models::StandardLogistic<double>"
  "logistic logistic.hpp models::Logistic<double>"
  "gp_probit gp_probit.hpp models::GpProbit<double>")
set(myriad_cuda_mpis_builtins
  "hierarchical_gaussian hierarchical_gaussian.hpp models::HierarchicalGaussian"
  "gaussian_chain gaussian_chain.hpp models::GaussianChain"
  "bus_breakdown bus_breakdown.hpp models::BusBreakdown"
  "chimpanzees chimpanzees.hpp models::Chimpanzees"
  "movielens movielens.hpp models::MovieLens"
  "occupancy occupancy.hpp models::Occupancy")

# myriad_write_cuda_builtin_instances(<dir> <files variable>): writes the files into <dir>
# (rewritten only when their text changes) and sets <files variable> to their paths.
function(myriad_write_cuda_builtin_instances dir files_var)
  set(files "")
  set(hmc_template [=[
template std::unique_ptr<HmcBackend<float>> make_cuda_hmc_backend<@type@<float>, float>(
    const @type@<float>&, std::int64_t);
template std::unique_ptr<HmcBackend<double>> make_cuda_hmc_backend<@type@<double>, double>(
    const @type@<double>&, std::int64_t);]=])
  set(hmc64_template [=[
template std::unique_ptr<HmcBackend<double>> make_cuda_hmc_backend<@type@<double>, double>(
    const @type@<double>&, std::int64_t);]=])
  set(ais_template [=[
template std::unique_ptr<AisBackend<float>> make_cuda_ais_backend<@type@<float>, float>(
    const @type@<float>&, AisLayout<float>);
template std::unique_ptr<AisBackend<double>> make_cuda_ais_backend<@type@<double>, double>(
    const @type@<double>&, AisLayout<double>);
template std::unique_ptr<TemperingBackend> make_cuda_tempering_backend<@type@<double>>(
    const @type@<double>&, const TemperingSetup&);]=])
  set(chmc_template [=[
template std::unique_ptr<ChmcBackend<double>> make_cuda_chmc_backend<@type@, double>(
    const @type@&, std::int64_t, ChmcCudaOptions);
template std::unique_ptr<ChmcBackend<double>> make_cuda_chmc_backend<models::Noisy<@type@>, double>(
    const models::Noisy<@type@>&, std::int64_t, ChmcCudaOptions);]=])
  set(mpis_template [=[
template std::unique_ptr<MpisBackend> make_cuda_mpis_backend<@type@>(
    const @type@&, const PlatedStructure&, const MpisPlan&, const MpisEngineOptions&);]=])
  set(auxiliary_template [=[
template std::unique_ptr<AuxiliaryBackend<double>> make_cuda_auxiliary_backend<@type@, double>(
    const @type@&, std::int64_t, AuxiliaryMethod);]=])
  set(extra_include_chmc "#include \"myriad/models/noisy_generator.hpp\"\n")
  set(extra_include_ais "#include \"cuda_tempering_backend.cuh\"\n")
  foreach(family hmc hmc64 ais chmc mpis auxiliary)
    # The backend's header: hmc64 is HMC's.
    string(REPLACE "hmc64" "hmc" backend ${family})
    foreach(entry IN LISTS myriad_cuda_${family}_builtins)
      string(REPLACE " " ";" fields "${entry}")
      list(GET fields 0 stem)
      list(GET fields 1 header)
      list(GET fields 2 type)
      string(CONFIGURE "${${family}_template}" instances @ONLY)
      set(file ${dir}/builtin_${family}_${stem}.cu)
      file(CONFIGURE OUTPUT ${file} CONTENT
"// Generated from kernels/builtin_instances.cmake: the library's CUDA ${family} backend of ${type}.
#include <cstdint>
#include <memory>

#include \"cuda_${backend}_backend.cuh\"
${extra_include_${family}}#include \"myriad/models/${header}\"

namespace myriad {
${instances}
}  // namespace myriad
" @ONLY)
      list(APPEND files ${file})
    endforeach()
  endforeach()
  set(${files_var} ${files} PARENT_SCOPE)
endfunction()

# myriad_add_cuda_builtin_instances(<target>): the files in the build tree, added to <target>.
function(myriad_add_cuda_builtin_instances target)
  myriad_write_cuda_builtin_instances(${PROJECT_BINARY_DIR}/kernels files)
  target_sources(${target} PRIVATE ${files})
endfunction()

# Script mode, for tools that compile the instances without a build tree
# (scripts/kernel-resources): cmake -DMYRIAD_INSTANCES_DIR=<dir> -P kernels/builtin_instances.cmake
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED MYRIAD_INSTANCES_DIR)
  myriad_write_cuda_builtin_instances(${MYRIAD_INSTANCES_DIR} files)
endif()
