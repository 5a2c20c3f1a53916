# The start every command-line test script shares (sourced; ctest runs tests/cli/*.sh only):
# $myriad from the script's first argument, a scratch directory $work removed on exit (a script
# that starts background jobs sets its own trap after this), failure counting (fail.bash), the
# bad-input checks (expect_error.bash) and the output checks below.
myriad=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/fail.bash"
source "$(dirname "${BASH_SOURCE[0]}")/expect_error.bash"

# Checks of a run's output files that several commands write alike, each a `fail` when not met.

# expect_summary_csv FILE LINES [ROWS]: the header every command's summary.csv starts with, and
# LINES lines in all (ROWS names the rows expected, for the failure).
expect_summary_csv() {
  [ "$(head -1 "$1")" = "variable,mean,sd,mcse_mean,q5,q50,q95,rhat,ess_bulk,ess_tail" ] ||
    fail "summary.csv header"
  [ "$(wc -l <"$1")" -eq "$2" ] || fail "summary.csv rows${3:+ ($3)}"
}

# expect_npy_shape FILE SHAPE NAME: FILE's .npy header gives the shape (SHAPE), e.g. "1, 64".
expect_npy_shape() {
  head -c 128 "$1" | grep -aq "'shape': ($2)" || fail "$3 shape"
}

# expect_run_json_keys FILE PATTERN...: run.json FILE matches every PATTERN (a key, or a key and
# its value as the JSON is written).
expect_run_json_keys() {
  local file=$1 key
  shift
  for key in "$@"; do
    grep -q "$key" "$file" || fail "run.json lacks $key"
  done
}
