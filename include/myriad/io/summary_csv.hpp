#pragma once
// summary.csv (one row per recorded quantity) and its terminal rendering.

#include <string>
#include <vector>

#include "myriad/diag/summary.hpp"

namespace myriad::io {

/// The header line of summary.csv, without the line break.
inline constexpr const char* kSummaryCsvHeader =
    "variable,mean,sd,mcse_mean,q5,q50,q95,rhat,ess_bulk,ess_tail";

/// The CSV text of summary.csv: the header line, then one line per row. Numbers have 6
/// significant digits (printf "%.6g"); a NaN (e.g. R-hat of a constant quantity) is written as
/// `nan` and infinities as `inf`/`-inf`, which pandas, R and numpy read back as such. Variable
/// names that hold a comma, quote or line break (e.g. "theta[1,2]") are quoted per RFC 4180.
std::string format_summary_csv(const std::vector<diag::VariableSummary>& rows);

/// Writes format_summary_csv(rows) to `path`. Throws myriad::io_error naming the path and the
/// reason on failure.
void write_summary_csv(const std::string& path, const std::vector<diag::VariableSummary>& rows);

/// A fixed-width table of the same columns for the terminal: one header line and one line per
/// row, columns right-aligned to their widest entry; mean to q95 with 4 significant digits,
/// R-hat with 3 decimals, ESS as integers. Names longer than 24 characters are cut to 21
/// followed by "...".
std::string format_summary_table(const std::vector<diag::VariableSummary>& rows);

}  // namespace myriad::io
