#include "stop_signals.hpp"

#include <csignal>
#include <cstdio>

namespace myriad::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int signal_number) {
  if (g_signal != 0) {  // asked twice: the default action, now
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  g_signal = signal_number;
}

}  // namespace

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // file writes and reads go on; the run polls the flag
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool stop_requested() { return g_signal != 0; }

int stop_signal() { return g_signal; }

const char* stop_signal_name() {
  static char name[24];
  switch (g_signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      std::snprintf(name, sizeof name, "signal %d", int(g_signal));
      return name;
  }
}

}  // namespace myriad::cli
