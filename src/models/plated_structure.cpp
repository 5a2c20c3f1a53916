// PlatedStructure: declaring and checking the plates and groups of an MP IS model (mpis.md §2).

#include <algorithm>

#include "myriad/model/plated_model.hpp"

namespace myriad {

void PlatedStructure::check_new_name(const std::string& name) const {
  MYRIAD_EXPECTS(!name.empty(), "plated model: a plate or group needs a name");
  for (const auto& p : plates_)
    MYRIAD_EXPECTS(p.name != name, "plated model: the name '", name, "' is used twice");
  for (const auto& g : latents_)
    MYRIAD_EXPECTS(g.name != name, "plated model: the name '", name, "' is used twice");
  for (const auto& o : observed_)
    MYRIAD_EXPECTS(o.name != name, "plated model: the name '", name, "' is used twice");
}

void PlatedStructure::check_plate(int plate, const std::string& who) const {
  MYRIAD_EXPECTS(plate == kRootPlate || (plate >= 0 && plate < plate_count()),
                 "plated model: ", who, " names plate ", plate, ", which does not exist");
}

int PlatedStructure::add_plate(const std::string& name, std::int64_t size, int parent,
                               bool timeseries) {
  check_new_name(name);
  check_plate(parent, "plate '" + name + "'");
  MYRIAD_EXPECTS(size >= 1, "plated model: plate '", name, "' has size ", size,
                 " (must be at least 1)");
  MYRIAD_EXPECTS(static_cast<int>(path(parent).size()) < kMaxPlateDepth, "plated model: plate '",
                 name, "' is nested deeper than ", kMaxPlateDepth, " plates");
  plates_.push_back({name, size, parent, timeseries});
  return plate_count() - 1;
}

int PlatedStructure::latent(const std::string& name, int plate, std::vector<int> parents,
                            int event_size, std::vector<int> proposal_parents) {
  check_new_name(name);
  check_plate(plate, "latent '" + name + "'");
  MYRIAD_EXPECTS(event_size >= 1, "plated model: latent '", name, "' has event size ", event_size);
  MYRIAD_EXPECTS(parents.size() <= static_cast<std::size_t>(kMaxGroupParents),
                 "plated model: latent '", name, "' has ", parents.size(), " parents (at most ",
                 kMaxGroupParents, ")");
  const int self = latent_count();
  for (int p : parents) {
    MYRIAD_EXPECTS(std::count(parents.begin(), parents.end(), p) == 1, "plated model: latent '",
                   name, "' lists a parent twice");
    if (p == kPreviousStep) {
      MYRIAD_EXPECTS(plate != kRootPlate && plate_decl(plate).timeseries, "plated model: latent '",
                     name, "' depends on its previous step but its plate is not a timeseries");
      const int chain = chain_latent(plate);
      MYRIAD_EXPECTS(chain < 0, "plated model: timeseries plate '", plate_decl(plate).name,
                     "' already has a chain latent ('", chain < 0 ? "" : latent_decl(chain).name,
                     "')");
      continue;
    }
    MYRIAD_EXPECTS(p >= 0 && p < self, "plated model: latent '", name, "' names parent ", p,
                   ", which is not a latent declared before it");
    MYRIAD_EXPECTS(encloses(latent_decl(p).plate, plate), "plated model: latent '", name,
                   "' depends on '", latent_decl(p).name,
                   "', whose plate does not enclose the child's plate");
  }
  for (int q : proposal_parents) {
    MYRIAD_EXPECTS(std::count(parents.begin(), parents.end(), q) == 1, "plated model: latent '",
                   name, "' has a proposal parent that is not one of its parents");
    MYRIAD_EXPECTS(std::count(proposal_parents.begin(), proposal_parents.end(), q) == 1,
                   "plated model: latent '", name, "' lists a proposal parent twice");
  }
  latents_.push_back({name, plate, event_size, std::move(parents), std::move(proposal_parents)});
  return self;
}

int PlatedStructure::observed(const std::string& name, int plate, std::vector<int> parents) {
  check_new_name(name);
  check_plate(plate, "observed '" + name + "'");
  MYRIAD_EXPECTS(parents.size() <= static_cast<std::size_t>(kMaxGroupParents),
                 "plated model: observed '", name, "' has ", parents.size(), " parents (at most ",
                 kMaxGroupParents, ")");
  for (int p : parents) {
    MYRIAD_EXPECTS(p >= 0 && p < latent_count(), "plated model: observed '", name,
                   "' names parent ", p, ", which is not a latent");
    MYRIAD_EXPECTS(std::count(parents.begin(), parents.end(), p) == 1, "plated model: observed '",
                   name, "' lists a parent twice");
    MYRIAD_EXPECTS(encloses(latent_decl(p).plate, plate), "plated model: observed '", name,
                   "' depends on '", latent_decl(p).name,
                   "', whose plate does not enclose the observation's plate");
  }
  observed_.push_back({name, plate, std::move(parents)});
  return observed_count() - 1;
}

std::vector<int> PlatedStructure::path(int plate) const {
  std::vector<int> out;
  for (int p = plate; p != kRootPlate; p = plate_decl(p).parent) out.push_back(p);
  std::reverse(out.begin(), out.end());
  return out;
}

bool PlatedStructure::encloses(int ancestor, int plate) const {
  if (ancestor == kRootPlate) return true;
  for (int p = plate; p != kRootPlate; p = plate_decl(p).parent)
    if (p == ancestor) return true;
  return false;
}

std::int64_t PlatedStructure::instances(int plate) const {
  std::int64_t n = 1;
  for (int p : path(plate)) n *= plate_decl(p).size;
  return n;
}

int PlatedStructure::chain_latent(int plate) const {
  for (int g = 0; g < latent_count(); ++g) {
    const auto& parents = latent_decl(g).parents;
    if (latent_decl(g).plate == plate &&
        std::find(parents.begin(), parents.end(), kPreviousStep) != parents.end())
      return g;
  }
  return -1;
}

void PlatedStructure::validate() const {
  MYRIAD_EXPECTS(latent_count() >= 1, "plated model: no latent groups");
  for (int p = 0; p < plate_count(); ++p)
    MYRIAD_EXPECTS(!plate_decl(p).timeseries || chain_latent(p) >= 0,
                   "plated model: timeseries plate '", plate_decl(p).name,
                   "' has no latent that depends on its previous step");
}

}  // namespace myriad
