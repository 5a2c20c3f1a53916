# Counting failures in a command-line test: `fail MESSAGE` reports one and goes on; the script
# ends with `[ $failures -eq 0 ] || exit 1`.
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
