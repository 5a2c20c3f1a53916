#pragma once
// SIGINT and SIGTERM as a request to stop at the next iteration boundary, for a run that keeps
// checkpoints (`myriad sample --checkpoint-every`): the run writes its checkpoint and exits with
// 128 + the signal's number, as a shell expects of a program a signal ended. A second signal
// while the first is handled ends the process at once (the previous checkpoint stays valid).

namespace myriad::cli {

/// Installs the handlers (for the rest of the process).
void catch_stop_signals();
/// True once SIGINT or SIGTERM has arrived.
bool stop_requested();
/// The signal that asked to stop (SIGINT or SIGTERM), 0 if none.
int stop_signal();
/// "SIGINT", "SIGTERM" or "signal N".
const char* stop_signal_name();

}  // namespace myriad::cli
