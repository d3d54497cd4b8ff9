#!/usr/bin/env bash
# Which link churn makes vnstatd work? Runs ifmeterd, vnstatd and the floor
# daemon side by side (as run.sh does: private binary copies, a cpuacct
# cgroup each, 50 tuns in a private namespace), fresh for each generator
# variant, and prints one row per variant: link events a minute (counted
# with `ip monitor link`), CPU seconds per hour of each daemon, interfaces
# in vnstatd's database at the end. Root.
#   bench/churn-probe.sh VARIANT...
# A variant is kind:lives-per-second:hold-seconds:names, e.g.
#   testnet:6:5:same    ifmeter-testnet lives (2 packets) held 5 s, names reused
#   batch:6:5:unique    persistent tuns added, set up and deleted by one
#                       `ip -batch` process, never the same name twice
#   testnet:6:0:unique  run.sh's fast churn (4 ms lives) at that rate
#   CHURN_PROBE_DURATION  seconds of each window (default 90)
#   CHURN_PROBE_BIN       where ifmeterd and ifmeter-testnet are (default .build/release)
#   CHURN_PROBE_AS_SHIPPED=1  ifmeterd without CAP_NET_ADMIN, as the packaged
#                         unit runs it: the kernel then caps its event socket's
#                         buffer at net.core.rmem_max (EventBufferBytes= asks 4M;
#                         Debian's default is 208K, these VMs' 4M: set it with
#                         sysctl for the run to see a stock machine)
#   CHURN_PROBE_SOCKET_UNIT=1  with AS_SHIPPED: ifmeterd is handed its event
#                         socket as ifmeterd.socket hands it (ListenNetlink=route 1,
#                         ReceiveBuffer=4M forced past rmem_max, LISTEN_FDS):
#                         bench/socket-unit.py playing PID 1
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
duration=${CHURN_PROBE_DURATION:-90}
bin=${CHURN_PROBE_BIN:-$root/.build/release}
work=$(mktemp -d /var/tmp/ifmeter-churn.XXXXXX)
cpuacct=/sys/fs/cgroup/cpuacct
cgroups="$cpuacct/ifmchurn-*-$$"
. "$root/bench/namespace.sh"
[ $# -gt 0 ] || { echo "usage: bench/churn-probe.sh kind:rate:hold:names ..." >&2; exit 64; }

cc -O2 -o "$work/floor" bench/floor.c
mkdir -p "$work/private"
cp "$bin/ifmeterd" "$work/private/ifmeterd"
cp "$(command -v vnstatd)" "$work/private/vnstatd"
cp "$work/floor" "$work/private/floor"
daemons=(ifmeterd vnstatd floor)
declare -A pid
cpu_of() { awk '{printf "%.9f", $1 / 1e9}' "$cpuacct/ifmchurn-$1-$$/cpuacct.usage"; }

# The generator, run inside the namespace. One line of bash per life;
# `ip -batch -` reads its commands as they come, so a batch life costs no
# process of its own.
churn() {  # kind rate hold names
  local kind=$1 rate=$2 hold=$3 names=$4 tick slots
  tick=$(awk -v r="$rate" 'BEGIN {printf "%.4f", 1 / r}')
  # Reused names: enough of them that a name's last life has ended.
  slots=$(awk -v r="$rate" -v h="$hold" 'BEGIN {printf "%d", r * (h + 3) + 1}')
  case $kind in
    testnet)
      inns_bg bash -c '
        i=0
        while true; do
          if [ "'"$names"'" = same ]; then name=s$((i % '"$slots"')); else name=u$i; fi
          "'"$bin"'/ifmeter-testnet" --name "$name" --subnet $((20 + i % 200)) --rx-packets 2 --size 500 --hold-ms '"$(awk -v h="$hold" 'BEGIN {print int(h * 1000)}')"' >/dev/null 2>&1 &
          i=$((i + 1))
          sleep '"$tick"'
        done' 2>/dev/null ;;
    batch)
      inns_bg bash -c '
        i=0; back=$(awk "BEGIN {printf \"%d\", '"$rate"' * '"$hold"'}")
        name() { if [ "'"$names"'" = same ]; then echo s$(($1 % '"$slots"')); else echo u$1; fi; }
        while true; do
          n=$(name $i)
          echo "tuntap add dev $n mode tun"; echo "link set $n up"
          [ $i -lt $back ] || echo "link del $(name $((i - back)))"
          i=$((i + 1))
          sleep '"$tick"'
        done | ip -force -batch -' 2>/dev/null ;;
    *) echo "churn-probe: unknown kind $kind" >&2; exit 64 ;;
  esac
  generator=$!
  pids+=("$generator")
}

echo "| generator | events/min | vnstatd s/h | ifmeterd s/h | floor s/h | ifmeterd / vnstatd | vnstatd interfaces at end |"
echo "|---|---|---|---|---|---|---|"
for variant in "$@"; do
  IFS=: read -r kind rate hold names <<<"$variant"
  new_namespace 50
  for i in 0 1 2 3 4; do
    inns sh -c "echo 1 > /proc/sys/net/ipv6/conf/tun$i/disable_ipv6 && ip addr add 198.18.$i.1/24 dev tun$i && ip link set tun$i up"
  done
  rm -rf "$work/vnstat" "$work/state"; mkdir -p "$work/vnstat"
  printf 'DatabaseDir "%s"\nUseLogging 0\nAlwaysAddNewInterfaces 1\n' "$work/vnstat" > "$work/vnstat.conf"
  shipped=()
  [ "${CHURN_PROBE_AS_SHIPPED:-0}" = 1 ] && shipped=(setpriv --bounding-set -net_admin --)
  [ "${CHURN_PROBE_SOCKET_UNIT:-0}" = 1 ] && shipped=(/usr/bin/python3 "$root/bench/socket-unit.py" $((4 << 20)) "${shipped[@]}")
  inns_bg "${shipped[@]}" "$work/private/ifmeterd" --state-dir "$work/state" 2>>"$work/ifmeterd.log"; pid[ifmeterd]=$!
  inns_bg "$work/private/vnstatd" --nodaemon --config "$work/vnstat.conf" >/dev/null 2>&1; pid[vnstatd]=$!
  inns_bg "$work/private/floor" loop 15; pid[floor]=$!
  for d in "${daemons[@]}"; do
    pids+=("${pid[$d]}")
    mkdir -p "$cpuacct/ifmchurn-$d-$$"
    echo "${pid[$d]}" > "$cpuacct/ifmchurn-$d-$$/cgroup.procs"
  done
  sleep 20   # start-up work is not the steady state
  inns_bg sh -c 'exec ip monitor link > '"$work/monitor"' 2>/dev/null'
  monitor=$!
  pids+=("$monitor")
  declare -A cpu0
  for d in "${daemons[@]}"; do cpu0[$d]=$(cpu_of "$d"); done
  churn "$kind" "$rate" "$hold" "$names"
  sleep "$duration"
  declare -A cpu_h
  for d in "${daemons[@]}"; do
    cpu_h[$d]=$(awk -v a="$(cpu_of "$d")" -v b="${cpu0[$d]}" -v s="$duration" 'BEGIN {printf "%.3f", (a - b) * 3600 / s}')
  done
  # The batch generator's loop and ip are the children of its bash.
  pkill -P "$generator" 2>/dev/null || true
  kill "$monitor" "$generator" 2>/dev/null || true
  events=$(grep -cE '^[0-9]+: |^Deleted ' "$work/monitor" || true)
  per_min=$(awk -v e="$events" -v s="$duration" 'BEGIN {printf "%.0f", e * 60 / s}')
  for d in "${daemons[@]}"; do kill -TERM "${pid[$d]}"; wait "${pid[$d]}" 2>/dev/null || true; done
  wait "$generator" 2>/dev/null || true
  kill "$holder"; wait "$holder" 2>/dev/null || true
  sleep "$(awk -v h="$hold" 'BEGIN {print h + 1}')"   # the last lives end with their namespace's last holder
  for d in "${daemons[@]}"; do rmdir "$cpuacct/ifmchurn-$d-$$"; done
  vn=$(sqlite3 "$work/vnstat/vnstat.db" "select count(*) from interface" 2>/dev/null || echo "?")
  echo "| $variant | $per_min | ${cpu_h[vnstatd]} | ${cpu_h[ifmeterd]} | ${cpu_h[floor]} | $(awk -v a="${cpu_h[ifmeterd]}" -v b="${cpu_h[vnstatd]}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}') | $vn |"
done
