#include "myriad/io/summary_csv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "myriad/io/atomic_file.hpp"

namespace myriad::io {
namespace {

constexpr size_t kNumericColumns = 9;
constexpr size_t kMaxNameWidth = 24;
constexpr const char* kEllipsis = "...";

std::array<double, kNumericColumns> numeric_columns(const diag::VariableSummary& row) {
  return {row.mean, row.sd,   row.mcse_mean, row.q5,      row.q50,
          row.q95,  row.rhat, row.ess_bulk,  row.ess_tail};
}

/// printf-formats a finite value; non-finite values become "nan", "inf" or "-inf" (glibc would
/// print "-nan" for a NaN with the sign bit set, which readers do not all accept).
std::string format_number(const char* format, double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

/// RFC 4180: a field holding a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

/// Terminal columns taken by UTF-8 text, counting one per code point (names are expected to be
/// ASCII or simple scripts; wide CJK characters would be undercounted).
size_t display_width(const std::string& text) {
  return size_t(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;  // not a continuation byte
  }));
}

/// `text` cut to at most `width` code points, never inside a multi-byte character.
std::string truncate_to_width(const std::string& text, size_t width) {
  size_t points = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80 && points++ == width) {
      return text.substr(0, i);
    }
  }
  return text;
}

std::string table_name(const std::string& name) {
  if (display_width(name) <= kMaxNameWidth) return name;
  return truncate_to_width(name, kMaxNameWidth - 3) + kEllipsis;
}

void pad_left(std::string& out, const std::string& text, size_t width) {
  out.append(width - std::min(width, display_width(text)), ' ');
  out += text;
}

void pad_right(std::string& out, const std::string& text, size_t width) {
  out += text;
  out.append(width - std::min(width, display_width(text)), ' ');
}

}  // namespace

std::string format_summary_csv(const std::vector<diag::VariableSummary>& rows) {
  std::string out = kSummaryCsvHeader;
  out += '\n';
  for (const diag::VariableSummary& row : rows) {
    out += csv_field(row.name);
    for (const double value : numeric_columns(row)) {
      out += ',';
      out += format_number("%.6g", value);
    }
    out += '\n';
  }
  return out;
}

void write_summary_csv(const std::string& path, const std::vector<diag::VariableSummary>& rows) {
  write_text_file_atomically(path, format_summary_csv(rows));
}

std::string format_summary_table(const std::vector<diag::VariableSummary>& rows) {
  static const std::array<const char*, kNumericColumns + 1> kHeaders = {
      "variable", "mean", "sd", "mcse_mean", "q5", "q50", "q95", "rhat", "ess_bulk", "ess_tail"};
  // Cells first, so that each column can be as wide as its widest entry.
  std::vector<std::array<std::string, kNumericColumns + 1>> cells;
  cells.reserve(rows.size());
  for (const diag::VariableSummary& row : rows) {
    const auto values = numeric_columns(row);
    std::array<std::string, kNumericColumns + 1> line;
    line[0] = table_name(row.name);
    for (size_t c = 0; c < kNumericColumns; ++c) {
      const char* format = c < 6 ? "%.4g" : c == 6 ? "%.3f" : "%.0f";  // moments, rhat, ess
      line[c + 1] = format_number(format, values[c]);
    }
    cells.push_back(std::move(line));
  }
  std::array<size_t, kNumericColumns + 1> widths{};
  for (size_t c = 0; c < widths.size(); ++c) {
    widths[c] = display_width(kHeaders[c]);
    for (const auto& line : cells) widths[c] = std::max(widths[c], display_width(line[c]));
  }
  const auto render_line = [&](const auto& line) {
    std::string text;
    pad_right(text, line[0], widths[0]);
    for (size_t c = 1; c < widths.size(); ++c) {
      text += "  ";
      pad_left(text, line[c], widths[c]);
    }
    return text + '\n';
  };
  std::string out = render_line(kHeaders);
  for (const auto& line : cells) out += render_line(line);
  return out;
}

}  // namespace myriad::io
