# Helpers of the guest's tests (sourced). A fork+exec costs 0.1-0.3 s under
# TCG: read sysfs with the shell's own read, batch ip commands, one awk per
# report.
share=/mnt/vm
bin=$share/bin

# A test's result: fail ends it with one line; ok sets what its pass line says.
fail() { echo "$*" > "/run/why-$current"; exit 1; }
ok() { echo "$*" > "/run/ok-$current"; }

run_test() {
  current=$1
  set +e
  (set -e; "t_$1") > "$share/logs/$1.log" 2>&1
  status=$?
  set -e
  if [ "$status" = 0 ]; then
    echo "pass $1: $(cat "/run/ok-$1" 2>/dev/null)" >> "$share/results"
  elif [ -e "/run/why-$1" ]; then
    echo "fail $1: $(cat "/run/why-$1")" >> "$share/results"
  else
    echo "fail $1: exit $status: $(tail -n 1 "$share/logs/$1.log")" >> "$share/results"
  fi
}

# Ends this boot for the next one on the same persistent disk: "cut" has the
# host kill qemu (a power cut, nothing flushed), "clean" unmounts and powers
# off. A second argument sets the next boot's clock (qemu -rtc base=).
next_boot() {
  echo "$1 ${2:-now}" > "$share/next.tmp"
  if [ "$1" = clean ]; then
    umount /mnt/disk
    mv "$share/next.tmp" "$share/next"
    echo o > /proc/sysrq-trigger
  else
    mv "$share/next.tmp" "$share/next"
  fi
  while :; do sleep 60; done
}

# until_true SECONDS COMMAND...: polls every 0.2 s.
until_true() {
  tries=$(( $1 * 5 )); shift
  while ! "$@"; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || return 1
    sleep 0.2
  done
}

# kernel_bytes LINK: sets rx and tx from the kernel's counters.
kernel_bytes() {
  read -r rx < "/sys/class/net/$1/statistics/rx_bytes"
  read -r tx < "/sys/class/net/$1/statistics/tx_bytes"
}

# daemon_start STATE_DIR [OPTIONS]: ifmeterd in the background, its first
# sample taken (it logs each link it counts once that sample is in).
daemon_start() {
  state=$1; shift
  mkdir -p "$state"
  "$bin/ifmeterd" --state-dir "$state" "$@" > /run/ifmeterd.log 2>&1 &
  daemon=$!
  echo "$daemon" > /run/ifmeterd.daemon
  until_true 30 grep -q "counters from netlink" /run/ifmeterd.log || fail "ifmeterd did not start: $(tail -n 1 /run/ifmeterd.log)"
}

daemon_stop() {
  read -r daemon < /run/ifmeterd.daemon
  kill -TERM "$daemon"
  wait "$daemon" || fail "ifmeterd exited $? on SIGTERM: $(tail -n 1 /run/ifmeterd.log)"
}

# The class and signal ifmeter interfaces reports, a line per link:
# NAME<TAB>CLASS<TAB>SIGNAL.
classes() {
  awk -F'"' '$2 == "name" { name = $4 } $2 == "class" { class = $4 } $2 == "signal" { print name "\t" class "\t" $4 }'
}

# The store's totals, a line per interface: NAME RX TX (ifmeter export's day rows).
stored_totals() {
  awk -F, 'NR > 1 { rx[$1] += $5; tx[$1] += $6 } END { for (name in rx) print name, rx[name], tx[name] }'
}

