#!/usr/bin/env bash
# Which files a store commit dirties, in pages of 4 KiB (what write_bytes
# in /proc/PID/io counts): ifmeterd on 50 tuns, 5 of them carrying
# traffic, committing every COMMIT seconds (longer than the kernel's 30 s
# writeback expiry, so each commit dirties clean pages), for SECONDS;
# perf's writeback:writeback_dirty_folio events, counted per file of the
# store (ifmeter.db, -wal, -shm). The journal is on a tmpfs, as packaged.
# WARMUP seconds pass first: past 300, the window misses the first
# five-minute slot, whose rows every interface has (its first-seen note).
# Usage: bench/dirty-pages.sh [COMMIT] [SECONDS] [WARMUP]   (root; make release first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:-40}
seconds=${2:-170}
warmup=${3:-50}
bin=$root/.build/release
[ -x "$bin/ifmeterd" ] || { echo "dirty-pages: $bin/ifmeterd is not built (make release)" >&2; exit 66; }
ns=ifmdirty-$$
work=$(mktemp -d /var/tmp/ifmeter-dirty.XXXXXX)   # on disk: a tmpfs has no writeback
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  umount "$work/run" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/state" "$work/run"
mount -t tmpfs -o size=16m ifmeter-dirty "$work/run"
cc -O2 -o "$work/floor" "$root/bench/floor.c"
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
for i in $(seq 0 49); do echo "tuntap add dev tun$i mode tun"; done > "$work/batch"
ip netns exec "$ns" ip -batch "$work/batch"
for i in 0 1 2 3 4; do
  ip netns exec "$ns" sh -c "echo 1 > /proc/sys/net/ipv6/conf/tun$i/disable_ipv6 && ip addr add 198.18.$i.1/24 dev tun$i && ip link set tun$i up"
done
ip netns exec "$ns" "$work/floor" traffic 100 tun0 tun1 tun2 tun3 tun4 &
pids+=($!)
printf '[Daemon]\n' > "$work/ifmeterd.conf"
ip netns exec "$ns" env RUNTIME_DIRECTORY="$work/run" "$bin/ifmeterd" --config "$work/ifmeterd.conf" --state-dir "$work/state" --commit-interval "$commit" 2>/dev/null &
daemon=$!
pids+=("$daemon")
sleep "$warmup"   # first samples and commits, and their writeback, before the window
before=$(awk '$1 == "write_bytes:" {print $2}' "/proc/$daemon/io")
perf record -q -e writeback:writeback_dirty_folio -a -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>&1
after=$(awk '$1 == "write_bytes:" {print $2}' "/proc/$daemon/io")
commits=$((seconds / commit))
echo "write_bytes over $seconds s: $((after - before)) ($(( (after - before) / 4096 )) pages of 4 KiB), about $commits commits"
perf script -i "$work/perf.data" 2>/dev/null > "$work/events"
for file in ifmeter.db ifmeter.db-wal ifmeter.db-shm; do
  inode=$(stat -c %i "$work/state/$file" 2>/dev/null || echo none)
  pages=$(grep -cE "ino=($(printf '%x' "$inode" 2>/dev/null || echo none)|$inode) " "$work/events" || true)
  echo "$file: $pages pages dirtied, $(awk -v p="$pages" -v c="$commits" 'BEGIN {printf "%.1f", p / c}') a commit"
done
