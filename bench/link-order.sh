#!/usr/bin/env bash
# Writes link/ifmeterd.order, the functions ifmeterd runs, for lld's
# --symbol-ordering-file (Package.swift, release builds). Linked first and
# side by side, they fill a few 64 KiB fault-around windows instead of being
# spread over the whole 4 MiB of code, most of which (the Swift runtime and
# standard library's) the daemon never runs; each window it touches once
# stays resident. Functions missing from the file still work, each costing at
# most a window; regenerate after changes to what the daemon runs.
# Root (a network namespace with tun devices) and valgrind; reads the binaries
# `make release` built. Usage: bench/link-order.sh [OUTPUT]
#   ORDER_WAIT   seconds of the default run (default 40: bench/memory.sh
#                reads the daemon at 35)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
output=${1:-$root/link/ifmeterd.order}
wait_seconds=${ORDER_WAIT:-40}
bin=$root/.build/release
for tool in valgrind objcopy; do
  command -v "$tool" >/dev/null || { echo "link-order: $tool is missing (apt-get install valgrind binutils)" >&2; exit 69; }
done
for binary in ifmeterd ifmeter-testnet; do
  [ -x "$bin/$binary" ] || { echo "link-order: $bin/$binary is not built (make release)" >&2; exit 66; }
done
[ "$(id -u)" -eq 0 ] || { echo "link-order: needs root (a network namespace with tun devices)" >&2; exit 77; }
work=$(mktemp -d /var/tmp/ifmeter-order.XXXXXX)
. "$root/bench/namespace.sh"

# valgrind 3.19 (bookworm) cannot read this toolchain's DWARF: profile a copy
# without it (same code, same symbols).
objcopy --strip-debug "$bin/ifmeterd" "$work/ifmeterd"

new_namespace 50

profile() {  # name seconds daemon-arguments...; the daemon under callgrind
  local name=$1 seconds=$2 daemon
  shift 2
  mkdir -p "$work/$name"
  ( exec nsenter -t "$holder" --net --mount -- valgrind --tool=callgrind --demangle=no \
      --callgrind-out-file="$work/$name.callgrind" "$work/ifmeterd" --state-dir "$work/$name" "$@" ) 2>"$work/$name.log" &
  daemon=$!
  sleep "$seconds"
  if [ "$name" = busy ]; then kill -HUP "$daemon"; sleep 5; fi
  kill -TERM "$daemon"
  wait "$daemon" || { echo "link-order: the $name run failed:" >&2; tail -20 "$work/$name.log" >&2; exit 70; }
}
# The functions of ifmeterd's own object that ran (callgrind names them
# once with an id, then by id), without recursion marks or unnamed code.
functions() {
  awk '
    function name(s, table,   id) {
      id = s; sub(/\).*/, "", id); sub(/^\(/, "", id)
      if (s ~ /^\([0-9]+\) /) { sub(/^\([0-9]+\) /, "", s); table[id] = s }
      else if (s ~ /^\([0-9]+\)$/) s = table[id]
      return s
    }
    /^ob=/ { object = name(substr($0, 4), objects) }
    /^cob=/ { name(substr($0, 5), objects) }
    /^cfn=/ { name(substr($0, 5), functions) }
    /^fn=/ { f = name(substr($0, 4), functions); if (object ~ /\/ifmeterd$/) print f }
  ' "$1" | sed "s/'[0-9]*\$//" | grep -v -e '^0x' -e '[ ()]' | LC_ALL=C sort -u
}

# What bench/memory.sh measures: start-up and samples at the defaults, then
# the final sample and commit of a SIGTERM.
profile quiet "$wait_seconds"
# What a longer life adds: commits, the metrics file, traffic, link events
# (a VPN-like tun life), a reload.
profile busy 20 --interval 1 --commit-interval 2 --metrics-file "$work/busy.prom" &
busy=$!
sleep 8
for subnet in 9 10; do
  inns "$bin/ifmeter-testnet" --name vpn0 --subnet "$subnet" --rx-packets 20 --tx-packets 10 --size 1000 >/dev/null
done
wait "$busy"

functions "$work/quiet.callgrind" > "$work/quiet.functions"
functions "$work/busy.callgrind" | LC_ALL=C comm -23 - "$work/quiet.functions" > "$work/busy.functions"
{
  echo "# ifmeterd's functions in link order (lld --symbol-ordering-file), written by"
  echo "# bench/link-order.sh: those a start and the samples at the defaults run, then"
  echo "# those commits, the metrics file, link events and a reload add."
  cat "$work/quiet.functions" "$work/busy.functions"
} > "$output"
echo "link-order: $(wc -l < "$work/quiet.functions") + $(wc -l < "$work/busy.functions") functions -> $output"
