#pragma once
// A team (core/team.hpp) of host threads, so that team code written for a warp runs on the CPU
// with real concurrency: each lane is a std::thread, sync() is a barrier, and the collectives
// go through a shared slot array between barriers. A missing sync() in team code shows up here
// as a wrong or nondeterministic answer (and as a race under ThreadSanitizer) instead of only
// on a GPU. Any lane count works, including ones above 32 and ones that leave lanes idle.
//
// run_team(lanes, body) starts `lanes` threads, calls body(team) in each and joins them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace myriad::testing {

/// A reusable barrier for a fixed number of threads (C++17 has no std::barrier). Waiters spin
/// on the generation with std::this_thread::yield(): team code passes thousands of barriers per
/// transition, and with more lanes than cores a sleeping wait (a futex wake of every lane each
/// time) costs ten times more than handing the core on. The atomics' acquire/release ordering
/// makes every write before arrive_and_wait() visible to every lane after it.
class TeamBarrier {
 public:
  explicit TeamBarrier(int threads) : threads_(threads) {}

  void arrive_and_wait() {
    const std::uint64_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      return;
    }
    // Lanes that took different branches (a race in team code) would wait here forever: report
    // it as a failure instead of hanging the test.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (std::uint64_t spins = 1; generation_.load(std::memory_order_acquire) == generation;
         ++spins) {
      std::this_thread::yield();
      if (spins % 4096 == 0 && std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr,
                     "thread_team.hpp: a team barrier waited 60 s; the lanes have taken "
                     "different paths (a missing sync() or a lane-dependent branch)\n");
        std::abort();
      }
    }
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<std::uint64_t> generation_{0};
};

/// What the lanes of one team share.
struct ThreadTeamShared {
  explicit ThreadTeamShared(int lanes)
      : lanes(lanes), barrier(lanes), slots(static_cast<std::size_t>(lanes)) {}
  int lanes;
  TeamBarrier barrier;
  std::vector<double> slots;  ///< one value per lane for the collectives (float and double fit)
};

/// One lane's handle, satisfying the Team concept of core/team.hpp.
struct ThreadTeam {
  static constexpr bool kSerial = false;
  ThreadTeamShared* shared;
  int lane;

  int rank() const { return lane; }
  int size() const { return shared->lanes; }
  void sync() const { shared->barrier.arrive_and_wait(); }

  /// Σ of x over lanes, added in lane order by every lane (so the same in every lane).
  template <class T>
  T sum(T x) const {
    publish(static_cast<double>(x));
    T total = T(0);
    for (int l = 0; l < size(); ++l) total += static_cast<T>(shared->slots[l]);
    return total;
  }
  bool all(bool x) const {
    publish(x ? 1.0 : 0.0);
    for (int l = 0; l < size(); ++l)
      if (shared->slots[l] == 0.0) return false;
    return true;
  }
  template <class T>
  T broadcast(T x, int from) const {
    publish(static_cast<double>(x));
    return static_cast<T>(shared->slots[from]);
  }

 private:
  /// Writes this lane's slot once every lane has finished reading the previous collective's
  /// slots, and returns once every lane has written.
  void publish(double value) const {
    sync();
    shared->slots[lane] = value;
    sync();
  }
};

/// Runs body(team) on `lanes` threads forming one team; returns when all have finished.
inline void run_team(int lanes, const std::function<void(const ThreadTeam&)>& body) {
  ThreadTeamShared shared(lanes);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(lanes));
  for (int lane = 0; lane < lanes; ++lane)
    threads.emplace_back([&shared, &body, lane] { body(ThreadTeam{&shared, lane}); });
  for (std::thread& t : threads) t.join();
}

}  // namespace myriad::testing
