#!/usr/bin/env bash
# Runs bench/peers/adaptive_peers.py for every target x sampler, one process each, and appends
# one JSON line per run to OUT (see bench/peers/README.md, "Adaptive peers").
#
#   bench/peers/run_adaptive_peers.sh OUT.jsonl
#
# Default sizes: 1024 chains, 200 warm-up, 200 draws; diamonds 16 chains, 200 + 200. Besides
# NumPyro's NUTS (diagonal metric) and BlackJAX's ChEES with its defaults (identity metric), it
# runs ChEES once more with BlackJAX's opt-in diagonal metric (--chees-mass-matrix diagonal),
# the configuration closest to myriad's ChEES (which adapts a diagonal metric).
#
# Environment (for small check runs; the defaults are the measurement):
#   PYTHON           interpreter with jax, numpyro, blackjax, arviz (default /work/venv-peers/bin/python)
#   CHAINS WARMUP DRAWS                         sizes of gaussian_rho099, logistic, eight_schools
#   DIAMONDS_CHAINS DIAMONDS_WARMUP DIAMONDS_DRAWS   sizes of diamonds
#   TARGETS          targets to run (default: gaussian_rho099 logistic eight_schools diamonds)
#   LOGISTIC_DATA    logistic data as JSON instead of numpy's (data/logistic-myriad-*.json: myriad's)
# A run that dies (e.g. out of memory) appends a line with an "error" field; the rest go on.
set -uo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUT.jsonl" >&2
  exit 2
fi
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-/work/venv-peers/bin/python}
targets=${TARGETS:-gaussian_rho099 logistic eight_schools diamonds}

if ! "$python" -c 'import jax, numpyro, blackjax, arviz' 2>/dev/null; then
  echo "$python lacks jax/numpyro/blackjax/arviz: see bench/peers/README.md (Adaptive peers)" >&2
  exit 1
fi

failures=0
for target in $targets; do
  if [[ $target == diamonds ]]; then
    size=(--chains "${DIAMONDS_CHAINS:-16}" --warmup "${DIAMONDS_WARMUP:-200}"
          --draws "${DIAMONDS_DRAWS:-200}")
  else
    size=(--chains "${CHAINS:-1024}" --warmup "${WARMUP:-200}" --draws "${DRAWS:-200}")
  fi
  for variant in nuts chees chees-diagonal; do
    case $variant in
      nuts) run=(--sampler nuts) ;;
      chees) run=(--sampler chees) ;;
      chees-diagonal) run=(--sampler chees --chees-mass-matrix diagonal) ;;
    esac
    echo "== $target $variant ${size[*]}" >&2
    start=$(date +%s)
    data=()
    [[ $target == logistic && -n ${LOGISTIC_DATA:-} ]] && data=(--logistic-data "$LOGISTIC_DATA")
    if ! "$python" "$here/adaptive_peers.py" --target "$target" "${run[@]}" "${size[@]}" "${data[@]}" \
        >> "$out"; then
      failures=$((failures + 1))
      printf '{"target": "%s", "variant": "%s", "error": "adaptive_peers.py exited non-zero"}\n' \
        "$target" "$variant" >> "$out"
    fi
    echo "   $(( $(date +%s) - start )) s" >&2
  done
done
exit $(( failures > 0 ))
