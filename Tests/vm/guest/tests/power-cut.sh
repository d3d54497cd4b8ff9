# A power cut: traffic on wg0 committed by the daemon (--commit-interval 5),
# then qemu killed, nothing flushed; on the next boot the store holds it.
# The runtime directory is a tmpfs, as under the packaged unit, so the
# journal cannot stand in for the store. Writeback is off: only what the
# daemon made durable itself (fsync) survives, however fast the cut comes.

t_power_cut() {
  state=/mnt/disk/state
  if [ "$BOOT" = 1 ]; then
    echo 0 > /proc/sys/vm/dirty_writeback_centisecs
    echo 360000 > /proc/sys/vm/dirty_expire_centisecs
    export RUNTIME_DIRECTORY=/run/ifmeter
    mkdir -p /run/ifmeter
    wireguard_pair
    kernel_bytes wg0
    before_rx=$rx before_tx=$tx
    daemon_start "$state" --interval 1 --commit-interval 5
    ping_wireguard_peer 20
    wireguard_quiet
    kernel_bytes wg0
    expected="wg0 $((rx - before_rx)) $((tx - before_tx))"
    echo "$expected" > "$share/power-cut.expected"
    committed() { [ "$("$bin/ifmeter" --state-dir "$state" export | stored_totals | grep '^wg0 ')" = "$expected" ]; }
    until_true 30 committed || fail "the store did not show $expected within 30 s: $("$bin/ifmeter" --state-dir "$state" export | stored_totals)"
    next_boot cut
  fi
  read -r expected < "$share/power-cut.expected"
  stored=$("$bin/ifmeter" --state-dir "$state" export | stored_totals | grep '^wg0 ') || stored="nothing for wg0"
  [ "$stored" = "$expected" ] || fail "after the power cut the store holds $stored, committed before it: $expected (rx, tx bytes)"
  ok "committed before the power cut and in the store after it: $expected (rx, tx bytes)"
}
