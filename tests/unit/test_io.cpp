// Output writing: .npy, summary.csv and the staged output directory (run.json is the CLI's,
// written through nlohmann-json and checked by tests/cli).

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/expect_error.hpp"
#include "common/scratch_directory.hpp"
#include "myriad/app/output_directory.hpp"
#include "myriad/core/error.hpp"
#include "myriad/diag/summary.hpp"
#include "myriad/io/atomic_file.hpp"
#include "myriad/io/draws_file.hpp"
#include "myriad/io/npy.hpp"
#include "myriad/io/summary_csv.hpp"

namespace fs = std::filesystem;
using myriad::io::Dtype;
using myriad::io::NpyWriter;
using myriad::io::OutputDirectory;
using myriad::testing::expect_error_containing;
using myriad::testing::ScratchDirectory;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::vector<std::string> entries_of(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

uint64_t bits_of(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

class IoNpy : public ::testing::Test {
 protected:
  ScratchDirectory scratch_;
};

class IoSummaryCsv : public ::testing::Test {
 protected:
  ScratchDirectory scratch_;
};

class IoOutputDirectory : public ::testing::Test {
 protected:
  ScratchDirectory scratch_;
};

// --- .npy ----------------------------------------------------------------------------------

TEST_F(IoNpy, HeaderIsAMultipleOf64BytesForManyShapes) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {2, 3}, {4096, 1000, 12}, {1, 2, 3, 4, 5, 6, 7, 8}, {int64_t(1) << 40, 3}};
  for (const Dtype dtype : {Dtype::float32, Dtype::float64}) {
    for (const auto& shape : shapes) {
      const std::string header = myriad::io::npy_header(shape, dtype);
      ASSERT_EQ(header.size() % 64, 0u) << header;
      EXPECT_EQ(header.compare(0, 6, "\x93NUMPY"), 0);
      EXPECT_EQ(header[6], 1);  // version 1.0
      EXPECT_EQ(header[7], 0);
      const size_t length = size_t(uint8_t(header[8])) | size_t(uint8_t(header[9])) << 8;
      EXPECT_EQ(length + 10, header.size());
      EXPECT_EQ(header.back(), '\n');
    }
  }
}

TEST_F(IoNpy, HeaderDictIsTheNumpyLiteral) {
  const std::string header = myriad::io::npy_header({2, 3, 4}, Dtype::float64);
  EXPECT_EQ(header.substr(10, header.find_last_not_of(" \n") - 9),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 4), }");
  EXPECT_NE(myriad::io::npy_header({5}, Dtype::float32).find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(myriad::io::npy_header({5}, Dtype::float32).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(myriad::io::npy_header({}, Dtype::float64).find("'shape': ()"), std::string::npos);
}

TEST_F(IoNpy, DoublesRoundTripBitExactly) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0 / 3.0,
                                DBL_MIN,
                                DBL_TRUE_MIN,
                                DBL_MAX,
                                -1e-300,
                                std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 engine(20240611);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  while (values.size() < 2 * 3 * 4) values.push_back(uniform(engine));
  const std::string path = scratch_ / "draws.npy";
  myriad::io::write_npy(path, values.data(), {2, 3, 4});

  EXPECT_EQ(fs::file_size(path), 128u + values.size() * sizeof(double));
  const myriad::io::NpyArray array = myriad::io::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(array.values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(bits_of(array.values[i]), bits_of(values[i])) << "index " << i;
  }
}

TEST_F(IoNpy, FloatsRoundTripExactly) {
  const std::vector<float> values = {1.5f, -2.25f, FLT_MIN, FLT_MAX, 0.1f, -0.0f};
  const std::string path = scratch_ / "f.npy";
  myriad::io::write_npy(path, values.data(), {3, 2});
  EXPECT_NE(read_file(path).find("'<f4'"), std::string::npos);
  const myriad::io::NpyArray array = myriad::io::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 2}));
  ASSERT_EQ(array.values.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(bits_of(array.values[i]), bits_of(double(values[i])));
  }
}

TEST_F(IoNpy, ScalarAndEmptyArrays) {
  const double scalar = 42.0;
  myriad::io::write_npy(scratch_ / "scalar.npy", &scalar, {});
  const auto read_scalar = myriad::io::read_npy(scratch_ / "scalar.npy");
  EXPECT_TRUE(read_scalar.shape.empty());
  EXPECT_EQ(read_scalar.values, std::vector<double>{42.0});

  myriad::io::write_npy(scratch_ / "empty.npy", static_cast<const double*>(nullptr), {0, 3});
  const auto read_empty = myriad::io::read_npy(scratch_ / "empty.npy");
  EXPECT_EQ(read_empty.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(read_empty.values.empty());
}

TEST_F(IoNpy, StreamingWriterProducesTheSameBytesAsWriteNpy) {
  std::vector<double> values(4 * 25 * 3);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(double(i));
  myriad::io::write_npy(scratch_ / "whole.npy", values.data(), {4, 25, 3});

  NpyWriter writer(scratch_ / "streamed.npy", {4, 25, 3});
  for (size_t start = 0; start < values.size(); start += 7) {
    writer.append(values.data() + start, std::min<size_t>(7, values.size() - start));
  }
  EXPECT_EQ(writer.appended(), writer.expected());
  writer.close();
  EXPECT_EQ(read_file(scratch_ / "streamed.npy"), read_file(scratch_ / "whole.npy"));
}

TEST_F(IoNpy, Float32WriterConvertsDoubles) {
  const std::vector<double> values = {0.1, 1e10, -3.0};
  NpyWriter writer(scratch_ / "f4.npy", {3}, Dtype::float32);
  writer.append(values.data(), values.size());
  writer.close();
  const auto array = myriad::io::read_npy(scratch_ / "f4.npy");
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(array.values[i], double(float(values[i])));
}

TEST_F(IoNpy, WriterThrowsOnTooFewValuesAndLeavesNoFile) {
  const std::string path = scratch_ / "short.npy";
  const std::vector<double> values(5, 1.0);
  NpyWriter writer(path, {2, 3});
  writer.append(values.data(), values.size());
  expect_error_containing<myriad::io_error>([&] { writer.close(); },
                                            {path, "needs 6 values", "5 were written"});
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(IoNpy, WriterRejectsTooManyValues) {
  const std::vector<double> values(7, 1.0);
  NpyWriter writer(scratch_ / "long.npy", {2, 3});
  EXPECT_THROW(writer.append(values.data(), values.size()), myriad::invalid_argument);
  writer.append(values.data(), 6);  // the failed append wrote nothing
  writer.close();
}

TEST_F(IoNpy, WriterDestroyedWithoutCloseRemovesItsFile) {
  const std::string path = scratch_ / "abandoned.npy";
  {
    NpyWriter writer(path, {3});
    const double value = 1.0;
    writer.append(&value, 1);
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(IoNpy, OpenFailureNamesThePathAndTheReason) {
  const std::string path = scratch_ / "missing/draws.npy";
  const double value = 0.0;
  expect_error_containing<myriad::io_error>([&] { myriad::io::write_npy(path, &value, {1}); },
                                            {path, "No such file or directory"});
}

TEST_F(IoNpy, RejectsNegativeExtents) {
  EXPECT_THROW(NpyWriter(scratch_ / "x.npy", {2, -1}), myriad::invalid_argument);
}

TEST_F(IoNpy, ReaderRejectsOtherFiles) {
  write_file(scratch_ / "not.npy", "hello, this is not an array");
  EXPECT_THROW(myriad::io::read_npy(scratch_ / "not.npy"), myriad::invalid_argument);
  EXPECT_THROW(myriad::io::read_npy(scratch_ / "absent.npy"), myriad::io_error);
  // A valid header whose data is one value short.
  const double values[2] = {1.0, 2.0};
  myriad::io::write_npy(scratch_ / "t.npy", values, {2});
  const std::string bytes = read_file(scratch_ / "t.npy");
  write_file(scratch_ / "t.npy", bytes.substr(0, bytes.size() - 8));
  EXPECT_THROW(myriad::io::read_npy(scratch_ / "t.npy"), myriad::invalid_argument);
}

// --- JSON ----------------------------------------------------------------------------------

// --- summary.csv ---------------------------------------------------------------------------

std::vector<myriad::diag::VariableSummary> example_rows() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {
      {"mu", 4.3721234, 3.29, 0.0412, -1.2, 4.37, 9.8, 1.00213, 3912.7, 2876.2},
      {"theta[1,2]", -1e-7, 1e7, 0.5, -0.25, 0.0, 123456789.0, nan, nan, 12.0},
      {"a_variable_with_a_very_long_name", 1, 2, 3, 4, 5, 6, 1.5, 7.4, 8.6},
  };
}

TEST_F(IoSummaryCsv, HeaderLineIsExact) {
  const std::string path = scratch_ / "summary.csv";
  myriad::io::write_summary_csv(path, example_rows());
  const std::string text = read_file(path);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "variable,mean,sd,mcse_mean,q5,q50,q95,rhat,ess_bulk,ess_tail");
  EXPECT_EQ(entries_of(scratch_.root()), std::vector<std::string>{"summary.csv"});
}

TEST_F(IoSummaryCsv, RowsUseSixSignificantDigitsAndNan) {
  std::istringstream lines(myriad::io::format_summary_csv(example_rows()));
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  EXPECT_EQ(line, "mu,4.37212,3.29,0.0412,-1.2,4.37,9.8,1.00213,3912.7,2876.2");
  std::getline(lines, line);
  EXPECT_EQ(line, "\"theta[1,2]\",-1e-07,1e+07,0.5,-0.25,0,1.23457e+08,nan,nan,12");
  std::getline(lines, line);
  EXPECT_EQ(line, "a_variable_with_a_very_long_name,1,2,3,4,5,6,1.5,7.4,8.6");
  EXPECT_FALSE(std::getline(lines, line));
}

TEST_F(IoSummaryCsv, WriteFailureNamesThePath) {
  const std::string path = scratch_ / "missing/summary.csv";
  expect_error_containing<myriad::io_error>(
      [&] { myriad::io::write_summary_csv(path, example_rows()); },
      {path, "No such file or directory"});
}

TEST_F(IoSummaryCsv, TableAlignsColumnsAndTruncatesLongNames) {
  const std::string table = myriad::io::format_summary_table(example_rows());
  std::istringstream lines(table);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << table;
  for (const std::string& row : rows) EXPECT_EQ(row.size(), rows[0].size()) << table;
  // Every column ends at the same position on every line (right-aligned numbers).
  for (const char* column : {"mean", "rhat", "ess_tail"}) {
    const size_t end = rows[0].find(column) + std::strlen(column);
    for (const std::string& row : rows) {
      EXPECT_NE(row[end - 1], ' ') << column << "\n" << table;
      EXPECT_TRUE(end == row.size() || row[end] == ' ') << column << "\n" << table;
    }
  }
  EXPECT_EQ(rows[0].substr(0, 8), "variable");
  EXPECT_EQ(rows[3].substr(0, 24), "a_variable_with_a_ver...");
  EXPECT_EQ(rows[3][24], ' ');
  EXPECT_NE(rows[1].find("  1.002  "), std::string::npos) << table;  // rhat, 3 decimals
  EXPECT_NE(rows[1].find("  3913  "), std::string::npos) << table;   // ess as an integer
  EXPECT_NE(rows[2].find("  nan  "), std::string::npos) << table;
}

// --- output directory ----------------------------------------------------------------------

void write_run_files(const OutputDirectory& out, const std::string& tag) {
  write_file(out.path("summary.csv"), "summary " + tag);
  const double draws[2] = {1.0, 2.0};
  myriad::io::write_npy(out.path("draws.npy"), draws, {1, 2, 1});
  myriad::io::write_text_file_atomically(out.path("run.json"), "{\"tag\": \"" + tag + "\"}\n");
}

TEST_F(IoOutputDirectory, StagesUntilCommit) {
  const std::string final_path = scratch_ / "run1";
  OutputDirectory out(final_path);
  EXPECT_TRUE(fs::is_directory(out.staging_path()));
  EXPECT_EQ(fs::path(out.staging_path()).parent_path(), scratch_.root());
  EXPECT_EQ(fs::path(out.staging_path()).filename().string(),
            ".run1.partial-" + std::to_string(::getpid()));
  EXPECT_EQ(fs::path(out.path("run.json")).parent_path().string(), out.staging_path());

  write_run_files(out, "a");
  EXPECT_FALSE(fs::exists(final_path));
  out.commit();
  EXPECT_TRUE(out.committed());
  EXPECT_EQ(entries_of(final_path),
            (std::vector<std::string>{"draws.npy", "run.json", "summary.csv"}));
  EXPECT_EQ(read_file(final_path + "/summary.csv"), "summary a");
  EXPECT_EQ(entries_of(scratch_.root()), std::vector<std::string>{"run1"});
  EXPECT_THROW(out.commit(), myriad::invalid_argument);
}

TEST_F(IoOutputDirectory, DestructionWithoutCommitLeavesNothing) {
  {
    OutputDirectory out(scratch_ / "run1");
    write_run_files(out, "a");
  }
  EXPECT_TRUE(entries_of(scratch_.root()).empty());
}

TEST_F(IoOutputDirectory, ReplacesAPreviousRun) {
  const std::string final_path = scratch_ / "run1";
  {
    OutputDirectory first(final_path);
    write_run_files(first, "first");
    first.commit();
  }
  OutputDirectory second(final_path);
  write_file(second.path("run.json"), "second");
  // Until the commit, the previous run stays intact.
  EXPECT_EQ(read_file(final_path + "/summary.csv"), "summary first");
  second.commit();
  EXPECT_EQ(entries_of(final_path), std::vector<std::string>{"run.json"});
  EXPECT_EQ(read_file(final_path + "/run.json"), "second");
  EXPECT_EQ(entries_of(scratch_.root()), std::vector<std::string>{"run1"});  // no .old-, .partial-
}

TEST_F(IoOutputDirectory, RefusesADirectoryWithForeignFiles) {
  const std::string final_path = scratch_ / "mine";
  fs::create_directories(final_path);
  write_file(final_path + "/thesis.tex", "precious");
  write_file(final_path + "/run.json", "{}");
  expect_error_containing<myriad::io_error>(
      [&] { OutputDirectory out(final_path); },
      {final_path, "holds other files", "thesis.tex", "choose a new directory"});
  EXPECT_EQ(read_file(final_path + "/thesis.tex"), "precious");
  EXPECT_EQ(entries_of(scratch_.root()), std::vector<std::string>{"mine"});
}

TEST_F(IoOutputDirectory, RefusesAtCommitIfForeignFilesAppeared) {
  const std::string final_path = scratch_ / "run1";
  OutputDirectory out(final_path);
  write_run_files(out, "a");
  fs::create_directories(final_path);
  write_file(final_path + "/notes.txt", "added during the run");
  EXPECT_THROW(out.commit(), myriad::io_error);
  EXPECT_EQ(entries_of(final_path), std::vector<std::string>{"notes.txt"});
}

TEST_F(IoOutputDirectory, FailsUnderARegularFile) {
  // Tests may run as root, where permission bits do not stop writes; a file as parent does.
  write_file(scratch_ / "file", "x");
  const std::string final_path = scratch_ / "file/run1";
  expect_error_containing<myriad::io_error>(
      [&] { OutputDirectory out(final_path); },
      {"cannot create output directory '" + final_path + "'", "Not a directory"});
}

TEST_F(IoOutputDirectory, FailsWhenThePathIsARegularFile) {
  const std::string final_path = scratch_ / "file";
  write_file(final_path, "x");
  expect_error_containing<myriad::io_error>([&] { OutputDirectory out(final_path); },
                                            {final_path, "not a directory"});
  EXPECT_EQ(read_file(final_path), "x");
}

TEST_F(IoOutputDirectory, CreatesMissingParentsAndAcceptsATrailingSlash) {
  OutputDirectory out(scratch_ / "a/b/run1/");
  EXPECT_EQ(out.final_path(), scratch_ / "a/b/run1");
  write_run_files(out, "a");
  out.commit();
  EXPECT_TRUE(fs::is_regular_file(scratch_ / "a/b/run1/draws.npy"));
}

TEST_F(IoOutputDirectory, AFailedRunRemovesTheParentsItCreated) {
  fs::create_directories(scratch_ / "a");
  {
    OutputDirectory out(scratch_ / "a/b/c/run1");
    write_run_files(out, "a");
    EXPECT_TRUE(fs::is_directory(scratch_ / "a/b/c"));
  }
  EXPECT_TRUE(fs::is_directory(scratch_ / "a")) << "it existed before the run";
  EXPECT_TRUE(entries_of(scratch_ / "a").empty());
  // A created parent that gained another entry meanwhile stays.
  {
    OutputDirectory out(scratch_ / "a/b/run2");
    write_file(scratch_ / "a/b/notes.txt", "kept");
  }
  EXPECT_EQ(entries_of(scratch_ / "a/b"), std::vector<std::string>{"notes.txt"});
}

TEST_F(IoOutputDirectory, OnlyRunFilesMayBeWritten) {
  OutputDirectory out(scratch_ / "run1");
  EXPECT_THROW(out.path("notes.txt"), myriad::invalid_argument);
  EXPECT_THROW(out.path("../run.json"), myriad::invalid_argument);
}

TEST_F(IoOutputDirectory, RejectsPathsWithoutADirectoryName) {
  EXPECT_THROW(OutputDirectory out(""), myriad::io_error);
  EXPECT_THROW(OutputDirectory out(scratch_ / "."), myriad::io_error);
}

TEST_F(IoOutputDirectory, TextFilesAreReplacedAtomically) {
  const std::string path = scratch_ / "run.json";
  myriad::io::write_text_file_atomically(path, "one");
  myriad::io::write_text_file_atomically(path, "two");
  EXPECT_EQ(read_file(path), "two");
  EXPECT_EQ(entries_of(scratch_.root()), std::vector<std::string>{"run.json"});
}

}  // namespace

// --- resumable staging and the streamed draws file -----------------------------------------

namespace resumable {

using myriad::io::DrawsFile;
using myriad::io::Staging;

TEST_F(IoOutputDirectory, ResumableStagingIsKeptWhileItHoldsACheckpoint) {
  const std::string final_path = scratch_ / "run";
  const std::string staging = OutputDirectory::resumable_path(final_path);
  EXPECT_EQ(staging, scratch_ / ".run.resumable");
  {
    OutputDirectory out(final_path, Staging::resumable);
    EXPECT_EQ(out.staging_path(), staging);
    std::ofstream(out.path("command.json")) << "{}";
  }
  EXPECT_FALSE(fs::exists(staging)) << "no checkpoint: nothing to resume, removed";
  {
    OutputDirectory out(final_path, Staging::resumable);
    std::ofstream(out.path("checkpoint.bin")) << "state";
    // A second process on the same run is refused while the first holds it.
    expect_error_containing<myriad::io_error>(
        [&] { OutputDirectory second(final_path, Staging::resume); },
        {staging, "in use by another myriad process"});
  }
  ASSERT_TRUE(fs::exists(fs::path(staging) / "checkpoint.bin"));
  expect_error_containing<myriad::io_error>(
      [&] { OutputDirectory again(final_path, Staging::resumable); },
      {"an interrupted run of", "myriad resume " + final_path});
  OutputDirectory resumed(final_path, Staging::resume);
  std::ofstream(resumed.path("summary.csv")) << "variable\n";
  resumed.commit();
  EXPECT_TRUE(fs::exists(fs::path(final_path) / "summary.csv"));
  EXPECT_FALSE(fs::exists(fs::path(final_path) / "checkpoint.bin"));
  EXPECT_FALSE(fs::exists(staging));
}

TEST_F(IoOutputDirectory, ResumeNeedsAnInterruptedRunAndFreshRunsNoResumeFiles) {
  expect_error_containing<myriad::io_error>(
      [&] { OutputDirectory out(scratch_ / "none", Staging::resume); },
      {"no interrupted run to resume at"});
  OutputDirectory fresh(scratch_ / "fresh");
  EXPECT_THROW(fresh.path("checkpoint.bin"), myriad::invalid_argument);
}

TEST_F(IoOutputDirectory, DrawsFileWritesChunksChainMajorAndReadsBlocks) {
  const std::string path = scratch_ / "draws.npy";
  DrawsFile file = DrawsFile::create(path, 3, 4, 2);
  EXPECT_EQ(file.file_bytes(), 128 + 3 * 4 * 2 * 8);
  // Draws 0-1 then 2-3 of every chain, [chain][draw][quantity]: value = 100c + 10i + q.
  for (int first : {0, 2}) {
    std::vector<double> chunk;
    for (int c = 0; c < 3; ++c)
      for (int i = first; i < first + 2; ++i)
        for (int q = 0; q < 2; ++q) chunk.push_back(100 * c + 10 * i + q);
    file.write_draws(first, 2, chunk.data());
  }
  std::vector<double> block(2 * 4);
  file.read_quantities(1, 1, 2, block.data());  // quantity 1 of chains 0 and 1
  EXPECT_EQ(block, (std::vector<double>{1, 11, 21, 31, 101, 111, 121, 131}));
  file.close();
  const myriad::io::NpyArray array = myriad::io::read_npy(path);
  ASSERT_EQ(array.shape, (std::vector<int64_t>{3, 4, 2}));
  EXPECT_EQ(array.values[2 * 4 * 2 + 3 * 2 + 1], 231);
  EXPECT_NO_THROW(DrawsFile::open_existing(path, 3, 4, 2));
  expect_error_containing<myriad::io_error>([&] { DrawsFile::open_existing(path, 3, 5, 2); },
                                            {path, "shape 3 x 5 x 2"});
  expect_error_containing<myriad::io_error>(
      [&] { DrawsFile::create(scratch_ / "missing/draws.npy", 1, 1, 1); },
      {"cannot create", "No such file or directory"});
}

}  // namespace resumable
