#include "run_session.hpp"

#include "command_line.hpp"
#include "myriad/io/atomic_file.hpp"

namespace myriad::cli {

namespace {

Device claim_device(Device requested) {
  finish_reading_command_line();
  return resolve_device(requested);
}

}  // namespace

RunSession::RunSession(const CommandLine& line, Device device, Clock::time_point start,
                       io::Staging staging)
    : start_(start),
      device_(claim_device(device)),
      output_(line.text("output"), staging),
      quiet_(line.flag("quiet")),
      progress_(!quiet_ && !line.flag("no-progress")) {}

double RunSession::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void RunSession::commit(const Json& report) {
  io::write_text_file_atomically(output_.path("run.json"), report.dump(2) + "\n");
  output_.commit();
}

}  // namespace myriad::cli
