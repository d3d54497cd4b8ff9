#!/usr/bin/env bash
# ifmeterd's memory as make bench measures it (bench/run.sh, "Memory, each
# daemon alone"), without the rest of the bench: the daemon alone on 50
# persistent tun devices in a private network namespace, default settings,
# from a private copy of its binary in a fresh directory, read from
# /proc/PID/smaps_rollup after MEMORY_WAIT seconds. Root.
# Usage: bench/memory.sh [BINARY...]   (default: .build/release/ifmeterd,
# what `make release` builds). Several binaries are measured in turn, round
# by round, so a drift of the machine falls on all of them alike.
#   MEMORY_ROUNDS   runs of each binary behind the medians (default 3)
#   MEMORY_WAIT     seconds each runs before it is read (default 35)
#   MEMORY_DETAIL   1: also where the last run's resident memory is, per mapping
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${MEMORY_ROUNDS:-3}
wait_seconds=${MEMORY_WAIT:-35}
detail=${MEMORY_DETAIL:-0}
[ $# -gt 0 ] || set -- "$root/.build/release/ifmeterd"
for binary in "$@"; do
  [ -x "$binary" ] || { echo "memory: $binary is not an executable (make release)" >&2; exit 66; }
done
[ "$(id -u)" -eq 0 ] || { echo "memory: needs root (a network namespace with 50 tun devices)" >&2; exit 77; }
work=$(mktemp -d /var/tmp/ifmeter-memory.XXXXXX)
. "$root/bench/namespace.sh"

new_namespace 50
declare -A runs
for round in $(seq "$rounds"); do
  for index in $(seq 0 $(($# - 1))); do
    binary=${*:$((index + 1)):1}
    run=$work/run-$round-$index
    mkdir -p "$run/state"
    cp "$binary" "$run/ifmeterd"   # a private copy: no other process shares its pages
    ( exec nsenter -t "$holder" --net --mount -- "$run/ifmeterd" --state-dir "$run/state" ) 2>>"$work/ifmeterd.log" &
    daemon=$!
    pids+=("$daemon")
    sleep "$wait_seconds"
    kill -0 "$daemon" 2>/dev/null || { echo "memory: $binary exited early:" >&2; cat "$work/ifmeterd.log" >&2; exit 70; }
    read -r rss pss uss < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} /^Private_(Clean|Dirty):/{u+=$2} END{print r, p, u}' "/proc/$daemon/smaps_rollup")
    # Where it is: the binary's own mappings, the shared libraries (whose
    # PSS moves with whatever else runs on the machine), the rest (heap,
    # anonymous, stack, the store's shared memory file).
    read -r binary_rss libraries_rss libraries_pss rest_rss < <(awk -v own="$run/ifmeterd" '
      /^[0-9a-f]+-[0-9a-f]+ /{file=$6; kind = (file == own) ? "b" : (file ~ /\.so/) ? "l" : "r"}
      /^Rss:/{r[kind]+=$2} /^Pss:/{p[kind]+=$2}
      END{print r["b"]+0, r["l"]+0, p["l"]+0, r["r"]+0}' "/proc/$daemon/smaps")
    if [ "$detail" = 1 ] && [ "$round" = "$rounds" ]; then
      echo "where $binary's resident memory is (KiB per mapping, RSS at least 16):"
      awk '/^[0-9a-f]+-[0-9a-f]+ /{file=$6; if (file == "") file="(anonymous)"; perms=$2} /^Rss:/{r[file" "perms]+=$2} /^Pss:/{p[file" "perms]+=$2} /^Private_Dirty:/{d[file" "perms]+=$2}
        END{for (f in r) if (r[f] >= 16) printf "  %6d rss %6d pss %6d dirty  %s\n", r[f], p[f], d[f], f}' "/proc/$daemon/smaps" |
        sed "s|$run/||" | sort -rn
    fi
    kill -TERM "$daemon"; wait "$daemon" 2>/dev/null || true
    pids=()
    rm -rf "$run"
    echo "round $round: $binary: rss $rss pss $pss uss $uss KiB; binary $binary_rss, libraries $libraries_rss (pss $libraries_pss), heap and the rest $rest_rss"
    runs[$index]+="$rss $pss $uss $binary_rss $libraries_rss $libraries_pss $rest_rss "
  done
done
echo
echo "medians of $rounds runs, KiB (PSS and USS move with what else maps the same libraries; the binary's own pages do not)"
echo "| binary | RSS | PSS | USS | binary's own RSS | libraries RSS | libraries PSS | heap and the rest RSS |"
echo "|---|---|---|---|---|---|---|---|"
for index in $(seq 0 $(($# - 1))); do
  read -ra values <<<"${runs[$index]}"
  row="| ${*:$((index + 1)):1} |"
  for column in 0 1 2 3 4 5 6; do
    picked=()
    for ((i = column; i < ${#values[@]}; i += 7)); do picked+=("${values[i]}"); done
    row+=" $(middle "${picked[@]}") |"
  done
  echo "$row"
done
