# A clean reboot, then a boot whose clock says 2031 and one whose clock says
# 2020, on one store: each test's first part ends its boot (next_boot) and
# its second part runs on the next. host-clock is the host's time at each
# boot: the true time a stepped clock is set to.
state=/mnt/disk/state

# The reboot events' losses of NAME: one per line.
reboot_losses() {
  "$bin/ifmeter" --state-dir "$state" events -i "$1" --json |
    awk -F'"' '$2 == "reason" { reason = $4 } $2 == "loss" && reason == "reboot" { print $4 } $2 == "unseen_seconds" && reason == "reboot" { print "seconds" }'
}

# The true time now: the host's at this boot plus the guest's uptime.
true_now() {
  read -r host < "$share/host-clock"
  read -r up _ < /proc/uptime
  echo $((host + ${up%.*}))
}

# rows_dated PREFIX: the export's rows whose start begins with PREFIX (a year).
rows_dated() { "$bin/ifmeter" --state-dir "$state" export --granularity "$2" | awk -F, -v year="$1" 'NR > 1 && index($4, year) == 1' | wc -l; }

t_clean_reboot() {
  if [ ! -e "$share/clean_reboot.stopped" ]; then
    wireguard_pair
    ip link add wg2 type wireguard
    daemon_start "$state" --interval 1 --commit-interval 5
    ping_wireguard_peer 10
    wireguard_quiet
    daemon_stop
    touch "$share/clean_reboot.stopped"
    next_boot clean
  fi
  daemon_start "$state" --interval 1
  daemon_stop
  up=$(reboot_losses wg0 | tr '\n' ' ')
  down=$(reboot_losses wg2 | tr '\n' ' ')
  [ "$up" = "unseen seconds " ] || fail "wg0, up at the clean stop: reboot loss '$up', expected unseen with its seconds"
  [ "$down" = "none " ] || fail "wg2, down at the clean stop: reboot loss '$down', expected none"
  ok "a clean reboot: wg0 (up at the stop) unseen for bounded seconds, wg2 (down) nothing lost, no unknown"
}

# The store's total of NAME over the day rows: "RX TX".
day_total() { "$bin/ifmeter" --state-dir "$state" export | stored_totals | awk -v name="$1" '$1 == name { print $2, $3 }'; }

# clock_step YEAR CLOCK: this boot's clock is YEAR's; traffic on wg0, then the
# clock set right (and, with timesyncd's flag, said synchronised); no row may
# stay dated YEAR and the history before the boot must be whole.
clock_step() {
  year=$1
  before=$(day_total wg0)
  [ -n "$before" ] || fail "no history of wg0 before the $year boot"
  wireguard_pair
  kernel_bytes wg0
  rx0=$rx tx0=$tx
  daemon_start "$state" --interval 1 --commit-interval 5
  ping_wireguard_peer 10
  wireguard_quiet
  kernel_bytes wg0
  sleep 6  # past a commit interval: dating waits for the clock
  date -s "@$(true_now)" > /dev/null
  [ ! -d /run/systemd/timesync ] || touch /run/systemd/timesync/synchronized
  read -r daemon < /run/ifmeterd.daemon
  kill -HUP "$daemon"
  until_true 30 grep -q "reloaded" /run/ifmeterd.log || fail "no reload: $(tail -n 1 /run/ifmeterd.log)"
  daemon_stop
  for granularity in day month year; do
    dated=$(rows_dated "$year" "$granularity")
    [ "$dated" = 0 ] || fail "$dated $granularity rows dated $year, a time that did not happen"
  done
  set -- $before
  after=$(day_total wg0)
  [ "$after" = "$(( $1 + rx - rx0 )) $(( $2 + tx - tx0 ))" ] || fail "wg0's days hold $after: $before before the boot plus the kernel's $((rx - rx0)) $((tx - tx0)) expected"
  grep -q "stepped" /run/ifmeterd.log || fail "the daemon did not log the clock step: $(grep clock /run/ifmeterd.log | tail -n 2)"
}

t_clock_back() {
  if [ ! -e "$share/clock_back.booted" ]; then
    touch "$share/clock_back.booted"
    next_boot clean 2031-01-01T00:00:00
  fi
  case $(date +%Y) in 2031) ;; *) fail "the boot's clock says $(date), not 2031" ;; esac
  mkdir -p /run/systemd/timesync  # timesyncd runs and has not synchronised the clock yet
  clock_step 2031
  ok "booted at 2031, stepped back: no row dated 2031, the history before the boot whole, the boot's traffic to the byte"
}

t_clock_forward() {
  if [ ! -e "$share/clock_forward.booted" ]; then
    touch "$share/clock_forward.booted"
    next_boot clean 2020-01-01T00:00:00
  fi
  case $(date +%Y) in 2020) ;; *) fail "the boot's clock says $(date), not 2020" ;; esac
  rm -rf /run/systemd/timesync  # no time service: a clock before the last commit is wrong all the same
  clock_step 2020
  ok "booted at 2020, stepped forward: no row dated 2020, the history before the boot whole, the boot's traffic to the byte"
}
