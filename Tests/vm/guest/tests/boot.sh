# The guest itself: Debian's kernel, and ifmeter's release binaries run on
# the guest's own libraries.
t_boot() {
  read -r release < /proc/sys/kernel/osrelease
  [ -d "/lib/modules/$release" ] || fail "kernel $release is not the guest's ($(ls /lib/modules))"
  version=$("$bin/ifmeter" --version) || fail "ifmeter --version: exit $?"
  "$bin/ifmeterd" --version > /dev/null || fail "ifmeterd --version: exit $?"
  ok "Debian kernel $release, $version"
}
