# Every real link kind, counted by one daemon: each link's far end is in the
# netns "peer"; the daemon runs across the traffic; each test then checks its
# link's class and reason (ifmeter interfaces --json, the daemon running) and
# the store's bytes against the kernel's counter delta across the run.
# One USB phone (a second RNDIS gadget) is unplugged while the daemon counts.

# test|class|reason (ifmeter interfaces' "signal")
expectations='
wifi|wifi|DEVTYPE=wlan
wireguard|tunnel|kind wireguard
rndis_host|cellular|driver rndis_host: USB tethering
cdc_ether_local|cellular|driver cdc_ether + local MAC: USB tethering
cdc_ether_global|wired|Ethernet device (driver cdc_ether)
cdc_ncm|cellular|driver cdc_ncm + local MAC: USB tethering
wwan|cellular|DEVTYPE=wwan
unplug|cellular|driver rndis_host: USB tethering
'
# The USB devices: dummy_udc.N-1, test, gadget function, host-side MAC
# (global for one cdc_ether), vendor and product ids (an LTE stick's for wwan).
gadgets='
1 rndis_host rndis 02:00:00:00:01:01
2 cdc_ether_local ecm 02:00:00:00:02:01
3 cdc_ether_global ecm 00:00:5e:00:53:01
4 cdc_ncm ncm 02:00:00:00:04:01
5 wwan ecm 02:00:00:00:05:01 0x19d2 0x1003
6 unplug rndis 02:00:00:00:06:01
'
psk=6966206d65746572206b6e6f777320746865206b65726e656c27732062797465
pings=20

# gadget N TEST FUNCTION HOST_MAC [VENDOR PRODUCT]: a USB device on
# dummy_udc.N-1, which the kernel's host drivers bind.
gadget() {
  g=/sys/kernel/config/usb_gadget/g$1
  mkdir "$g" "$g/configs/c.1" "$g/functions/$3.f$1"
  echo "${5:-0x1d6b}" > "$g/idVendor"
  echo "${6:-0x0104}" > "$g/idProduct"
  echo "$4" > "$g/functions/$3.f$1/host_addr"
  echo "02:00:00:00:0$1:02" > "$g/functions/$3.f$1/dev_addr"
  ln -s "$g/functions/$3.f$1" "$g/configs/c.1/"
  echo "dummy_udc.$(($1 - 1))" > "$g/UDC"
}

# The link whose MAC is $1, or nothing.
link_with_address() {
  for dir in /sys/class/net/*; do
    read -r address < "$dir/address"
    [ "$address" != "$1" ] || { echo "${dir##*/}"; return; }
  done
}

all_usb_links_up() {
  while read -r n _ _ mac _; do
    [ -z "$n" ] || [ -n "$(link_with_address "$mac")" ] || return 1
  done <<EOF
$gadgets
EOF
}

associated() { read -r state < /sys/class/net/wlan0/operstate; [ "$state" = up ]; }
gone() { [ ! -e "/sys/class/net/$1" ]; }

# The fixture, once per boot; its failure fails every test that needs it.
links_fixture() {
  [ ! -e /run/links/failed ] || fail "$(cat /run/links/failed)"
  [ ! -e /run/links/done ] || return 0
  mkdir -p /run/links /run/modprobe.d
  set +e
  (set -e; links_up) > "$share/logs/links-fixture.log" 2>&1
  status=$?
  set -e
  if [ "$status" != 0 ]; then
    echo "the links' set-up: $(tail -n 1 "$share/logs/links-fixture.log")" > /run/links/failed
    fail "$(cat /run/links/failed)"
  fi
  touch /run/links/done
}

links_up() {
  echo "options dummy_hcd num=6" > /run/modprobe.d/ifmeter.conf
  modprobe -a mac80211_hwsim wireguard dummy_hcd libcomposite usb_f_rndis usb_f_ecm usb_f_ncm rndis_host cdc_ether cdc_ncm
  mount -t configfs configfs /sys/kernel/config
  ip netns add peer

  # Wi-Fi: phy1 (wlan1) is the access point, in peer; wlan0 the station.
  read -r ap_mac < /sys/class/net/wlan1/address
  read -r sta_mac < /sys/class/net/wlan0/address
  iw phy phy1 set netns name peer
  printf 'interface=wlan1\ndriver=nl80211\nssid=ifmeter\nhw_mode=g\nchannel=1\nwpa=2\nwpa_key_mgmt=WPA-PSK\nrsn_pairwise=CCMP\nwpa_psk=%s\n' "$psk" > /run/hostapd.conf
  printf 'network={\n ssid="ifmeter"\n key_mgmt=WPA-PSK\n psk=%s\n}\n' "$psk" > /run/wpa.conf
  ip netns exec peer hostapd -B -P /run/hostapd.pid /run/hostapd.conf > /run/hostapd.log
  ip link set wlan0 up
  wpa_supplicant -B -i wlan0 -c /run/wpa.conf -P /run/wpa.pid > /run/wpa.log

  wireguard_pair

  # USB: one gadget per function on dummy_hcd; wwan is an LTE stick's ids.
  while read -r line; do [ -z "$line" ] || gadget $line; done <<EOF
$gadgets
EOF
  until_true 30 all_usb_links_up || fail "the USB links' host sides did not appear in 30 s: $(ls /sys/class/net)"

  # Addresses 10.0.N.1 here and 10.0.N.2 in peer, neighbours permanent so
  # nothing but the pings crosses a link.
  : > /run/links/table
  : > /run/here.batch
  echo "addr add 10.0.1.1/24 dev wlan0" >> /run/here.batch
  echo "neigh replace 10.0.1.2 lladdr $ap_mac dev wlan0 nud permanent" >> /run/here.batch
  printf 'addr add 10.0.1.2/24 dev wlan1\nneigh replace 10.0.1.1 lladdr %s dev wlan1 nud permanent\n' "$sta_mac" > /run/peer.batch
  echo "wifi wlan0 10.0.1.2" >> /run/links/table
  echo "wireguard wg0 10.0.2.2" >> /run/links/table
  while read -r n test function mac _; do
    [ -n "$n" ] || continue
    f=/sys/kernel/config/usb_gadget/g$n/functions/$function.f$n
    read -r far < "$f/ifname"
    link=$(link_with_address "$mac")
    read -r far_mac < "$f/dev_addr"
    read -r here_mac < "/sys/class/net/$link/address"
    echo "link set $far netns peer" >> /run/here.batch
    echo "addr add 10.0.1$n.1/24 dev $link" >> /run/here.batch
    echo "link set $link up" >> /run/here.batch
    echo "neigh replace 10.0.1$n.2 lladdr $far_mac dev $link nud permanent" >> /run/here.batch
    printf 'addr add 10.0.1%s.2/24 dev %s\nlink set %s up\nneigh replace 10.0.1%s.1 lladdr %s dev %s nud permanent\n' \
      "$n" "$far" "$far" "$n" "$here_mac" "$far" >> /run/peer.batch
    echo "$test $link 10.0.1$n.2" >> /run/links/table
  done <<EOF
$gadgets
EOF
  ip -batch /run/here.batch
  ip -n peer -batch /run/peer.batch
  until_true 30 associated || fail "wlan0 did not associate with the access point in 30 s"

  # The run: counters before the daemon starts and after it stops.
  printf '[Interfaces]\nWatch=wifi cellular tunnel wired\n' > /run/ifmeter.conf
  while read -r _ link _; do kernel_bytes "$link"; echo "$link $rx $tx"; done < /run/links/table > /run/links/before
  daemon_start /run/state --config /run/ifmeter.conf --interval 1
  pids=""
  while read -r _ link far; do
    ping -q -c "$pings" -i 0.05 -s 1000 -W 5 "$far" > "/run/ping-$link.log" &
    pids="$pids $!"
  done < /run/links/table
  for pid in $pids; do wait "$pid" || true; done
  wireguard_quiet
  "$bin/ifmeter" --state-dir /run/state --config /run/ifmeter.conf interfaces --all --json | classes > /run/links/classes
  # The phone unplugged while the daemon counts.
  unplugged=$(field unplug 2 /run/links/table)
  kernel_bytes "$unplugged"
  echo "$unplugged $rx $tx" > /run/links/unplugged
  echo "" > /sys/kernel/config/usb_gadget/g6/UDC
  until_true 10 gone "$unplugged" || fail "$unplugged still there 10 s after its gadget was unbound"
  until_true 10 grep -q "^$unplugged: removed" /run/ifmeterd.log || true
  daemon_stop
  while read -r _ link _; do
    if [ "$link" = "$unplugged" ]; then cat /run/links/unplugged; else kernel_bytes "$link"; echo "$link $rx $tx"; fi
  done < /run/links/table > /run/links/after
  "$bin/ifmeter" --state-dir /run/state --config /run/ifmeter.conf export | stored_totals > /run/links/stored
}

# field KEY N FILE: the Nth field of the line of FILE whose first is KEY.
field() {
  key=$1 n=$2 file=$3
  while read -r line; do
    set -- $line
    [ "$1" = "$key" ] && shift $((n - 1)) && echo "$1" && return
  done < "$file"
}

# check_link TEST: the class and reason of the test's link while it was
# there, and the store's bytes equal to the kernel's delta, both non-zero.
check_link() {
  links_fixture
  link=$(field "$1" 2 /run/links/table)
  expected=$(echo "$expectations" | grep "^$1|")
  expected=${expected#*|}
  reported=$(grep "^$link	" /run/links/classes | cut -f2-)
  [ -n "$reported" ] || fail "ifmeter interfaces did not list $link"
  [ "$reported" = "$(echo "$expected" | tr '|' '\t')" ] \
    || fail "$link: class and reason '$(echo "$reported" | tr '\t' '|')', expected '$expected'"
  before_rx=$(field "$link" 2 /run/links/before) before_tx=$(field "$link" 3 /run/links/before)
  kernel_rx=$(( $(field "$link" 2 /run/links/after) - before_rx ))
  kernel_tx=$(( $(field "$link" 3 /run/links/after) - before_tx ))
  [ "$kernel_rx" -gt 0 ] && [ "$kernel_tx" -gt 0 ] || fail "$link carried no traffic: rx $kernel_rx, tx $kernel_tx bytes"
  stored_rx=$(field "$link" 2 /run/links/stored) stored_tx=$(field "$link" 3 /run/links/stored)
  [ "$stored_rx $stored_tx" = "$kernel_rx $kernel_tx" ] \
    || fail "$link: the store holds rx '$stored_rx' tx '$stored_tx' bytes, the kernel counted rx $kernel_rx tx $kernel_tx"
  ok "$link, ${expected%%|*} (${expected#*|}): rx $kernel_rx, tx $kernel_tx bytes, the kernel's count"
}

t_wifi() { check_link wifi; }
t_wireguard() { check_link wireguard; }
t_rndis_host() { check_link rndis_host; }
t_cdc_ether_local() { check_link cdc_ether_local; }
t_cdc_ether_global() { check_link cdc_ether_global; }
t_cdc_ncm() { check_link cdc_ncm; }
t_wwan() { check_link wwan; }
t_unplug() {
  check_link unplug
  grep -q "^$link: removed" /run/ifmeterd.log || fail "ifmeterd did not log $link's removal: $(tail -n 1 /run/ifmeterd.log)"
  ok "unplugged while counted: $(cat "/run/ok-$current")"
}
