# Shared by the CLI test scripts (sourced; not a test itself: ctest runs tests/cli/*.sh only).
#
# expect_error <pattern> <args...>: fails (counting into $failures) unless `$myriad <args...>`
# exits non-zero with exactly one line on stderr matching <pattern>, and leaves neither the
# output directory $work/out nor a staging leftover ($work/.out.*) behind. Needs $myriad and
# $work set by the caller, and $failures initialised. Sets $last_status.
expect_error() {
  local pattern=$1
  shift
  rm -rf "$work/out"
  "$myriad" "$@" >"$work/stdout" 2>"$work/stderr"
  local status=$?
  last_status=$status
  if [ $status -eq 0 ] || [ "$(wc -l <"$work/stderr")" -ne 1 ] ||
    ! grep -q -- "$pattern" "$work/stderr"; then
    echo "FAIL: myriad $* -> status $status, stderr: $(cat "$work/stderr")"
    failures=$((failures + 1))
  fi
  if [ -e "$work/out" ] || [ -n "$(find "$work" -maxdepth 1 -name '.out.*')" ]; then
    echo "FAIL: myriad $* left output behind"
    failures=$((failures + 1))
  fi
}

# expect_usage_error <pattern> <args...>: expect_error, and the exit status is 2 (a usage error:
# anything wrong with the command line, wherever its values are checked).
expect_usage_error() {
  expect_error "$@"
  if [ "$last_status" -ne 2 ]; then
    echo "FAIL: myriad ${*:2} -> status $last_status, not 2 (a usage error)"
    failures=$((failures + 1))
  fi
}
