#!/usr/bin/env bash
# The real-kernel lane: Debian 12's kernel in qemu (TCG, no network card)
# with Wi-Fi, WireGuard and USB-tethered links the host kernel lacks. The
# guest is built once and cached (build-guest.sh); each run below boots it
# with the share (guest/, the binaries, the results) and a persistent disk
# that a test keeps across the boots it asks for (guest/lib.sh, next_boot).
#   run.sh --check          prints why it cannot run here (exit 1), or nothing
#   run.sh BINDIR [RUN...]  the lane (root) on BINDIR's ifmeterd and ifmeter (IFMETER_VM_KEEP=1 keeps its files)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${IFMETER_VM_CACHE:-/var/cache/ifmeter-vm}

# Each run: its name, the guest's clock at its first boot (UTC, or now), and
# its tests (t_NAME in guest/tests/*.sh), run in order in one guest.
runs=(
  "links 2027-03-01T12:00:00 boot wifi wireguard rndis_host cdc_ether_local cdc_ether_global cdc_ncm wwan unplug"
  "power-cut now power_cut"
  "reboot-clock now clean_reboot clock_back clock_forward"
)

cannot_run() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root (debootstrap, mkfs.ext4 -d)"; return; }
  for tool in qemu-system-x86_64 debootstrap mkfs.ext4 cpio xz flock; do
    command -v "$tool" > /dev/null || { echo "needs $tool"; return; }
  done
}

if [ "${1:-}" = --check ]; then
  reason=$(cannot_run)
  [ -z "$reason" ] || { echo "$reason"; exit 1; }
  exit 0
fi
bindir=$(cd "${1:?usage: run.sh BINDIR [RUN...]}" && pwd)
shift
reason=$(cannot_run)
[ -z "$reason" ] || { echo "vm lane: cannot run: $reason" >&2; exit 69; }
started=$(date +%s)

# --- The guest, keyed by what builds it.
key=$(cat "$here/build-guest.sh" | sha256sum | cut -c1-16)
guest=$cache_root/$key
mkdir -p "$cache_root"
exec 9> "$cache_root/.lock"
flock 9
if [ ! -e "$guest/root.img" ]; then
  echo "vm lane: building the guest in $guest (once, about two minutes)"
  rm -rf "$guest.new"
  "$here/build-guest.sh" "$guest.new"
  mv "$guest.new" "$guest"
  # One guest is kept: a run already booted from an older one reads its open files.
  find "$cache_root" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
fi
flock -u 9

work=$(mktemp -d /tmp/ifmeter-vm.XXXXXX)
qemu_pid=""
cleanup() {
  [ -z "$qemu_pid" ] || kill -9 "$qemu_pid" 2>/dev/null || true
  if [ -n "${IFMETER_VM_KEEP:-}" ]; then echo "vm lane: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# boot DIR RTC: one boot of a run, until the guest powers off or asks for a
# power cut (DIR/share/next says "cut").
boot() {
  local dir=$1 rtc=$2 deadline=$(( $(date +%s) + GUEST_TIMEOUT + 60 ))
  [ "$rtc" = now ] && rtc=utc
  qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nodefaults -nographic -no-reboot -nic none -monitor none \
    -kernel "$guest/vmlinux" -initrd "$guest/initrd.cpio" \
    -append "console=ttyS0 ipv6.disable=1 panic=-1 quiet" -rtc base="$rtc" \
    -drive file="$guest/root.img",format=raw,if=virtio,readonly=on \
    -drive file="$dir/disk.img",format=raw,if=virtio \
    -fsdev local,id=vm,path="$dir/share",security_model=none -device virtio-9p-pci,fsdev=vm,mount_tag=vm \
    -serial "file:$dir/console.log" -pidfile "$dir/qemu.pid" &
  qemu_pid=$!
  while kill -0 "$qemu_pid" 2>/dev/null; do
    if grep -qs '^cut' "$dir/share/next"; then kill -9 "$qemu_pid"; break; fi
    if [ "$(date +%s)" -gt "$deadline" ]; then
      echo "note: qemu killed after $((GUEST_TIMEOUT + 60)) s" >> "$dir/share/results"
      kill -9 "$qemu_pid"
      break
    fi
    sleep 0.5
  done
  wait "$qemu_pid" 2>/dev/null || true
  qemu_pid=""
}

GUEST_TIMEOUT=${IFMETER_VM_TIMEOUT:-150}
passed=0 failed=0
for run in "${runs[@]}"; do
  read -r name rtc tests <<< "$run"
  [ $# -eq 0 ] || [[ " $* " == *" $name "* ]] || continue
  dir=$work/$name
  mkdir -p "$dir/share/bin" "$dir/share/logs"
  cp -r "$here/guest" "$dir/share/guest"
  cp "$bindir/ifmeterd" "$bindir/ifmeter" "$dir/share/bin/"
  truncate -s 128M "$dir/disk.img"
  mkfs.ext4 -q -F "$dir/disk.img"
  : > "$dir/share/results"
  lines=""
  for boots in 1 2 3 4; do
    printf 'BOOT=%s\nTESTS="%s"\nGUEST_TIMEOUT=%s\nCLOCK=%s\n' "$boots" "$tests" "$GUEST_TIMEOUT" "$rtc" > "$dir/share/plan"
    rm -f "$dir/share/next"
    date +%s > "$dir/share/host-clock"  # the true time, for a guest whose clock is set wrong
    boot "$dir" "$rtc"
    [ -e "$dir/share/next" ] || break
    read -r _ rtc < "$dir/share/next"
  done
  grep '^note' "$dir/share/results" | sed "s/^/vm $name: /" || true
  for test in $tests; do
    line=$(grep -m 1 "^\(pass\|fail\) $test:" "$dir/share/results" || echo "fail $test: no result")
    echo "vm $line"
    lines+="$line"$'\n'
    case $line in
      pass*) passed=$((passed + 1)) ;;
      *) failed=$((failed + 1))
         # The log before its last line, which the result line already holds.
         [ ! -s "$dir/share/logs/$test.log" ] || sed '$d' "$dir/share/logs/$test.log" | tail -n 20 | sed "s/^/  $test: /" ;;
    esac
  done
  if grep -q ": no result$" <<< "$lines"; then tail -n 5 "$dir/console.log" | sed "s/^/  console: /"; fi
done
echo "vm lane: $passed passed, $failed failed ($(( $(date +%s) - started )) s)"
[ "$failed" = 0 ]
