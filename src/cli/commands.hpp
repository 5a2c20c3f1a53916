#pragma once
// The subcommands of the myriad tool. Each returns the process exit status and reports errors by
// throwing (main turns them into one line on stderr).

namespace myriad::cli {

/// resuming: continue the interrupted run whose --output the command line names (myriad resume).
int sample_command(int argc, char** argv, bool resuming = false);
int resume_command(int argc, char** argv);
int ais_command(int argc, char** argv);
int temper_command(int argc, char** argv);
int mpis_command(int argc, char** argv);
int sbc_command(int argc, char** argv);
int models_command(int argc, char** argv);

}  // namespace myriad::cli
