#!/bin/sh
# expect_ranks.sh N COMMAND...: runs COMMAND (an mpirun of N ranks), shows its output, and
# passes when the output has a line "ok: rank R" for each R in 0 .. N-1, whatever the
# command's exit status: for a job that is meant to end as failed.
n=$1
shift
out=$("$@" 2>&1)
printf '%s\n' "$out"
r=0
while [ "$r" -lt "$n" ]; do
  if ! printf '%s\n' "$out" | grep -qx "ok: rank $r"; then
    echo "expect_ranks.sh: no line 'ok: rank $r' in the output"
    exit 1
  fi
  r=$((r + 1))
done
