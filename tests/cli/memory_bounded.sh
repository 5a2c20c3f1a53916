#!/usr/bin/env bash
# Host memory bounded (docs/checkpoints.md): draws stream to draws.npy, and the diagnostics read
# it back in blocks, so a run whose trace is larger than the process may allocate at all
# completes; --memory-limit refuses, before it starts, a run that would not fit.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"
cd "$work" || exit 1

# The process's data segment (heap, anonymous mappings, thread stacks) limited to 60 MB, well
# below the trace: 256 chains x 400 draws x 100 quantities of 8 bytes, 81.9 MB.
limit_kb=60000
if ! (ulimit -d $limit_kb && "$myriad" sample --model gaussian --chains 16 --warmup 10 \
  --draws 10 --device cpu --quiet --no-progress --output probe); then
  echo "SKIP: a small run does not fit in a ${limit_kb} KB data segment here"
  exit 77
fi
(
  ulimit -d $limit_kb
  "$myriad" sample --model gaussian --chains 256 --warmup 50 --draws 400 --seed 1 --device cpu \
    --quiet --no-progress --memory-limit 32M --output big
) || fail "the run with a trace larger than its memory did not complete"
python3 - <<'PY' || fail "outputs of the bounded run"
import json, os
size = os.path.getsize("big/draws.npy")
assert size == 128 + 256 * 400 * 100 * 8 > 60000 * 1024, size
report = json.load(open("big/run.json"))
assert report["settings"]["memory_limit_bytes"] == 32 << 20, report["settings"]
assert report["diagnostics"]["chains"] == 256, report["diagnostics"]
rows = open("big/summary.csv").read().splitlines()
assert len(rows) == 101 and all(r.split(",")[7] != "" for r in rows[1:]), rows[:3]
PY

# Refused before it starts, with the figures; no output.
"$myriad" sample --model gaussian --chains 4096 --warmup 10 --draws 10 --device cpu --quiet \
  --memory-limit 1M --output refused 2>err.txt
status=$?
[ $status -eq 1 ] || fail "--memory-limit 1M: exit status $status"
grep -q "this run needs about .* MiB of host memory (chains .*), more than the memory limit of 1.00 MiB" err.txt ||
  fail "--memory-limit 1M: $(cat err.txt)"
[ ! -e refused ] && [ -z "$(ls -A | grep refused)" ] || fail "--memory-limit 1M left an output"
"$myriad" sample --model gaussian --memory-limit lots --output bad 2>err.txt
[ $? -eq 2 ] && grep -q "memory-limit must be a positive number of bytes" err.txt ||
  fail "--memory-limit lots: $(cat err.txt)"

[ $failures -eq 0 ] || exit 1
echo "memory bounded: OK"
