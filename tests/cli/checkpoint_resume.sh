#!/usr/bin/env bash
# Runs that survive (docs/checkpoints.md): `myriad sample --checkpoint-every` stopped by SIGINT or
# SIGTERM, or killed by SIGKILL between checkpoints, and continued with `myriad resume DIR`, gives
# the uninterrupted run's draws.npy and summary.csv byte for byte and its run.json but for the
# timings and the checkpoint block; and the errors around it.
set -uo pipefail
source "$(dirname "$0")/lib/setup.bash"
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1

# A run of a few seconds on two cores: ChEES (the default) with a dense metric in dimension 100.
run=(--model gaussian --chains 512 --warmup 300 --draws 300 --seed 11 --device cpu --quiet)
"$myriad" sample "${run[@]}" --output reference || exit 1

same_outputs() {  # $1: a resumed run's directory
  cmp -s "$1/draws.npy" reference/draws.npy || fail "$1: draws.npy differs from the uninterrupted run's"
  cmp -s "$1/summary.csv" reference/summary.csv || fail "$1: summary.csv differs"
  python3 - "$1/run.json" reference/run.json <<'PY' || fail "$1: run.json differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
timing = {"wall_time", "gradient_evaluations_per_second", "checkpoint"}
diff = sorted(k for k in set(a) | set(b) if k not in timing and a.get(k) != b.get(k))
assert not diff, diff
assert "checkpoint" in a and "checkpoint" not in b
PY
}

# Waits until $1 exists (at most 60 s).
wait_for() {
  for _ in $(seq 600); do
    [ -e "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# Sends signal $1 to the run last started in the background, $2 seconds after file $3 exists
# (at once without $3; failing with $4 if it never appears), and waits for it: its exit status
# in $status, bash's notice of a killed job silenced.
signal_run() {
  local pid=$! signal=$1 delay=$2
  if [ $# -gt 2 ]; then
    wait_for "$3" || fail "$4"
  fi
  sleep "$delay"
  kill -"$signal" $pid
  wait $pid 2>/dev/null
  status=$?
}

# SIGINT once the first checkpoint is written: another checkpoint, exit 130, no output
# directory, the state beside it, one line saying how to go on; resume completes the run.
"$myriad" sample "${run[@]}" --output int --checkpoint-every 25 --no-progress 2>int.err &
signal_run INT 0 .int.resumable/checkpoint.bin "SIGINT: no first checkpoint"
[ $status -eq 130 ] || fail "SIGINT: exit status $status, expected 130"
[ ! -e int ] || fail "SIGINT: int exists"
[ -f .int.resumable/checkpoint.bin ] || fail "SIGINT: no checkpoint"
grep -q "myriad resume int" int.err || fail "SIGINT: message lacks the resume command: $(cat int.err)"
[ "$(wc -l <int.err)" -eq 1 ] || fail "SIGINT: not one line: $(cat int.err)"
"$myriad" resume int --quiet || fail "resume int failed"
same_outputs int
[ ! -e .int.resumable ] || fail "the resumed run left its state behind"

# SIGKILL between checkpoints in warm-up, SIGKILL again while sampling, then SIGTERM.
"$myriad" sample "${run[@]}" --output kill --checkpoint-every 25 &
signal_run KILL 0.1 .kill.resumable/checkpoint.bin "SIGKILL: no first checkpoint"
[ ! -e kill ] || fail "SIGKILL: kill exists"
"$myriad" resume kill --quiet &
signal_run KILL 0.3 .kill.resumable/draws.npy "SIGKILL: the resumed run did not reach sampling"
[ ! -e kill ] || fail "SIGKILL while sampling: kill exists"
"$myriad" resume kill --quiet &
signal_run TERM 0.3
[ $status -eq 143 ] || [ $status -eq 0 ] || fail "SIGTERM: exit status $status, expected 143"
if [ ! -e kill/run.json ]; then
  "$myriad" resume kill --quiet || fail "resume kill failed"
fi
same_outputs kill
python3 -c "
import json; c = json.load(open('kill/run.json'))['checkpoint']
assert c['every'] == 25 and c['resumed_at_iteration'] > 300, c" || fail "kill: checkpoint block"

# Errors: nothing to resume; a second run onto an interrupted one; changed data; samplers
# without checkpoints.
"$myriad" resume nowhere 2>err.txt
[ $? -eq 1 ] && grep -q "no interrupted run to resume at 'nowhere'" err.txt ||
  fail "resume of nothing: $(cat err.txt)"
echo '{"J": 3, "y": [28, 8, -3], "sigma": [15, 10, 16]}' >data.json
"$myriad" sample --model eight_schools --data data.json --chains 4096 --warmup 100000 \
  --draws 100 --device cpu --quiet --no-progress --checkpoint-every 10 --output changed &
signal_run INT 0 .changed.resumable/checkpoint.bin "changed: no first checkpoint"
"$myriad" sample --model eight_schools --data data.json --chains 8 --warmup 10 --draws 10 \
  --device cpu --quiet --checkpoint-every 5 --output changed 2>err.txt
[ $? -eq 1 ] && grep -q "continue it with 'myriad resume changed'" err.txt ||
  fail "a new run over an interrupted one: $(cat err.txt)"
echo " " >>data.json
"$myriad" resume changed 2>err.txt
[ $? -eq 1 ] && grep -q "changed since the interrupted run started" err.txt ||
  fail "changed data: $(cat err.txt)"
[ -d .changed.resumable ] || fail "a refused resume removed the interrupted run's state"
"$myriad" sample --model linear_gaussian --sampler abc-mcmc --abc-epsilon 0.5 --chains 8 \
  --warmup 10 --draws 10 --checkpoint-every 5 --device cpu --output abc 2>err.txt
[ $? -eq 2 ] && grep -q "checkpoint-every applies to the HMC samplers" err.txt ||
  fail "checkpoints with abc-mcmc: $(cat err.txt)"

# Constrained HMC: SIGINT after the first checkpoint, then resumed to the uninterrupted run's.
chmc=(--model linear_gaussian --chains 2048 --warmup 600 --draws 600 --seed 5 --device cpu --quiet)
"$myriad" sample "${chmc[@]}" --output chmc-reference || fail "chmc reference run"
"$myriad" sample "${chmc[@]}" --output chmc --checkpoint-every 20 --no-progress 2>/dev/null &
signal_run INT 0 .chmc.resumable/checkpoint.bin "chmc: no first checkpoint"
[ $status -eq 130 ] || [ $status -eq 0 ] || fail "chmc SIGINT: exit status $status"
[ -e chmc/run.json ] || "$myriad" resume chmc --quiet || fail "resume chmc failed"
cmp -s chmc/draws.npy chmc-reference/draws.npy || fail "chmc: resumed draws differ"

[ $failures -eq 0 ] || exit 1
echo "checkpoint and resume: OK"
