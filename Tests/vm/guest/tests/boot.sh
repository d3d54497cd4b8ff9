# The guest itself: Debian's kernel, the clock the run set, and ifmeter's
# release binaries on the guest's own libraries.
t_boot() {
  read -r release < /proc/sys/kernel/osrelease
  [ -d "/lib/modules/$release" ] || fail "kernel $release is not the guest's ($(ls /lib/modules))"
  if [ "$CLOCK" != now ]; then
    [ "$(date -u +%Y-%m-%dT%H)" = "${CLOCK%:*:*}" ] || fail "the guest's clock reads $(date -u), the run set $CLOCK"
  fi
  version=$("$bin/ifmeter" --version) || fail "ifmeter --version: exit $?"
  "$bin/ifmeterd" --version > /dev/null || fail "ifmeterd --version: exit $?"
  ok "Debian kernel $release, clock $CLOCK, $version"
}
