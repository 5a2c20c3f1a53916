# The start every command-line test script shares (sourced; ctest runs tests/cli/*.sh only):
# $myriad from the script's first argument, a scratch directory $work removed on exit (a script
# that starts background jobs sets its own trap after this), and failure counting (fail.bash).
myriad=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/fail.bash"
