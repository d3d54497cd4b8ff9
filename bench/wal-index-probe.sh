#!/usr/bin/env bash
# What WALIndexDirectory= saves: two ifmeterd side by side in one private
# namespace, counting the same tunnel lives (a VPN-like life of 20 + 10
# packets and traffic on 5 persistent tuns every 6 s), the store on disk
# (/var/tmp), commits 60 s apart so that each finds the last one's pages
# written back; A keeps the WAL index in a tmpfs, B beside the store.
# Prints each one's write_bytes (/proc/PID/io: bytes of page cache dirtied,
# what reaches the disk) over the window, and A/B. Root.
#   bench/wal-index-probe.sh [seconds]   (default 600, after a 70 s warm-up)
set -euo pipefail
seconds=${1:-600}
bin=$(swift build -c release --show-bin-path)
ns=ifmwal-$$
work=$(mktemp -d /var/tmp/ifmeter-wal.XXXXXX)
cleanup() {
  kill "${a:-}" "${b:-}" 2>/dev/null || true; wait 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  umount "$work/run" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
mkdir -p "$work/a" "$work/b" "$work/run"
mount -t tmpfs -o size=16m ifmeter-wal "$work/run"
printf '[Daemon]\nJournalFile=%s/run/a.journal\nWALIndexDirectory=%s/run\n' "$work" "$work" > "$work/a.conf"
printf '[Daemon]\nJournalFile=%s/run/b.journal\n' "$work" > "$work/b.conf"
for i in 0 1 2 3 4; do
  ip netns exec "$ns" "$bin/ifmeter-testnet" --name "tun$i" --subnet "$i" --persist --rx-packets 1 >/dev/null
done
ip netns exec "$ns" "$bin/ifmeterd" --config "$work/a.conf" --state-dir "$work/a" --commit-interval 60 2>/dev/null & a=$!
ip netns exec "$ns" "$bin/ifmeterd" --config "$work/b.conf" --state-dir "$work/b" --commit-interval 60 2>/dev/null & b=$!
written() { awk '$1 == "write_bytes:" {print $2}' "/proc/$1/io"; }
sleep 70
a0=$(written "$a"); b0=$(written "$b"); lives=0
end=$((SECONDS + seconds))
while [ $SECONDS -lt $end ]; do
  ip netns exec "$ns" "$bin/ifmeter-testnet" --name vpn0 --subnet 9 --rx-packets 20 --tx-packets 10 >/dev/null
  lives=$((lives + 1))
  for i in 0 1 2 3 4; do
    ip netns exec "$ns" "$bin/ifmeter-testnet" --name "tun$i" --subnet "$i" --rx-packets 3 >/dev/null
  done
  sleep 6
done
a1=$(written "$a"); b1=$(written "$b")
echo "seconds=$seconds lives=$lives commits~$((seconds / 60))"
echo "A, WAL index in tmpfs:     $((a1 - a0)) bytes written"
echo "B, WAL index beside store: $((b1 - b0)) bytes written"
awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) 'BEGIN { printf "A/B: %.2f\n", a / b }'
