#!/usr/bin/env bash
# make bench's link-events load (50 tuns, a VPN-like tun life every 10 s)
# over a longer window, and what SQLite's automatic checkpoint adds to it.
# make bench's 600 s window holds one or two commits and no checkpoint: under
# this load the checkpoint (every 1000 WAL frames) comes every few hours and
# copies each page changed since into ifmeter.db once more.
#
# Prints bytes written per hour by ifmeterd (as packaged: its WAL index bound
# from a tmpfs, its journal there; the socket unit's queue is not used, so it
# reads each burst 20 ms after it) and by vnstatd beside it, from
# /proc/PID/io; then, from ifmeterd's WAL at the end (never checkpointed in
# the window: a fresh store), how many distinct pages the commits made
# dirty and how that set grows a commit, which is what a checkpoint after C
# commits copies: the pages written again every commit once, plus the growth
# of every commit.
# Usage: bench/events-long.sh [seconds] [keep-dir]   (root; default 2700 s;
# keep-dir: where to copy the store and its WAL at the end, to look into)
set -euo pipefail
seconds=${1:-2700}
keep=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$root" && swift build -c release --show-bin-path)
work=$(mktemp -d /var/tmp/ifmeter-events.XXXXXX)
# shellcheck source=bench/namespace.sh
source "$root/bench/namespace.sh"

new_namespace 50
mkdir -p "$work/state" "$work/run" "$work/vnstat"
inns mount -t tmpfs -o size=16m,mode=0755 ifmeter-run "$work/run"
printf '[Daemon]\nJournalFile=%s/run/ifmeterd.journal\n' "$work" > "$work/ifmeterd.conf"
printf 'DatabaseDir "%s/vnstat"\nUseLogging 0\nAlwaysAddNewInterfaces 1\n' "$work" > "$work/vnstat.conf"
inns "$bin/ifmeterd" --config "$work/ifmeterd.conf" --state-dir "$work/state" --wal-index-in "$work/run"
inns_bg "$bin/ifmeterd" --config "$work/ifmeterd.conf" --state-dir "$work/state" 2>/dev/null
ifmeterd=$!
pids+=("$ifmeterd")
inns_bg vnstatd --nodaemon --config "$work/vnstat.conf" >/dev/null 2>&1
vnstatd=$!
pids+=("$vnstatd")
writes_of() { awk '$1 == "write_bytes:" {print $2}' "/proc/$1/io"; }

(
  while true; do
    inns "$bin/ifmeter-testnet" --name vpn0 --subnet 9 --rx-packets 20 --tx-packets 10 --size 1000 >/dev/null 2>&1 || true
    sleep 10
  done
) &
pids+=($!)
sleep 60   # first samples and commits are not the steady state
i0=$(writes_of "$ifmeterd"); v0=$(writes_of "$vnstatd")
sleep "$seconds"
i1=$(writes_of "$ifmeterd"); v1=$(writes_of "$vnstatd")
awk -v i=$((i1 - i0)) -v v=$((v1 - v0)) -v s="$seconds" 'BEGIN {
  printf "window %d s: ifmeterd %.0f B/h, vnstatd %.0f B/h, %.2fx\n", s, i * 3600 / s, v * 3600 / s, i / v }'

if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$work/state/ifmeter.db" "$work/state/ifmeter.db-wal" "$keep/"; fi

# The WAL's frames in order, to the last commit: each commit's pages, and
# how many of them no earlier commit of the WAL had written.
python3 - "$work/state/ifmeter.db-wal" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
page = struct.unpack(">I", data[8:12])[0]
salt = data[16:24]
seen, commits, frames, offset = set(), [], [], 32
while offset + 24 + page <= len(data):
    number, size_after = struct.unpack(">II", data[offset:offset + 8])
    if data[offset + 8:offset + 16] != salt:
        break
    frames.append(number)
    if size_after:  # a commit's last frame
        commits.append((len(frames), len(set(frames) - seen)))
        seen |= set(frames)
        frames = []
    offset += 24 + page
# The second half of the commits: the first ones hold the store's making
# and every tun's first rows and events, which a store makes once.
print("frames, new pages, each commit:", " ".join(f"{f}/{n}" for f, n in commits))
steady = commits[len(commits) // 2:]
frames_a_commit = sorted(f for f, _ in steady)[len(steady) // 2]
new_a_commit = sorted(n for _, n in steady)[len(steady) // 2]
commits_between = 1000 / frames_a_commit
print(f"page {page} B, {len(commits)} commits, {len(seen)} distinct pages; median of the second half: "
      f"{frames_a_commit} frames a commit, {new_a_commit} pages a commit not written before")
print(f"a checkpoint every {commits_between:.0f} commits copies those pages again, about {new_a_commit * page} B a commit, "
      f"beside the commit's own {frames_a_commit * (page + 24)} B of WAL")
PY
