#pragma once
// The built-in models by name, with their arguments: what `myriad models` lists and what
// `myriad sample --model NAME --model-arg key=value` runs.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "myriad/app/option_names.hpp"
#include "myriad/app/stan_data.hpp"
#include "myriad/model/exact_moment.hpp"
#include "myriad/model/generator.hpp"
#include "myriad/run/abc_config.hpp"
#include "myriad/run/ais_config.hpp"
#include "myriad/run/auxiliary_config.hpp"
#include "myriad/run/chmc_config.hpp"
#include "myriad/run/mpis_config.hpp"
#include "myriad/run/sample_config.hpp"
#include "myriad/run/sbc.hpp"
#include "myriad/run/temper_config.hpp"

namespace myriad {

/// One model argument with its default and meaning.
struct ModelArgument {
  std::string name;
  std::string default_value;
  std::string description;
};

struct ModelSpec;

/// Whether a model reads its data from `--data FILE.json` (CmdStan's JSON format,
/// app/stan_data.hpp): not at all, in place of the data it has built in, or always.
enum class DataUse { none, optional, required };

/// The arguments of one run of a model: given values checked against the model's argument list,
/// with defaults for the rest, and the data file if the run names one. Accessors throw
/// myriad::invalid_argument naming the model and argument when a value does not parse.
class ModelArguments {
 public:
  /// Reads `data_path` (empty: none) now, so that a missing or malformed file is refused before
  /// a run starts; throws myriad::invalid_argument if the model takes no data and one is given,
  /// or needs data and none is.
  ModelArguments(const ModelSpec& spec,
                 const std::vector<std::pair<std::string, std::string>>& given,
                 const std::string& data_path = {});

  double number(const std::string& name) const;
  int integer(const std::string& name) const;
  std::uint64_t unsigned_integer(const std::string& name) const;
  /// The value as given; `allowed` lists the accepted words (an error names them otherwise).
  const std::string& word(const std::string& name, const std::vector<std::string>& allowed) const;
  /// Every argument with its effective value, in the model's order.
  const std::vector<std::pair<std::string, std::string>>& values() const { return values_; }
  /// The argument was given (--model-arg), not defaulted.
  bool given(const std::string& name) const;
  /// The data read from --data, or null when the run names none.
  const StanData* data() const { return data_.get(); }
  /// The data, which a model with DataUse::required always has.
  const StanData& required_data() const;
  const std::string& data_path() const { return data_path_; }

 private:
  const std::string& raw(const std::string& name) const;
  std::string model_;
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> given_;
  std::string data_path_;
  std::shared_ptr<const StanData> data_;
};

/// Density models are sampled by HMC (and some also annealed by `myriad ais`); generator models
/// are conditioned on their data by constrained HMC, with the ABC baselines for comparison;
/// annealing targets are run only by `myriad ais`; plated models by `myriad mpis`.
enum class ModelKind { density, generator, annealing, plated };

/// How to run a generator model with each sampler.
struct GeneratorRunners {
  std::function<SampleResult(const ModelArguments&, const ChmcConfig&)> chmc;
  std::function<SampleResult(const ModelArguments&, const AbcConfig&, AbcRejectionSummary&)>
      abc_rejection;
  std::function<SampleResult(const ModelArguments&, const AbcConfig&)> abc_mcmc;
  /// HMC on the Gaussian-kernel ABC target with tolerance ε.
  std::function<SampleResult(const ModelArguments&, double, const SampleConfig&)> abc_hmc;
  /// The auxiliary-variable samplers on the ABC posterior with kernel and tolerance ε
  /// (sample_abc_auxiliary, run/sample_abc.hpp): slice samplers in input space, PM-MH and APM on
  /// the parameters of a directed generator, its noise as the auxiliary variates.
  std::function<SampleResult(const ModelArguments&, const AuxiliaryConfig&, AbcKernel, double,
                             AuxiliaryReport&)>
      abc_auxiliary;
  /// The generator (its noisy variant when `noise` > 0) splits its inputs into parameters and
  /// noise (generator_has_parameters): PM-MH and APM can run on it.
  std::function<bool(const ModelArguments&)> has_parameters;
  /// The Gram structure the generator declares for these arguments (the noisy variant's when
  /// `noise` > 0), known without building it: the CLI checks --gram-factorization against it
  /// before claiming the output.
  std::function<GramStructure(const ModelArguments&)> gram_structure;
};

/// A built-in model: how to list it and how to run it.
struct ModelSpec {
  std::string name;
  std::string description;
  std::vector<ModelArgument> arguments;
  ModelKind kind = ModelKind::density;
  /// Whether the model reads --data, and the variables the file must hold, as Stan declares them
  /// (what `myriad models` lists).
  DataUse data = DataUse::none;
  std::string data_variables;
  /// The model runs in double precision only (--precision float32 is refused before the run).
  bool double_only = false;
  /// Density models: builds the model (uploading data to the device if needed) and samples it.
  std::function<SampleResult(const ModelArguments&, const SampleConfig&, Precision)> sample;
  /// Density models: the dimension the arguments give, for the checks that precede a run (a
  /// dense metric's limit).
  std::function<int(const ModelArguments&)> dim;
  /// The auxiliary-variable samplers (slice, elliptical-slice, reflective-slice, pm-mh, apm-*;
  /// run/sample_auxiliary.hpp) on density and estimator models: builds the model and samples it,
  /// filling the report; empty for models they do not run. `auxiliary_check` throws
  /// myriad::invalid_argument, before a run, for a method the model cannot take (a slice sampler
  /// that needs a prior factor it lacks, an estimator method on a density, or the reverse).
  std::function<SampleResult(const ModelArguments&, const AuxiliaryConfig&, AuxiliaryReport&)>
      auxiliary;
  std::function<void(AuxiliaryMethod)> auxiliary_check;
  /// Generator models.
  GeneratorRunners generator;
  /// Annealing targets (and density models that are also targets): builds the target and runs
  /// annealed importance sampling; empty for models `myriad ais` cannot run.
  std::function<AisResult(const ModelArguments&, const AisConfig&, Precision)> anneal;
  /// Continuous or simulated tempering of the same target (`myriad temper`); empty for models it
  /// cannot run.
  std::function<TemperResult(const ModelArguments&, const TemperConfig&)> temper;
  /// Plated models: builds the model (uploading data to the device if needed) and runs
  /// massively parallel importance sampling; the result carries the exact answers it knows.
  std::function<MpisResult(const ModelArguments&, const MpisConfig&)> mpis;
  /// Simulation-based calibration (run/sbc.hpp; `myriad sbc`): replication r's draw from the
  /// prior, the data simulated from it with the simulation seed, and the run on them (density
  /// models: HMC with the SampleConfig part of the settings; generators: constrained HMC). Empty
  /// for models that do not state how to simulate their data.
  std::function<SbcReplication(const ModelArguments&, std::uint64_t seed, std::int64_t replication,
                               const ChmcConfig&)>
      sbc;
  /// SBC with every replication in one batch of chains (run_sbc_batched, model/stacked.hpp),
  /// for the models that offer it (density models); `progress(r)` as replications are ranked.
  std::function<SbcResult(const ModelArguments&, const SbcConfig&, const SampleConfig&,
                          const std::function<void(std::int64_t)>& progress)>
      sbc_batch;
  /// Checks the arguments for SBC before a run starts (throws myriad::invalid_argument); may be
  /// empty.
  std::function<void(const ModelArguments&)> sbc_check;
  /// Exact posterior moments where the model has them (empty function otherwise).
  std::function<std::vector<ExactMoment>(const ModelArguments&)> exact;
};

/// A spec with what `myriad models` lists first filled in (its kind, name, description and
/// arguments); the entry points and the rest are set after.
ModelSpec model_spec(ModelKind kind, std::string name, std::string description,
                     std::vector<ModelArgument> arguments = {});

/// The built-in generator models (src/app/generator_registry.cpp).
std::vector<ModelSpec> generator_model_specs();

/// The built-in models made for the auxiliary-variable samplers: the Gaussian latent variable
/// model and the standard logistic (src/app/auxiliary_registry.cpp).
std::vector<ModelSpec> auxiliary_model_specs();

/// The built-in annealing targets, and the radon regression, a density model that `myriad ais`
/// and `myriad temper` also run (src/app/target_registry.cpp).
std::vector<ModelSpec> annealing_target_specs();

/// The built-in plated models (src/app/plated_registry.cpp).
std::vector<ModelSpec> plated_model_specs();

/// The posteriordb posteriors ported as built-in density models, data from --data
/// (src/app/posteriordb_*.cpp).
std::vector<ModelSpec> posteriordb_model_specs();

/// Every built-in model, in listing order.
const std::vector<ModelSpec>& builtin_models();

/// The built-in model of that name; throws myriad::invalid_argument listing the known names.
const ModelSpec& find_model(const std::string& name);

}  // namespace myriad
