#pragma once
// A model's data from a file in the JSON format of CmdStan and posteriordb (CmdStan Guide,
// "JSON format for CmdStan"): one object whose members are the data variables — a scalar is a
// number, an array or vector a JSON array, a matrix an array of rows, an array of arrays nested
// alike; the strings "NaN", "Inf", "Infinity", "-Inf" and "-Infinity" stand for the
// non-finite reals. What `myriad sample --data FILE.json` reads for a built-in model.
//
// Every accessor checks the variable's presence, type (integer or real), shape and finiteness,
// and throws myriad::invalid_argument with one line naming the file and the variable, so that
// bad data is refused before a run starts. The models then check what only they know (Stan's
// declared bounds, consistency between sizes).

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace myriad {

class StanData {
 public:
  /// Reads and parses `path`; throws myriad::invalid_argument if it cannot be read, is not
  /// JSON, is not an object, or holds a value that is neither a number, one of the non-finite
  /// strings, nor a rectangular array of them.
  static StanData read(const std::string& path);
  /// Parses JSON text; `origin` names it in error messages.
  static StanData parse(const std::string& text, const std::string& origin);

  bool has(const std::string& name) const;

  /// An `int` variable in [min, max].
  int integer(const std::string& name, long long min, long long max) const;
  /// A finite `real` variable (an integer is a real too, as in Stan).
  double real(const std::string& name) const;
  /// A one-dimensional array (or vector) of `length` finite reals.
  std::vector<double> reals(const std::string& name, std::size_t length) const;
  /// A one-dimensional array of `length` integers, each in [min, max].
  std::vector<int> integers(const std::string& name, std::size_t length, long long min,
                            long long max) const;
  /// A rows × cols matrix of finite reals, row-major.
  std::vector<double> matrix(const std::string& name, std::size_t rows, std::size_t cols) const;
  /// The shape of a variable ({} for a scalar).
  std::vector<std::size_t> shape(const std::string& name) const;

  const std::string& origin() const { return origin_; }

 private:
  struct Variable {
    std::vector<std::size_t> shape;
    std::vector<double> values;  ///< row-major
    bool all_integers = true;
  };
  const Variable& find(const std::string& name) const;
  std::vector<double> finite_values(const std::string& name, const Variable& v) const;
  [[noreturn]] void fail(const std::string& name, const std::string& what) const;

  std::string origin_;
  std::map<std::string, Variable> variables_;
};

/// A data value as a person writes it in a message: 434.5, 250, inf (not 434.500000).
std::string data_number_text(double x);

}  // namespace myriad
