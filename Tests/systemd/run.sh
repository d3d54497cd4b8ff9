#!/usr/bin/env bash
# The Debian package under a real systemd: systemd 252 boots as PID 1 of a
# private namespace (pid, mount, uts, ipc, net, cgroup) on an overlay of this
# machine's root, the package is installed into it, and the service is driven
# through its life: start, reload (MetricsFile= too), stop, watchdog, kill -9,
# the CLI as nobody (no group: the daemon's view), node_exporter scraping
# the metrics relay's copy as Debian's own service, upgrade, remove (a killed daemon's journal
# kept for the reinstallation to apply), purge; ifmeterd.socket throughout
# (an upgrade from a package without it, a stop, an overrun while no daemon
# reads). See shared/design/SYSTEMD.md for why each step of the set-up is
# there.
#
#   run.sh --check            prints why it cannot run here (exit 1), or nothing
#   run.sh DEB TESTNET        the test (root); TESTNET is ifmeter-testnet
#
# Everything it makes (cgroups, mounts, processes, files) is gone when it
# exits, whatever the outcome; it checks that too.
set -euo pipefail
self=$(readlink -f "$0")

cgroup_root() {
  if [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo /sys/fs/cgroup
  elif [ -e /sys/fs/cgroup/unified/cgroup.procs ]; then echo /sys/fs/cgroup/unified
  fi
}

cannot_run() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root: boots systemd in a private namespace"; return; }
  [ -x /lib/systemd/systemd ] || { echo "needs systemd (/lib/systemd/systemd)"; return; }
  for tool in unshare nsenter script pivot_root dpkg-deb pgrep curl sqlite3 runuser; do
    command -v "$tool" >/dev/null || { echo "needs $tool"; return; }
  done
  local root; root=$(cgroup_root)
  [ -n "$root" ] && [ -w "$root" ] || { echo "needs a writable cgroup2 (/sys/fs/cgroup or /sys/fs/cgroup/unified)"; return; }
  grep -qw overlay /proc/filesystems || { echo "needs overlayfs"; return; }
}

# --- Stage 2, in the host's namespaces under script's pty: into its cgroup,
# then unshare. Its pid (kept by exec) is the outer unshare process.
if [ "${1:-}" = --enter ]; then
  work=$2
  echo $$ > "$work/cgroup/payload/cgroup.procs"
  echo $$ > "$work/unshare.pid"
  exec unshare --pid --fork --mount --uts --ipc --net --cgroup --propagation private "$self" --setup "$work"
fi

# --- Stage 3, PID 1 of the new namespaces: build the root, become systemd.
if [ "${1:-}" = --setup ]; then
  work=$2
  ns=$work/ns
  mount -t tmpfs -o mode=0755 ifmeter-systemd "$ns"
  mkdir -p "$ns/upper" "$ns/work" "$ns/root"
  # The upper layer must be on another filesystem than the lower one (/).
  mount -t overlay overlay -o "lowerdir=/,upperdir=$ns/upper,workdir=$ns/work" "$ns/root"
  r=$ns/root
  mount -t proc proc "$r/proc"
  mount --bind "$r/proc/sys" "$r/proc/sys"
  mount --bind "$r/proc/sys/net" "$r/proc/sys/net"
  mount -o remount,bind,ro "$r/proc/sys"
  # Read-only sysfs: systemd leaves udev off and sees the namespace's links.
  mount -t sysfs -o ro sysfs "$r/sys"
  mount -t cgroup2 cgroup2 "$r/sys/fs/cgroup"
  mount -t tmpfs -o mode=0755,nosuid dev "$r/dev"
  for node in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    IFS=: read -r name major minor <<< "$node"
    mknod -m 0666 "$r/dev/$name" c "$major" "$minor"
  done
  mkdir -p "$r/dev/net" "$r/dev/pts" "$r/dev/shm"
  mknod -m 0666 "$r/dev/net/tun" c 10 200
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$r/dev/pts"
  ln -s pts/ptmx "$r/dev/ptmx"
  mount -t tmpfs -o mode=1777 shm "$r/dev/shm"
  touch "$r/dev/console"
  mount --bind "$(tty)" "$r/dev/console"
  mount -t tmpfs -o mode=0755 run "$r/run"
  mount -t tmpfs -o mode=1777 tmp "$r/tmp"
  # Nothing of the host's own runs here, nor anything that changes
  # kernel-wide state; node_exporter does: the test scrapes it.
  masks="systemd-sysctl.service systemd-modules-load.service systemd-binfmt.service systemd-timesyncd.service
    systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-udev-trigger.service
    systemd-udev-settle.service systemd-pstore.service getty@.service serial-getty@.service console-getty.service
    getty-static.service vnstat.service prometheus.service"
  # The host's enabled units and its SysV scripts (systemd would run them).
  enabled=$(find /etc/systemd/system /lib/systemd/system -path '*.wants/*' -printf '%f\n' | sort -u)
  sysv=$(find /etc/init.d -maxdepth 1 -type f -printf '%f.service\n' 2>/dev/null)
  for unit in $masks $enabled $sysv; do
    case $unit in
      prometheus-node-exporter.service|dbus.service|dbus.socket|systemd-journald*|systemd-logind.service|getty.target|remote-fs.target) ;;
      *) ln -sf /dev/null "$r/etc/systemd/system/$unit" ;;
    esac
  done
  # A real machine starts a package's services (container images often
  # forbid it with a policy-rc.d of their own).
  rm -f "$r/usr/sbin/policy-rc.d"
  # The package goes onto a machine that never had ifmeter: whatever the
  # host has of it (a make install, a configuration, a store) is hidden in
  # the overlay, or dpkg would stop at its conffile prompt.
  rm -rf "$r/etc/ifmeter" "$r/var/lib/ifmeter" "$r/usr/local/sbin/ifmeterd" "$r/usr/local/bin/ifmeter" \
    "$r/usr/local/lib/systemd/system/ifmeterd.service" "$r/usr/local/lib/systemd/system/ifmeterd.socket"
  mkdir -p "$r/root/ifmeter-test"
  cp "$work/ifmeter-v0.deb" "$work/ifmeter-v1.deb" "$work/ifmeter-v2.deb" "$work/ifmeter-testnet" "$r/root/ifmeter-test/"
  hostname ifmeter-systemd-test
  # systemd lists its cgroup only once the outer unshare process has left it.
  for _ in $(seq 600); do [ -e "$work/moved" ] && break; sleep 0.05; done
  [ -e "$work/moved" ] || { echo "the launcher was not moved out of systemd's cgroup in 30 s" >&2; exit 1; }
  cd "$r"
  mkdir -p .oldroot
  pivot_root . .oldroot
  umount -l /.oldroot
  exec env -i container=ifmeter-test /lib/systemd/systemd --system --unit=multi-user.target
fi

if [ "${1:-}" = --check ]; then
  reason=$(cannot_run)
  [ -z "$reason" ] || { echo "$reason"; exit 1; }
  exit 0
fi

# --- Stage 1, the test itself, on the host.
deb=${1:?usage: run.sh DEB TESTNET}
testnet=${2:?usage: run.sh DEB TESTNET}
reason=$(cannot_run)
[ -z "$reason" ] || { echo "cannot run: $reason"; exit 77; }
started=$(date +%s.%N)

work=$(mktemp -d /tmp/ifmeter-systemd.XXXXXX)
cgroup=$(cgroup_root)/ifmeter-systemd-$$
pid1=""
unshare_pid=""
script_pid=""

cleanup() {
  set +e
  if [ -n "$pid1" ] && kill -0 "$pid1" 2>/dev/null; then
    in_ns systemctl poweroff >/dev/null 2>&1
    for _ in $(seq 100); do kill -0 "$pid1" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid1" 2>/dev/null && { echo "systemd did not power off in 10 s: killing the namespace"; kill -9 "$pid1"; }
  fi
  [ -n "$script_pid" ] && wait "$script_pid" 2>/dev/null
  # Whatever is left in the test's cgroups is the test's own.
  if [ -d "$cgroup" ]; then
    find "$cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null
    for _ in $(seq 50); do [ -z "$(find "$cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] && break; sleep 0.1; done
    find "$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
  fi
  leftover=""
  [ -d "$cgroup" ] && leftover="$leftover cgroup $cgroup;"
  grep -q "$work" /proc/self/mountinfo && leftover="$leftover mounts under $work;"
  rm -rf "$work"
  if [ -n "$leftover" ]; then echo "not ok - left behind:$leftover"; exit 1; fi
}
trap cleanup EXIT

fail() {
  echo "not ok - $*"
  echo "--- journal of ifmeterd"
  in_ns journalctl -u ifmeterd --no-pager -o short-monotonic 2>&1 | tail -40
  exit 1
}
ok() { echo "ok - $*"; }
elapsed() { awk -v start="$started" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - start }'; }
# awk's arithmetic truth of $1, e.g. "0.8 <= 1.0".
holds() { awk "BEGIN { exit !($1) }"; }
in_ns() {
  nsenter --target "$pid1" --mount --uts --ipc --net --pid --cgroup --root --wd -- \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}
# Polls a command until it succeeds, for at most $1 seconds.
until_true() {
  local seconds=$1; shift
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# Version 2 of the package: the same files under a higher revision.
cp "$deb" "$work/ifmeter-v1.deb"
cp "$testnet" "$work/ifmeter-testnet"
dpkg-deb -R "$deb" "$work/v2"
sed -i -E 's/^Version: (.*)-([0-9]+)$/Version: \1-\2+test2/' "$work/v2/DEBIAN/control"
dpkg-deb --root-owner-group -Znone -b "$work/v2" "$work/ifmeter-v2.deb" >/dev/null
rm -rf "$work/v2"
# Version 0: the package as it was before ifmeterd.socket (the daemon keeps
# its own socket in systemd's store), under a lower version.
dpkg-deb -R "$deb" "$work/v0"
rm "$work/v0/lib/systemd/system/ifmeterd.socket"
sed -i '/^Also=ifmeterd.socket$/d' "$work/v0/lib/systemd/system/ifmeterd.service"
sed -i '/ lib\/systemd\/system\/ifmeterd\.s/d' "$work/v0/DEBIAN/md5sums"
sed -i -E 's/^Version: (.*)$/Version: \1~nosocket/' "$work/v0/DEBIAN/control"
dpkg-deb --root-owner-group -Znone -b "$work/v0" "$work/ifmeter-v0.deb" >/dev/null
rm -rf "$work/v0"
v0=$(dpkg-deb -f "$work/ifmeter-v0.deb" Version)
v1=$(dpkg-deb -f "$work/ifmeter-v1.deb" Version)
v2=$(dpkg-deb -f "$work/ifmeter-v2.deb" Version)
mkdir -p "$work/ns"

# --- Boot.
mkdir -p "$cgroup/payload" "$cgroup/launcher"
ln -s "$cgroup" "$work/cgroup"
SHELL=/bin/bash script -qfec "$self --enter $work" "$work/console.log" < /dev/null > /dev/null 2>&1 &
script_pid=$!
until_true 10 test -s "$work/unshare.pid" || fail "the namespace did not start"
unshare_pid=$(cat "$work/unshare.pid")
until_true 10 pgrep -P "$unshare_pid" || fail "no PID 1 in the namespace"
pid1=$(pgrep -P "$unshare_pid")
echo "$unshare_pid" > "$cgroup/launcher/cgroup.procs"
touch "$work/moved"
until_true 10 sh -c "[ \"\$(cat /proc/$pid1/comm)\" = systemd ] && nsenter --target $pid1 --mount --root -- test -S /run/systemd/private" \
  || { cat "$work/console.log"; fail "systemd did not start"; }
state=$(in_ns timeout 60 systemctl is-system-running --wait || true)
[ "$state" = running ] || { in_ns systemctl --failed --no-pager; fail "systemd is $state, not running"; }
ok "systemd $(in_ns systemctl --version | head -1 | cut -d' ' -f2) is PID 1 ($(in_ns systemd-detect-virt)), running, in $(elapsed) s"

# --- Install: the package before ifmeterd.socket, then an upgrade to this one.
in_ns dpkg -i /root/ifmeter-test/ifmeter-v0.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $v0"; }
[ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "ifmeterd $v0 not active after install"
ok "dpkg -i $v0 (no ifmeterd.socket): the daemon counts with an event socket of its own"
in_ns dpkg -i /root/ifmeter-test/ifmeter-v1.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $v1"; }
in_ns id ifmeter >/dev/null || fail "no ifmeter user after install"
[ "$(in_ns systemctl is-enabled ifmeterd)" = enabled ] || fail "ifmeterd not enabled by the package"
[ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "ifmeterd not active after install"
[ "$(in_ns systemctl is-enabled ifmeterd.socket)" = enabled ] && [ "$(in_ns systemctl is-active ifmeterd.socket)" = active ] \
  || fail "ifmeterd.socket: $(in_ns systemctl is-enabled ifmeterd.socket), $(in_ns systemctl is-active ifmeterd.socket); expected enabled, active"
# The daemon reads the socket unit's socket (fd 3, passed), one PID 1 holds too.
socket=$(in_ns readlink "/proc/$(in_ns systemctl show -P MainPID ifmeterd)/fd/3")
case $socket in socket:*) ;; *) fail "ifmeterd's fd 3 is '$socket', not its event socket" ;; esac
in_ns sh -c "ls -l /proc/1/fd | grep -F '$socket' >/dev/null" || fail "ifmeterd reads $socket, which systemd does not hold: not ifmeterd.socket's"
# ...with its 4 MiB: the unprivileged daemon says when its socket holds less.
main_pid=$(in_ns systemctl show -P MainPID ifmeterd)
if in_ns journalctl "_PID=$main_pid" -o cat | grep -F "EventBufferBytes="; then fail "ifmeterd's event socket holds less than EventBufferBytes="; fi
status=$(in_ns systemctl show -P StatusText ifmeterd)
case $status in "counting "*) ;; *) fail "STATUS= after start is '$status'";; esac
ok "dpkg -i $v1 over $v0: user ifmeter, ifmeterd.socket and ifmeterd enabled, started; READY=1 then STATUS=$status"
in_ns test -s /run/ifmeter/ifmeter.prom || fail "no metrics file in /run/ifmeter"
[ "$(in_ns systemctl is-active ifmeter-metrics)" = active ] || fail "ifmeter-metrics: $(in_ns systemctl is-active ifmeter-metrics), expected active"
[ "$(in_ns readlink /var/lib/prometheus/node-exporter/ifmeter.prom)" = /run/ifmeter-metrics/ifmeter.prom ] || fail "no link in node_exporter's textfile directory"
copied() { in_ns test -f /run/ifmeter-metrics/ifmeter.prom -a ! -L /run/ifmeter-metrics/ifmeter.prom -a -s /run/ifmeter-metrics/ifmeter.prom; }
until_true 10 copied || fail "no regular file copied into /run/ifmeter-metrics"
owners=$(in_ns stat -c '%n %U %a' /run/ifmeter-metrics /run/ifmeter-metrics/ifmeter.prom | tr '\n' ' ')
! in_ns runuser -u ifmeter -- test -w /run/ifmeter-metrics || fail "the daemon's user may write /run/ifmeter-metrics ($owners)"
! in_ns runuser -u ifmeter -- test -w /run/ifmeter-metrics/ifmeter.prom || fail "the daemon's user may write the copy ($owners)"
ok "the metrics file is in /run/ifmeter; ifmeter-metrics copies it where the daemon's user cannot write ($owners), linked from /var/lib/prometheus/node-exporter"
exposure=$(in_ns systemd-analyze security ifmeterd --no-pager | sed -n 's/.*Overall exposure level for ifmeterd.service: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] && holds "$exposure <= 1.0" || fail "systemd-analyze security: exposure $exposure, expected at most 1.0"
ok "systemd-analyze security ifmeterd (live): $exposure"

# --- Reload: configuration applied in the same process; a bad file keeps it.
metric() {  # the value of a metrics-file line starting with $1
  in_ns cat /run/ifmeter/ifmeter.prom | awk -v name="$1" 'index($0, name) == 1 { print $2 }'
}
sampled_since() { [ "$(metric ifmeter_last_sample_timestamp_seconds)" != "$1" ]; }
sample_interval() {  # seconds between two successive samples
  local first second
  first=$(metric ifmeter_last_sample_timestamp_seconds)
  until_true 20 sampled_since "$first" || { echo none; return; }
  first=$(metric ifmeter_last_sample_timestamp_seconds)
  until_true 20 sampled_since "$first" || { echo none; return; }
  second=$(metric ifmeter_last_sample_timestamp_seconds)
  awk -v a="$first" -v b="$second" 'BEGIN { print b - a }'
}
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns sed -i 's/^#SampleIntervalSec=15$/SampleIntervalSec=1/' /etc/ifmeter/ifmeter.conf
in_ns grep -q '^SampleIntervalSec=1$' /etc/ifmeter/ifmeter.conf || fail "could not edit the configuration"
in_ns systemctl reload ifmeterd || fail "systemctl reload"
[ "$(in_ns systemctl show -P MainPID ifmeterd)" = "$pid" ] || fail "reload changed the main PID"
interval=$(sample_interval)
# Below 10 s tells 1 s from 15 s on a loaded machine, where a sample may be late.
[ "$interval" != none ] && holds "$interval < 10" || fail "after reload with SampleIntervalSec=1 samples are $interval s apart"
ok "reload: same PID $pid, SampleIntervalSec=1 applied (samples $interval s apart)"
in_ns cp /etc/ifmeter/ifmeter.conf /root/ifmeter-test/good.conf
in_ns sh -c 'printf "[Daemon]\nSampleIntervalSec=soon\n" > /etc/ifmeter/ifmeter.conf'
in_ns systemctl reload ifmeterd || fail "systemctl reload with a bad file"
# grep -q would exit at its match and the writer die of SIGPIPE, which
# pipefail turns into a failure: a here-string or a grep that reads it all.
journal_has() { in_ns journalctl -u ifmeterd -o cat | grep -F "$1" >/dev/null; }
until_true 5 journal_has 'reload failed, keeping the running configuration: /etc/ifmeter/ifmeter.conf:2' \
  || fail "no one-line error naming the bad file and line"
[ "$(in_ns systemctl show -P MainPID ifmeterd)" = "$pid" ] && [ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "a bad file ended the daemon"
interval=$(sample_interval)
[ "$interval" != none ] && holds "$interval < 10" || fail "after a bad reload samples are $interval s apart"
in_ns cp /root/ifmeter-test/good.conf /etc/ifmeter/ifmeter.conf
in_ns systemctl reload ifmeterd
ok "reload of a bad file: logged with file and line, same PID, the running configuration kept"

# MetricsFile= applies on reload too: moved, the new file appears from the
# same process; moved back, the shipped path is written again.
moved=/run/ifmeter/moved.prom
in_ns test ! -e "$moved" || fail "$moved exists before the reload"
in_ns sed -i "s|^MetricsFile=/run/ifmeter/ifmeter.prom\$|MetricsFile=$moved|" /etc/ifmeter/ifmeter.conf
in_ns grep -q "^MetricsFile=$moved\$" /etc/ifmeter/ifmeter.conf || fail "could not edit MetricsFile="
in_ns systemctl reload ifmeterd || fail "systemctl reload with MetricsFile=$moved"
until_true 10 in_ns test -s "$moved" || fail "after reload with MetricsFile=$moved no file there"
[ "$(in_ns systemctl show -P MainPID ifmeterd)" = "$pid" ] || fail "reload of MetricsFile= changed the main PID"
last=$(metric ifmeter_last_sample_timestamp_seconds)
in_ns cp /root/ifmeter-test/good.conf /etc/ifmeter/ifmeter.conf
in_ns systemctl reload ifmeterd || fail "systemctl reload back to the shipped MetricsFile="
until_true 10 sampled_since "$last" || fail "after moving MetricsFile= back, /run/ifmeter/ifmeter.prom is not written again"
[ "$(in_ns systemctl show -P MainPID ifmeterd)" = "$pid" ] || fail "reload of MetricsFile= changed the main PID"
ok "reload: MetricsFile= moved to $moved and back, same PID, each file written from the next sample"

# --- Traffic, and what the store holds after each way the daemon can end.
# All-time bytes as docs/STORE.md tells a tool reading the tables to add
# them: the interface row and its 5-minute rows not folded yet.
stored_rx() {  # of $1, tun0 by default
  in_ns sqlite3 /var/lib/ifmeter/ifmeter.db "SELECT i.rx_bytes + coalesce((SELECT sum(b.rx_bytes) FROM bucket b
    WHERE b.interface_id = i.id AND b.granularity = '5min' AND b.start >=
    (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'folded_through')), 0) FROM interface i WHERE i.name = '${1:-tun0}'"
}
push() {  # $1 packets of 100 bytes received on tun0
  in_ns /root/ifmeter-test/ifmeter-testnet --name tun0 --rx-packets "$1" --size 100 --persist || fail "ifmeter-testnet"
}
restarted_from() {
  local now; now=$(in_ns systemctl show -P MainPID ifmeterd)
  [ "$now" != "$1" ] && [ "$now" != 0 ] && [ "$(in_ns systemctl is-active ifmeterd)" = active ]
}
sampled() { [ "$(metric 'ifmeter_receive_bytes_total{device="tun0"')" = "$1" ]; }
push 10
until_true 10 sampled 1000 || fail "the metrics file does not show tun0's 1000 bytes"
in_ns systemctl stop ifmeterd
[ "$(in_ns systemctl show -P ExecMainStatus ifmeterd)" = 0 ] && [ "$(in_ns systemctl show -P Result ifmeterd)" = success ] \
  || fail "stop: exit status $(in_ns systemctl show -P ExecMainStatus ifmeterd), result $(in_ns systemctl show -P Result ifmeterd)"
[ "$(stored_rx)" = 1000 ] || fail "after stop the store holds $(stored_rx) bytes for tun0, expected 1000"
ok "stop: exit 0, the final commit stored all 1000 bytes (commit interval 300 s)"

in_ns mkdir -p /etc/systemd/system/ifmeterd.service.d
# The steps below start the daemon more often than systemd's start limit
# (five in ten seconds) allows a unit; a machine's daemon is not.
in_ns sh -c 'printf "[Unit]\nStartLimitIntervalSec=0\n[Service]\nWatchdogSec=5s\nRestartSec=1s\n" > /etc/systemd/system/ifmeterd.service.d/test.conf'
in_ns systemctl daemon-reload
in_ns systemctl start ifmeterd || fail "start"
pid=$(in_ns systemctl show -P MainPID ifmeterd)
push 10
until_true 10 sampled 2000 || fail "the metrics file does not show 2000 bytes"
in_ns kill -STOP "$pid"
until_true 30 restarted_from "$pid" || fail "no restart after the watchdog"
# journald takes PID 1's line from a socket, in its own time.
until_true 10 journal_has "Failed with result 'watchdog'" || fail "the journal does not show the watchdog"
[ "$(stored_rx)" = 2000 ] || fail "after the watchdog restart the store holds $(stored_rx), expected 2000"
ok "watchdog: SIGSTOP, killed after WatchdogSec=5s, restarted; the store holds all 2000 bytes"

pid=$(in_ns systemctl show -P MainPID ifmeterd)
push 10
until_true 10 sampled 3000 || fail "the metrics file does not show 3000 bytes"
in_ns kill -9 "$pid"
until_true 20 restarted_from "$pid" || fail "no restart after kill -9"
[ "$(stored_rx)" = 3000 ] || fail "after kill -9 the store holds $(stored_rx), expected 3000"
ok "kill -9: restarted; the store holds all 3000 bytes"

# A daemon killed while link events wait unread in its socket: the socket is
# ifmeterd.socket's, which systemd keeps; the next process reads them. tun8
# lives and carries 700 bytes wholly while the daemon is stopped; its
# RTM_DELLINK, with the final counters, is all that knows them.
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns kill -STOP "$pid"
in_ns /root/ifmeter-test/ifmeter-testnet --name tun8 --rx-packets 7 --size 100 || fail "ifmeter-testnet tun8"
in_ns kill -9 "$pid"
until_true 20 restarted_from "$pid" || fail "no restart after kill -9 of a stopped daemon"
[ "$(stored_rx tun8)" = 700 ] || fail "a tunnel that lived while the daemon was stopped and killed: the store holds '$(stored_rx tun8)' bytes for tun8, expected 700"
until_true 10 journal_has "left unread by the daemon's last process" || fail "the journal does not tell of the events read from the kept socket"
ok "kill -9 with link events unread: systemd kept the socket, the next process counted tun8's 700 bytes"

# A running daemon on ifmeterd.socket's socket leaves link events in the
# queue until its next sample: tun5's whole life (500 bytes) is not read
# (neither store nor journal knows it) while samples are an hour apart,
# and a kill -9 before that sample loses none of it.
in_ns sed -i 's/^SampleIntervalSec=1$/SampleIntervalSec=3600/' /etc/ifmeter/ifmeter.conf
in_ns systemctl restart ifmeterd || fail "restart with SampleIntervalSec=3600"
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns /root/ifmeter-test/ifmeter-testnet --name tun5 --rx-packets 5 --size 100 || fail "ifmeter-testnet tun5"
sleep 1
status=$(in_ns ifmeter status --all --json) || fail "ifmeter status --all --json while tun5's life waits"
case $status in *'"tun5"'*) fail "tun5's life was read before the next sample" ;; esac
in_ns kill -9 "$pid"
until_true 20 restarted_from "$pid" || fail "no restart after kill -9 with tun5's life waiting in the queue"
[ "$(stored_rx tun5)" = 500 ] || fail "tun5's life, waiting for the sample when the daemon was killed: the store holds '$(stored_rx tun5)' bytes, expected 500"
in_ns sed -i 's/^SampleIntervalSec=3600$/SampleIntervalSec=1/' /etc/ifmeter/ifmeter.conf
in_ns systemctl restart ifmeterd || fail "restart with SampleIntervalSec=1"
ok "a life between samples waits in ifmeterd.socket's queue, unread; kill -9 before the sample: the next process counted tun5's 500 bytes"

# Stopped: the socket unit queues what happens, and a link event starts the
# daemon again, which counts tun9 (900 bytes, a whole life while no daemon
# ran) from the queue. Its final commit at the next stop stores it.
in_ns systemctl stop ifmeterd
[ "$(in_ns systemctl is-active ifmeterd)" != active ] || fail "ifmeterd still active after systemctl stop"
journal_count() { in_ns journalctl -u ifmeterd -o cat | grep -cF "$1" || true; }
unread_before=$(journal_count "left unread by the daemon's last process")
in_ns /root/ifmeter-test/ifmeter-testnet --name tun9 --rx-packets 9 --size 100 || fail "ifmeter-testnet tun9"
started() { [ "$(in_ns systemctl is-active ifmeterd)" = active ]; }
until_true 20 started || fail "a link event did not start the stopped daemon through ifmeterd.socket"
read_unread() { [ "$(journal_count "left unread by the daemon's last process")" -gt "$unread_before" ]; }
until_true 10 read_unread || fail "the daemon started by ifmeterd.socket did not read the events queued while it was stopped"
in_ns systemctl stop ifmeterd.socket ifmeterd
[ "$(stored_rx tun9)" = 900 ] || fail "a tunnel that lived while the daemon was stopped: the store holds '$(stored_rx tun9)' bytes for tun9, expected 900"
in_ns systemctl start ifmeterd.socket ifmeterd || fail "start ifmeterd.socket ifmeterd"
ok "systemctl stop: tun9 lived meanwhile; its events started the daemon through ifmeterd.socket, which counted its 900 bytes"

# An overrun while no daemon reads: systemd watches the socket then, and
# would fail ifmeterd.socket, closing it with its queue, on the error an
# overrun raises; the daemon has the socket count drops instead. A small
# ReceiveBuffer= (kept small by EventBufferBytes=, below) and a stopped
# daemon that a burst of tunnel lives overruns, then kill -9. The daemon
# raises a small buffer up to net.core.rmem_max unless EventBufferBytes=
# asks less.
in_ns mkdir -p /etc/systemd/system/ifmeterd.socket.d
in_ns sh -c 'printf "[Socket]\nReceiveBuffer=8K\n" > /etc/systemd/system/ifmeterd.socket.d/test.conf'
in_ns sed -i '/^\[Daemon\]$/a EventBufferBytes=4096' /etc/ifmeter/ifmeter.conf
in_ns systemctl daemon-reload
in_ns systemctl stop ifmeterd.socket ifmeterd
in_ns systemctl start ifmeterd.socket ifmeterd || fail "start ifmeterd.socket ifmeterd with ReceiveBuffer=8K"
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns kill -STOP "$pid"
for i in 1 2 3 4 5 6 7 8; do
  in_ns /root/ifmeter-test/ifmeter-testnet --name "tunx$i" --rx-packets 1 || fail "ifmeter-testnet tunx$i"
done
in_ns kill -9 "$pid"
until_true 20 restarted_from "$pid" || fail "no restart after kill -9 with the event queue overrun"
[ "$(in_ns systemctl is-active ifmeterd.socket)" = active ] \
  || fail "an overrun while no daemon read failed ifmeterd.socket: $(in_ns systemctl is-active ifmeterd.socket)"
until_true 10 journal_has "some were lost (the queue overran while no process read it)" \
  || fail "the journal does not tell of the events lost while no process read"
in_ns rm -r /etc/systemd/system/ifmeterd.socket.d
in_ns sed -i '/^EventBufferBytes=4096$/d' /etc/ifmeter/ifmeter.conf
in_ns systemctl daemon-reload
in_ns systemctl stop ifmeterd.socket ifmeterd
in_ns systemctl start ifmeterd.socket ifmeterd || fail "start ifmeterd.socket ifmeterd"
ok "an overrun while no daemon read (ReceiveBuffer=8K, kill -9): ifmeterd.socket still listening, the loss logged"

# --- The CLI as nobody, in no group: it reads the daemon's view and journal
# in /run/ifmeter (the store is 0600), a tunnel life since the start too.
[ "$(in_ns stat -c %a /var/lib/ifmeter/ifmeter.db)" = 600 ] || fail "the store is mode $(in_ns stat -c %a /var/lib/ifmeter/ifmeter.db), expected 600"
json=$(in_ns runuser -u nobody -- ifmeter status --json) || fail "ifmeter status as nobody"
grep -q '"tun0"' <<< "$json" || fail "ifmeter status as nobody does not show tun0: $(echo "$json" | head -c 1500)"
in_ns /root/ifmeter-test/ifmeter-testnet --name tun8 --rx-packets 3 --size 100 || fail "ifmeter-testnet tun8"
listed() { in_ns runuser -u nobody -- ifmeter status --all --json | grep '"tun8"' >/dev/null; }
until_true 30 listed || fail "ifmeter status as nobody does not list tun8 within 30 s"
for command in days months years top hours fiveminutes events check graph; do
  as_root=0; in_ns ifmeter $command > /dev/null 2>&1 || as_root=$?
  as_nobody=0; in_ns runuser -u nobody -- ifmeter $command > /dev/null 2>&1 || as_nobody=$?
  [ "$as_nobody" = "$as_root" ] || fail "ifmeter $command: exit $as_nobody as nobody, $as_root as root"
done
[ "$(in_ns runuser -u nobody -- ifmeter --version)" = "ifmeter ${v1%%-*}" ] || fail "ifmeter --version as nobody"
in_ns runuser -u nobody -- ifmeter completions bash | grep '^complete -F _ifmeter ifmeter$' >/dev/null || fail "ifmeter completions bash"
status=0
refused=$(in_ns runuser -u nobody -- ifmeter forget tun8 --force 2>&1 >/dev/null) || status=$?
[ "$status" = 77 ] && [ "$(echo "$refused" | wc -l)" = 1 ] || fail "ifmeter forget as nobody: exit $status, '$refused' (expected one line, exit 77)"
ok "the CLI as nobody (no group): status, a tunnel life within 30 s, the history views, --version, completions; forget refused in one line"

# --- node_exporter, as Debian's own service, reads the file through the link.
# Enabled by its package; started here too in case the host's was installed
# with its start forbidden.
in_ns systemctl start prometheus-node-exporter || fail "prometheus-node-exporter does not start"
scrape() { in_ns curl -sf http://127.0.0.1:9100/metrics > "$work/scrape"; }
until_true 10 scrape || fail "no scrape from node_exporter"
grep -q '^node_textfile_scrape_error 0$' "$work/scrape" || fail "node_textfile_scrape_error: $(grep node_textfile_scrape_error "$work/scrape")"
grep -q '^ifmeter_receive_bytes_total{class="tunnel",device="tun0"} 3000$' "$work/scrape" || fail "node_exporter does not show tun0's 3000 bytes"
ok "node_exporter (Debian's service) scrapes it: node_textfile_scrape_error 0, $(grep -c '^ifmeter_' "$work/scrape") ifmeter_ series"

# --- Upgrade: the store and the edited configuration stay, and no tunnel
# life is lost: tun3 lives and dies (100 bytes each) over and over while
# dpkg replaces the package and restarts the daemon, its lives read by the
# old process, queued in ifmeterd.socket's socket between the two, or read
# by the new one.
in_ns rm -r /etc/systemd/system/ifmeterd.service.d
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns rm -f /run/ifmeter-test-lives /run/ifmeter-test-stop
in_ns sh -c 'n=0; until [ -e /run/ifmeter-test-stop ]; do /root/ifmeter-test/ifmeter-testnet --name tun3 --rx-packets 1 --size 100 || exit 1; n=$((n + 1)); echo $n > /run/ifmeter-test-lives; done' &
lives_pid=$!
in_ns dpkg -i /root/ifmeter-test/ifmeter-v2.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $v2"; }
sleep 1
in_ns touch /run/ifmeter-test-stop
wait "$lives_pid" || fail "ifmeter-testnet tun3 during the upgrade"
lives=$(in_ns cat /run/ifmeter-test-lives)
# What the socket queued between the two processes, as the new one logged it.
queued=$(in_ns journalctl -u ifmeterd -o cat _PID="$(in_ns systemctl show -P MainPID ifmeterd)" | sed -n 's/^\([0-9]*\) link events\{0,1\} left unread by the daemon.s last process.*/\1/p' | head -1)
[ "$(in_ns dpkg-query -W -f '${Version}' ifmeter)" = "$v2" ] || fail "not upgraded"
in_ns grep -q '^SampleIntervalSec=1$' /etc/ifmeter/ifmeter.conf || fail "the upgrade lost the edited configuration"
in_ns test ! -e /etc/ifmeter/ifmeter.conf.dpkg-dist || fail "the upgrade left ifmeter.conf.dpkg-dist"
new=$(in_ns systemctl show -P MainPID ifmeterd)
[ "$new" != "$pid" ] && [ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "the upgrade did not restart the daemon"
[ "$(stored_rx)" = 3000 ] || fail "after the upgrade the store holds $(stored_rx), expected 3000"
[ "$(in_ns systemctl is-active ifmeterd.socket)" = active ] \
  || fail "after the upgrade ifmeterd.socket is $(in_ns systemctl is-active ifmeterd.socket)"
# A restart's final commit puts what the journal holds in the store.
sleep 2
in_ns systemctl restart ifmeterd || fail "restart after the upgrade"
[ "$lives" -gt 0 ] && [ "$(stored_rx tun3)" = $((lives * 100)) ] \
  || fail "tun3 lived $lives times (100 bytes each) across the upgrade; the store holds '$(stored_rx tun3)' bytes"
ok "upgrade $v1 -> $v2: restarted with ifmeterd.socket's socket, the store (3000 bytes) and the edited configuration kept; all $lives tunnel lives during it counted, $((lives * 100)) bytes (${queued:-no} link events queued between the two processes)"

# A daemon an administrator disabled but runs, ifmeterd.socket stopped and
# disabled too: an upgrade (this package again) restarts the daemon alone,
# on a socket of its own, and leaves both units as they were.
in_ns systemctl stop ifmeterd.socket
in_ns systemctl disable --quiet ifmeterd.service ifmeterd.socket
pid=$(in_ns systemctl show -P MainPID ifmeterd)
in_ns dpkg -i /root/ifmeter-test/ifmeter-v2.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $v2 again, disabled"; }
new=$(in_ns systemctl show -P MainPID ifmeterd)
[ "$new" != "$pid" ] && [ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "the upgrade of a disabled, running daemon did not restart it"
[ "$(in_ns systemctl is-active ifmeterd.socket)" != active ] || fail "the upgrade started the disabled ifmeterd.socket"
[ "$(in_ns systemctl is-enabled ifmeterd.service)" = disabled ] && [ "$(in_ns systemctl is-enabled ifmeterd.socket)" = disabled ] \
  || fail "the upgrade changed the units' state: ifmeterd $(in_ns systemctl is-enabled ifmeterd.service), ifmeterd.socket $(in_ns systemctl is-enabled ifmeterd.socket)"
in_ns systemctl enable --quiet ifmeterd.service
in_ns systemctl stop ifmeterd
in_ns systemctl start ifmeterd.socket ifmeterd || fail "start ifmeterd.socket and ifmeterd again"
[ "$(in_ns systemctl is-enabled ifmeterd.socket)" = enabled ] || fail "enabling ifmeterd did not enable ifmeterd.socket (Also=)"
ok "upgrade of a disabled daemon that runs: restarted alone on its own socket, both units left disabled"

# --- The journal: no seccomp kill, no denied system call.
in_ns journalctl -u ifmeterd -o cat > "$work/journal"
in_ns journalctl _COMM=ifmeterd -o cat >> "$work/journal"
if grep -E 'SIGSYS|status=31|EPERM|Operation not permitted|Permission denied' "$work/journal"; then fail "the journal shows a denied call"; fi
# libdispatch asked for a higher priority on every start; the poll loop has no worker threads.
if grep -F 'Failed to set thread priority' "$work/journal"; then fail "the journal shows libdispatch's thread priority line"; fi
ok "the journal of ifmeterd: no SIGSYS, EPERM, permission denied or thread priority line ($(wc -l < "$work/journal") lines)"

# --- ifmeter(1)'s edits while the daemon runs as its own user: handed to it by SIGHUP, answered.
answer=$(in_ns ifmeter watch eth9 2>&1) || fail "ifmeter watch eth9 as root, ifmeterd running: $answer"
answer=$(in_ns ifmeter unwatch eth9 2>&1) || fail "ifmeter unwatch eth9 as root, ifmeterd running: $answer"
in_ns systemctl is-active --quiet ifmeterd || fail "ifmeterd stopped after an edit"
ok "ifmeter watch and unwatch as root while ifmeterd runs sandboxed as its own user: applied by it and answered"

# --- ifmeter(1)'s forget, as root: the daemon starts again after it.
in_ns systemctl stop ifmeterd.socket ifmeterd
in_ns ifmeter forget tun0 --force > /dev/null || fail "ifmeter forget tun0 as root"
in_ns systemctl start ifmeterd.socket ifmeterd || fail "ifmeterd does not start after 'ifmeter forget' run as root: $(in_ns ls -l /var/lib/ifmeter)"
ok "ifmeter forget as root with the daemon stopped; it starts again"

# --- Remove keeps the data; purge removes it.
# A tunnel life after the last commit is held by the commit journal alone;
# a daemon killed and not restarted before the remove (its restart
# cancelled by the remove's stop) never commits it. The journal is data too.
in_ns /root/ifmeter-test/ifmeter-testnet --name tun7 --rx-packets 5 --size 100 --persist || fail "ifmeter-testnet"
in_ns ip link del tun7
journaled() { in_ns ifmeter status --all --json | grep '"tun7"' >/dev/null; }
until_true 10 journaled || fail "ifmeter does not show tun7's life from the journal"
in_ns systemctl kill -s KILL ifmeterd
in_ns systemctl stop ifmeterd
[ "$(stored_rx tun7)" = "" ] || fail "tun7 reached the store before the remove: the step tests nothing"
in_ns dpkg -r ifmeter > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -r"; }
[ "$(in_ns systemctl is-active ifmeterd)" != active ] || fail "ifmeterd still running after remove"
[ "$(in_ns systemctl is-active ifmeterd.socket)" != active ] || fail "ifmeterd.socket still listening after remove"
in_ns test -s /var/lib/ifmeter/ifmeter.db || fail "remove deleted the store"
in_ns test -e /etc/ifmeter/ifmeter.conf || fail "remove deleted the configuration"
in_ns test ! -L /var/lib/prometheus/node-exporter/ifmeter.prom || fail "remove left the link for node_exporter"
in_ns test ! -e /usr/sbin/ifmeterd || fail "remove left /usr/sbin/ifmeterd"
for unit in ifmeterd.service ifmeterd.socket ifmeter-metrics.service; do
  [ "$(in_ns readlink /etc/systemd/system/$unit)" = /dev/null ] || fail "remove did not mask $unit"
done
ok "dpkg -r: daemon, socket and relay stopped and masked, binaries and link gone, store and configuration kept"
in_ns dpkg -i /root/ifmeter-test/ifmeter-v2.deb > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i $v2 after remove"; }
[ "$(in_ns systemctl is-active ifmeterd)" = active ] || fail "ifmeterd not active after reinstalling"
[ "$(stored_rx tun7)" = 500 ] || fail "after remove and reinstall the store holds '$(stored_rx tun7)' for tun7, expected 500 (the journal of the killed daemon)"
ok "a life only the journal held (daemon killed before dpkg -r) is in the store after a reinstall: 500 bytes"
# A reader with the store open through the purge: the store goes all the same.
in_ns sh -c '{ echo "SELECT count(*) FROM meta;"; sleep 4; } | sqlite3 -readonly /var/lib/ifmeter/ifmeter.db > /dev/null 2>&1 &'
sleep 1
in_ns dpkg -P ifmeter > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -P"; }
in_ns test ! -e /var/lib/ifmeter || fail "purge left /var/lib/ifmeter"
in_ns test ! -e /etc/ifmeter || fail "purge left /etc/ifmeter"
left=$(in_ns find /etc/systemd/system -name 'ifmeterd*' -o -name 'ifmeter-metrics*')
[ -z "$left" ] || fail "purge left masks or links of the units: $left"
ok "dpkg -P with a reader holding the store: store, configuration and the units' masks gone"

# --- Power off and clean up (the trap), then check nothing is left.
in_ns systemctl poweroff >/dev/null 2>&1 || true
until_true 30 sh -c "! kill -0 $pid1 2>/dev/null" || fail "systemctl poweroff did not end the namespace"
ok "powered off, $(elapsed) s after the start"
