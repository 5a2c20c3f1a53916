#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace myriad::cli {

ProgressBar::ProgressBar(bool wanted)
    : enabled_(wanted && isatty(fileno(stderr))),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(const Progress& progress) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // Redraw at most ten times a second, and always at the end of a phase.
  if (progress.done != progress.total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  constexpr int kWidth = 30;
  const double fraction = progress.total > 0 ? double(progress.done) / double(progress.total) : 1;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r%-8s [%s] %lld/%lld  %.1fs ", progress.phase, bar.c_str(),
               static_cast<long long>(progress.done), static_cast<long long>(progress.total),
               elapsed);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace myriad::cli
