#!/usr/bin/env bash
# Bytes ifmeterd writes per commit, from /proc/PID/io, with N tun
# interfaces carrying traffic between commits; scaled to the default
# commit interval (300 s => 12 commits per hour).
# Commits here come every second, faster than the kernel writes dirty
# pages back, so write_bytes (counted when a clean page is dirtied) counts
# a page once for many commits: the block-layer figure is a floor.
# bench/dirty-pages.sh measures a commit's pages with commits spaced out.
# Usage: bench/write-volume.sh [interfaces] [seconds]   (root)
set -euo pipefail
interfaces=${1:-3}
seconds=${2:-120}
bin=$(swift build -c release --show-bin-path)
ns=ifmbench-$$
state=$(mktemp -d /var/tmp/ifmeter-bench.XXXXXX)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$state"; }
trap cleanup EXIT
ip netns add "$ns"
for i in $(seq 0 $((interfaces - 1))); do
  ip netns exec "$ns" "$bin/ifmeter-testnet" --name "tun$i" --subnet "$i" --persist --rx-packets 1
done
ip netns exec "$ns" "$bin/ifmeterd" --state-dir "$state" --interval 1 --commit-interval 1 2>/dev/null &
pid=$!
sleep 2
read_io() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/io"; }
w0=$(read_io write_bytes); c0=$(read_io wchar)
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
  for i in $(seq 0 $((interfaces - 1))); do
    ip netns exec "$ns" "$bin/ifmeter-testnet" --name "tun$i" --subnet "$i" --rx-packets 2 --tx-packets 2 >/dev/null
  done
  sleep 1
done
w1=$(read_io write_bytes); c1=$(read_io wchar)
kill -TERM $pid; wait $pid || true
commits=$seconds
echo "interfaces=$interfaces seconds=$seconds"
echo "block-layer bytes per commit: $(( (w1 - w0) / commits ))  => per hour at defaults (12 commits): $(( (w1 - w0) * 12 / commits ))"
echo "write() bytes per commit:     $(( (c1 - c0) / commits ))  => per hour at defaults (12 commits): $(( (c1 - c0) * 12 / commits ))"
