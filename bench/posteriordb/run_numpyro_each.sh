#!/usr/bin/env bash
# NumPyro's NUTS on the posteriordb posteriors, one process per posterior, each stopped after a
# time limit (numpyro_posteriordb.py runs them all in one process and has no limit of its own).
#
#   bench/posteriordb/run_numpyro_each.sh [OUT.jsonl] [-- extra numpyro_posteriordb.py options]
#
# OUT defaults to bench/results/posteriordb-numpyro-cpu.jsonl (appended). Environment:
#   PYTHON      the interpreter with JAX and NumPyro (default /opt/venv-bench/bin/python)
#   LIMIT       seconds per posterior, compilation and initialisation included (default 660:
#               10 minutes of sampling plus about a minute for compile + init)
#   POSTERIORS  space-separated names or prefixes (default: all fifteen)
#   WAIT_IDLE   wait up to this many seconds, before each posterior, until no build or test
#               process (ninja, cc1plus, nvcc, ctest, myriad_*test*, myriad_bench) has run for
#               10 s (default 600; 0: do not wait)
# A posterior stopped by the limit gets a line with "error": "timeout ..." in OUT. The processes
# seen before and after each posterior are printed to stderr as "busy: ...".
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/bench/results/posteriordb-numpyro-cpu.jsonl}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
python=${PYTHON:-/opt/venv-bench/bin/python}
limit=${LIMIT:-660}
wait_idle=${WAIT_IDLE:-600}
posteriors=${POSTERIORS:-"eight_schools arK arma garch gp_pois_regr kidiq earnings mesquite
    low_dim_gauss_mix hmm_example diamonds sblrc kilpisjarvi nes1992 one_comp"}
pattern='^(ninja|cc1plus|nvcc|ctest|myriad_.*te.*|myriad_bench|cmake|make)$'

busy() { ps -eo comm= | grep -E "$pattern" | sort -u | tr '\n' ' '; }

wait_for_idle() {
  local start=$SECONDS quiet=0
  while [ $((SECONDS - start)) -lt "$wait_idle" ]; do
    if [ -n "$(busy)" ]; then quiet=0; else quiet=$((quiet + 2)); fi
    [ "$quiet" -ge 10 ] && return
    sleep 2
  done
}

status=0
for p in $posteriors; do
  [ "$wait_idle" -gt 0 ] && wait_for_idle
  echo "busy before $p: $(busy)" >&2
  start=$SECONDS
  PYTHONUNBUFFERED=1 timeout "$limit" "$python" "$here/numpyro_posteriordb.py" \
    --posteriors "$p" --out "$out" "$@"
  rc=$?
  echo "busy after $p: $(busy) ($((SECONDS - start)) s in all)" >&2
  if [ "$rc" -eq 124 ]; then
    status=1
    "$python" - "$out" "$p" "$limit" "$@" <<'EOF'
import json, sys
out, prefix, limit = sys.argv[1], sys.argv[2], sys.argv[3]
names = ["eight_schools-eight_schools_noncentered", "arK-arK", "arma-arma11", "garch-garch11",
         "gp_pois_regr-gp_pois_regr", "kidiq-kidscore_momhsiq", "earnings-logearn_interaction_z",
         "mesquite-logmesquite_logvash", "low_dim_gauss_mix-low_dim_gauss_mix",
         "hmm_example-hmm_example", "diamonds-diamonds", "sblrc-blr",
         "kilpisjarvi_mod-kilpisjarvi", "nes1992-nes",
         "one_comp_mm_elim_abs-one_comp_mm_elim_abs"]
name = next((n for n in names if n == prefix or n.startswith(prefix)), prefix)
line = {"posterior": name, "library": "numpyro", "extra_args": sys.argv[4:],
        "error": f"timeout: stopped after {limit} s (compilation and initialisation "
                 f"included), not finished"}
with open(out, "a") as f:
    f.write(json.dumps(line) + "\n")
print(f"  TIMEOUT {name}: stopped after {limit} s", file=sys.stderr)
EOF
  elif [ "$rc" -ne 0 ]; then
    status=1
  fi
done
exit $status
