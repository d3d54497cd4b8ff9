# Sourced by the bench scripts (run.sh, memory.sh, link-order.sh,
# churn-probe.sh): the namespace their daemons run in, and the cleanup at
# their exit. Needs $work; a caller may set $cgroups (a glob of the cpuacct
# cgroups it made) and add what it starts to "${pids[@]}".
#
# A namespace held by a process rather than named in /run/netns (a name can
# be deleted under a long run by anyone's `ip -all netns del`), with its own
# sysfs so /sys/class/net shows its links, as `ip netns exec` does.
holders=()
holder=""
pids=()
cleanup() {
  for pid in "${pids[@]}" "${holders[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # Unquoted: a glob of cgroup directories.
  [ -z "${cgroups:-}" ] || rmdir $cgroups 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
new_namespace() {  # count: tun0 ... tun<count-1>, persistent
  unshare --net --mount --propagation private sh -c 'mount -t sysfs sysfs /sys && exec sleep infinity' &
  holder=$!
  holders+=("$holder")
  for _ in $(seq 100); do [ "$(cat "/proc/$holder/comm" 2>/dev/null)" = sleep ] && break; sleep 0.02; done
  inns ip link set lo up
  for i in $(seq 0 $(($1 - 1))); do echo "tuntap add dev tun$i mode tun"; done > "$work/batch"
  inns ip -batch "$work/batch"
}
inns() { nsenter -t "$holder" --net --mount -- "$@"; }
# In the background; $! is then the command's own pid (the subshell execs it).
inns_bg() { ( exec nsenter -t "$holder" --net --mount -- "$@" ) & }

# The median of numbers.
middle() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
