#include "resume_record.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "command_line.hpp"
#include "json.hpp"
#include "myriad/core/error.hpp"
#include "myriad/io/atomic_file.hpp"

namespace myriad::cli {

namespace {

/// The options whose values are input files.
constexpr const char* kInputFileOptions[] = {"data", "init"};

/// The options `myriad resume` sets itself.
constexpr const char* kResumeOwnOptions[] = {"output", "quiet", "no-progress"};

bool one_of(const std::string& name, const char* const* first, const char* const* last) {
  for (; first != last; ++first)
    if (name == *first) return true;
  return false;
}

/// Size and FNV-1a hash of a file's bytes, "size:hash" in hex; empty if it cannot be read.
std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::uint64_t hash = 14695981039346656037ull, size = 0;
  for (std::istreambuf_iterator<char> it(in), end; it != end; ++it, ++size) {
    hash ^= static_cast<unsigned char>(*it);
    hash *= 1099511628211ull;
  }
  std::ostringstream text;
  text << size << ':' << std::hex << hash;
  return text.str();
}

}  // namespace

void write_resume_record(const std::string& path, const std::string& command,
                         const CommandLine& line) {
  Json options = Json::array();
  Json files = Json::array();
  for (auto [name, value] : line.given()) {
    if (one_of(name, std::begin(kInputFileOptions), std::end(kInputFileOptions))) {
      value = std::filesystem::absolute(value).string();
      files.push_back(
          {{"option", name}, {"path", value}, {"fingerprint", file_fingerprint(value)}});
    }
    options.push_back({name, line.takes_value(name) ? Json(value) : Json(nullptr)});
  }
  const Json record = {{"command", command}, {"options", options}, {"input_files", files}};
  io::write_text_file_atomically(path, record.dump(2) + "\n", /*durable=*/true);
}

ResumeCommand read_resume_record(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw io_error("cannot read '" + path + "': the interrupted run's command is missing");
  const Json record = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  const auto bad = [&] { return io_error("'" + path + "' is damaged: cannot resume"); };
  if (!record.is_object() || !record.contains("command") || !record["command"].is_string() ||
      !record.contains("options") || !record["options"].is_array() ||
      !record.contains("input_files") || !record["input_files"].is_array())
    throw bad();
  for (const Json& file : record["input_files"]) {
    if (!file.is_object() || !file.contains("path") || !file.contains("fingerprint")) throw bad();
    const std::string file_path = file["path"].get<std::string>();
    const std::string now = file_fingerprint(file_path);
    if (now.empty())
      throw io_error("cannot read '" + file_path + "', an input of the interrupted run");
    if (now != file["fingerprint"].get<std::string>())
      throw io_error("'" + file_path +
                     "' changed since the interrupted run started: resuming would continue the "
                     "run on other data");
  }
  ResumeCommand command{record["command"].get<std::string>(), {}};
  for (const Json& option : record["options"]) {
    if (!option.is_array() || option.size() != 2 || !option[0].is_string()) throw bad();
    const std::string name = option[0].get<std::string>();
    if (one_of(name, std::begin(kResumeOwnOptions), std::end(kResumeOwnOptions))) continue;
    command.words.push_back("--" + name +
                            (option[1].is_string() ? "=" + option[1].get<std::string>() : ""));
  }
  return command;
}

}  // namespace myriad::cli
