# Helpers of the guest's tests (sourced). A fork+exec costs 0.1-0.3 s under
# TCG: read sysfs with the shell's own read, batch ip commands, one awk per
# report.
share=/mnt/vm
bin=$share/bin

# A test's result: fail ends it with one line; ok sets what its pass line says.
fail() { echo "$*" >&2; echo "$*" > "/run/why-$current"; exit 1; }
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

# wireguard_pair: wg0 (10.0.2.1) here, its peer wg1 (10.0.2.2) in the netns
# peer. wg1 keeps its UDP socket in the namespace it was made in, so both
# ends meet over this namespace's loopback.
wireguard_pair() {
  [ -e /run/netns/peer ] || ip netns add peer
  echo 2DEVbzN8oX2vMb0T5FgKsThTQ7Vd1k4wZw8F0a5B4nU= > /run/wg0.key
  echo aFGH1w6J0wG8sN3x9kQ4Rz7bF2cV5tY8uI1oP3lK6mE= > /run/wg1.key
  pub0=$(wg pubkey < /run/wg0.key)
  pub1=$(wg pubkey < /run/wg1.key)
  ip link add wg0 type wireguard
  ip link add wg1 type wireguard
  wg set wg0 private-key /run/wg0.key listen-port 51820 peer "$pub1" allowed-ips 10.0.2.2/32 endpoint 127.0.0.1:51821
  wg set wg1 private-key /run/wg1.key listen-port 51821 peer "$pub0" allowed-ips 10.0.2.1/32 endpoint 127.0.0.1:51820
  printf 'link set wg1 netns peer\naddr add 10.0.2.1/24 dev wg0\nlink set wg0 up\n' | ip -batch -
  printf 'addr add 10.0.2.2/24 dev wg1\nlink set wg1 up\n' | ip -n peer -batch -
}

# ping_wireguard_peer COUNT: COUNT pings of 1028 bytes over wg0 to its peer, every one answered.
ping_wireguard_peer() {
  ping -q -c "$1" -i 0.05 -s 1000 -W 5 10.0.2.2 > /run/ping.log || fail "ping over wg0: $(tail -n 2 /run/ping.log)"
}

# WireGuard sends a keepalive 10 s after the last reply: no peers, no timers.
wireguard_quiet() {
  wg set wg0 peer "$pub1" remove
  ip netns exec peer wg set wg1 peer "$pub0" remove
}
