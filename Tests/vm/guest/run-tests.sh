#!/bin/sh
# This boot's tests, in order, each the function t_NAME of tests/*.sh in a
# subshell; one with a result from an earlier boot of the run is not run again.
set -eu
. /mnt/vm/guest/lib.sh
for file in /mnt/vm/guest/tests/*.sh; do . "$file"; done
mkdir -p "$share/logs"
touch "$share/results"
for name in $TESTS; do
  if ! grep -q "^\(pass\|fail\) $name:" "$share/results"; then run_test "$name"; fi
done
