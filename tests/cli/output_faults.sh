#!/usr/bin/env bash
# Faults of the disk the output goes to (docs/checkpoints.md), on small tmpfs mounts: a disk too
# small for draws.npy fails before sampling; a disk that fills up mid-run (a checkpoint that does
# not fit) and one that turns read-only mid-run fail with one clear line and a non-zero exit,
# and leave no output that looks complete; the read-only one, made writable again, resumes to
# the uninterrupted run's draws. Needs root (mount); skipped otherwise.
set -uo pipefail
myriad=$1
work=$(mktemp -d)
mnt="$work/mnt"
mkdir "$mnt"
if ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
  rm -rf "$work"
  echo "SKIP: mounting a tmpfs needs root"
  exit 77
fi
trap 'kill -9 $(jobs -p) 2>/dev/null; umount -l "$mnt"; rm -rf "$work"' EXIT
source "$(dirname "$0")/lib/fail.bash"
remount() {  # $1: tmpfs options
  umount -l "$mnt" && mount -t tmpfs -o "$1" tmpfs "$mnt" || exit 1
}
# One line on stderr containing $2, exit status 1, nothing in $mnt that looks like a result.
expect_failure() {  # $1: what, $2: message fragment, $3: status
  [ "$3" -eq 1 ] || fail "$1: exit status $3, expected 1"
  grep -q "$2" err.txt || fail "$1: message lacks '$2': $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "$1: not one line: $(cat err.txt)"
  # A result directory holds run.json; a staging directory is hidden and never holds one.
  if find "$mnt" -name run.json | grep -q . || ls "$mnt" | grep -q .; then
    fail "$1: an output that looks complete: $(find "$mnt")"
  fi
}
cd "$work" || exit 1

# draws.npy of 64 chains x 300 draws x 100 quantities: 15.36 MB (the whole file is allocated
# when sampling starts).
run=(--model gaussian --chains 64 --warmup 200 --draws 300 --seed 3 --device cpu --quiet
  --no-progress)
"$myriad" sample "${run[@]}" --output reference || exit 1

# 1. A disk too small for the trace: refused when sampling starts, with the size it needs.
"$myriad" sample "${run[@]}" --output "$mnt/small" 2>err.txt
expect_failure "disk too small" "No space left on device" $?
grep -q "15360128 bytes" err.txt || fail "disk too small: the size is not named: $(cat err.txt)"
[ -z "$(ls -A "$mnt")" ] || fail "disk too small: left $(ls -A "$mnt")"

# 2. A disk that fills up mid-run: draws.npy fits, the first checkpoint (iteration 250, in the
# sampling phase) does not. No checkpoint was written, so nothing is kept.
remount size=15104k
"$myriad" sample "${run[@]}" --output "$mnt/full" --checkpoint-every 250 2>err.txt
expect_failure "disk full mid-run" "cannot write '$mnt/.full.resumable/checkpoint.bin'" $?
grep -q "No space left on device" err.txt || fail "disk full mid-run: $(cat err.txt)"
[ -z "$(ls -A "$mnt")" ] || fail "disk full mid-run: left $(ls -A "$mnt")"

# 3. A disk that turns read-only mid-run: the next write fails; the last checkpoint stays, and
# with the disk writable again the run resumes to the uninterrupted run's draws.
remount size=64m
"$myriad" sample "${run[@]}" --output "$mnt/ro" --checkpoint-every 20 2>err.txt &
pid=$!
for _ in $(seq 600); do
  [ -e "$mnt/.ro.resumable/checkpoint.bin" ] && break
  sleep 0.1
done
mount -o remount,ro "$mnt" || fail "remount read-only"
wait $pid
expect_failure "read-only mid-run" "Read-only file system" $?
[ -f "$mnt/.ro.resumable/checkpoint.bin" ] || fail "read-only mid-run: the checkpoint is gone"
mount -o remount,rw "$mnt" || fail "remount writable"
"$myriad" resume "$mnt/ro" --quiet || fail "resume after the disk came back"
cmp -s "$mnt/ro/draws.npy" reference/draws.npy || fail "resumed run's draws differ"

[ $failures -eq 0 ] || exit 1
echo "output faults: OK"
