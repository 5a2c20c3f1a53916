#pragma once
// The proposals of massively parallel importance sampling: the particles of every latent
// instance, drawn parents first, and log Q of each. MP IS draws K per instance with the
// permutation sampler choosing the proposal parents' particles (mpis.md §2.1); global importance
// sampling draws joint samples, particle k of every parent being the parent of particle k
// (mpis.md §1). MpisProposals owns these arrays on a parallel policy and hands out the views
// (groups, parent links) through which the factor functors of estimate/mpis_elements.hpp read
// them.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "myriad/estimate/mpis_elements.hpp"
#include "myriad/estimate/mpis_layout.hpp"
#include "myriad/model/plated_model.hpp"

namespace myriad {

template <class Model, class Parallel>
class MpisProposals {
 public:
  MpisProposals(const Model& model, mpis_elements::RunStreams streams, std::int64_t runs)
      : model_(model), streams_(streams), runs_(runs) {}

  /// MP IS: K particles of every latent instance of `s` and log Q_MP of each (mpis.md §2.1).
  void draw_mixture(const Parallel& par, const PlatedStructure& s, std::int64_t k) {
    draw(par, s, k, 0, /*mixture=*/true);
  }

  /// Global importance sampling: particles [first, first + count) of every latent instance, each
  /// given its proposal parents' particle of the same number, and log Q(z^k | qa^k). Philox keys
  /// them by particle number, so any split into calls draws the same particles.
  void draw_joint(const Parallel& par, const PlatedStructure& s, std::int64_t first,
                  std::int64_t count) {
    draw(par, s, count, first, /*mixture=*/false);
  }

  /// Particles of latent g, [run][instance][particle][event].
  const PolicyArray<Parallel, double>& particles(int g) const {
    return particles_.at(static_cast<std::size_t>(g));
  }
  /// log Q of latent g's particles, [run][instance][particle].
  const double* log_q(int g) const { return log_q_[g].data(); }

  mpis_elements::GroupView group_view(const PlatedStructure& s, int g) const {
    const LatentDecl& decl = s.latent_decl(g);
    mpis_elements::GroupView v;
    v.particles = const_cast<double*>(particles_[g].data());
    v.instances = s.instances(decl.plate);
    v.k = particles_[g].size() / std::max<std::int64_t>(1, runs_ * v.instances * decl.event_size);
    v.event_size = decl.event_size;
    const std::vector<int> path = s.path(decl.plate);
    v.depth = static_cast<int>(path.size());
    for (int d = 0; d < v.depth; ++d) v.plate_size[d] = s.plate_decl(path[d]).size;
    return v;
  }

  /// The link from an instance of a group in `child_plate` (latent `child`, or −1 for an
  /// observation's home plate) to parent `parent` (a latent, or kPreviousStep).
  mpis_elements::ParentLink parent_link(const PlatedStructure& s, int child, int parent,
                                        int child_plate) const {
    mpis_elements::ParentLink link;
    if (parent == kPreviousStep) {
      link.parent = group_view(s, child);
      link.previous_step = true;
      link.steps = s.plate_decl(child_plate).size;
      return link;
    }
    link.parent = group_view(s, parent);
    link.divisor = s.instances(child_plate) / s.instances(s.latent_decl(parent).plate);
    return link;
  }

  /// The links of a group in `child_plate` (as parent_link) to its declared `parents`.
  mpis_elements::GroupParents group_parents(const PlatedStructure& s, int child,
                                            const std::vector<int>& parents,
                                            int child_plate) const {
    mpis_elements::GroupParents links;
    links.count = static_cast<int>(parents.size());
    for (int slot = 0; slot < links.count; ++slot)
      links.link[slot] = parent_link(s, child, parents[slot], child_plate);
    return links;
  }

 private:
  /// Every group in order, `per_instance` particles an instance (Philox particle numbers from
  /// `first`), with a permutation per proposal slot when `mixture`.
  void draw(const Parallel& par, const PlatedStructure& s, std::int64_t per_instance,
            std::int64_t first, bool mixture) {
    particles_.clear();
    log_q_.clear();
    perms_.clear();
    for (int g = 0; g < s.latent_count(); ++g) {
      const LatentDecl& decl = s.latent_decl(g);
      particles_.push_back(par.template allocate<double>(runs_ * s.instances(decl.plate) *
                                                         per_instance * decl.event_size));
      const mpis_elements::GroupView self = group_view(s, g);
      perms_.emplace_back();
      mpis_elements::ProposalParents qa = proposal_parents(s, g, self.instances);
      for (int slot = 0; mixture && slot < qa.slots; ++slot) {
        perms_[g].push_back(
            par.template allocate<std::int32_t>(runs_ * self.instances * per_instance));
        mpis_elements::PermutationSampler permute;
        permute.perm = perms_[g].back().data();
        permute.instances = self.instances;
        permute.k = per_instance;
        const std::uint32_t purpose = kMpisPermutationPurpose +
                                      64u * static_cast<std::uint32_t>(g) +
                                      static_cast<std::uint32_t>(slot);
        permute.uniforms = {streams_, purpose};
        par.for_each(runs_ * self.instances, permute, 4 * per_instance);
        qa.perm[slot] = perms_[g].back().data();
      }
      draw_particles(par, s, g, self, qa, first);
      log_q_.push_back(par.template allocate<double>(runs_ * self.instances * per_instance));
      mpis_elements::ProposalLogDensity<Model> density{model_, g, self, qa, log_q_.back().data()};
      par.for_each(runs_ * self.instances * per_instance, density,
                   mpis_elements::kDensityWork * mixture_terms(qa, per_instance));
    }
  }

  /// Terms of the mixture proposal's density per particle: K per proposal slot with a
  /// permutation.
  static std::int64_t mixture_terms(const mpis_elements::ProposalParents& qa, std::int64_t k) {
    std::int64_t terms = 1;
    for (int s = 0; s < qa.slots; ++s)
      if (qa.perm[s]) terms *= k;
    return terms;
  }

  mpis_elements::ProposalParents proposal_parents(const PlatedStructure& s, int g,
                                                  std::int64_t instances) const {
    const LatentDecl& decl = s.latent_decl(g);
    mpis_elements::ProposalParents qa;
    qa.slots = static_cast<int>(decl.proposal_parents.size());
    qa.child_instances = instances;
    for (int slot = 0; slot < qa.slots; ++slot)
      qa.link[slot] = parent_link(s, g, decl.proposal_parents[slot], decl.plate);
    return qa;
  }

  /// Draws every particle of group g; a chain latent step by step, since step t's proposal
  /// conditions on step t − 1's particles.
  void draw_particles(const Parallel& par, const PlatedStructure& s, int g,
                      const mpis_elements::GroupView& self,
                      const mpis_elements::ProposalParents& qa, std::int64_t particle_offset) {
    const LatentDecl& decl = s.latent_decl(g);
    mpis_elements::ParticleSampler<Model> sampler{model_, g, self, qa};
    sampler.streams = streams_;
    sampler.particle_offset = particle_offset;
    const bool chain =
        std::find(decl.parents.begin(), decl.parents.end(), kPreviousStep) != decl.parents.end();
    if (!chain) {
      par.for_each(runs_ * self.instances * self.k, sampler, mpis_elements::kDensityWork);
      return;
    }
    sampler.steps = s.plate_decl(decl.plate).size;
    for (std::int64_t t = 0; t < sampler.steps; ++t) {
      sampler.step = t;
      par.for_each(runs_ * (self.instances / sampler.steps) * self.k, sampler,
                   mpis_elements::kDensityWork);
    }
  }

  Model model_;
  mpis_elements::RunStreams streams_;
  std::int64_t runs_;
  std::vector<PolicyArray<Parallel, double>> particles_;
  std::vector<PolicyArray<Parallel, double>> log_q_;
  std::vector<std::vector<PolicyArray<Parallel, std::int32_t>>>
      perms_;  ///< per group, one per proposal slot
};

}  // namespace myriad
