#!/usr/bin/env bash
# Builds the Debian package from binaries `make release` built:
#   packaging/deb/build.sh BINDIR VERSION REVISION OUTDIR
# Prints the path of the .deb. Runs as any user (dpkg-deb --root-owner-group).
set -euo pipefail
bindir=$1 version=$2 revision=$3 outdir=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
arch=$(dpkg --print-architecture)
package="ifmeter_${version}-${revision}_${arch}"
for binary in ifmeterd ifmeter; do
  [ -x "$bindir/$binary" ] || { echo "build.sh: $bindir/$binary is not built: run make release" >&2; exit 66; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
# Reproducible timestamps: the last commit's, else the changelog's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$top" log -1 --format=%ct 2>/dev/null || stat -c %Y "$top/CHANGELOG.md")}

install -d "$root/DEBIAN" "$root/usr/sbin" "$root/usr/bin" "$root/lib/systemd/system" "$root/usr/lib/sysusers.d" \
  "$root/etc/ifmeter" "$root/usr/share/doc/ifmeter" "$root/usr/share/man/man1" "$root/usr/share/man/man5" "$root/usr/share/man/man8" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" \
  "$root/var/lib/prometheus/node-exporter"

# The Swift runtime is linked in statically; strip what only a debugger reads.
install -m 0755 "$bindir/ifmeterd" "$root/usr/sbin/ifmeterd"
install -m 0755 "$bindir/ifmeter" "$root/usr/bin/ifmeter"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/sbin/ifmeterd" "$root/usr/bin/ifmeter"

# bookworm's dpkg still wants units below /lib (the usr-merge moratorium).
sed -e 's|@SBINDIR@|/usr/sbin|g' -e 's|@SYSCONFDIR@|/etc|g' -e 's|@DOCDIR@|/usr/share/doc/ifmeter|g' \
  "$top/systemd/ifmeterd.service" > "$root/lib/systemd/system/ifmeterd.service"
sed -e 's|@SBINDIR@|/usr/sbin|g' "$top/systemd/ifmeter-metrics.service" > "$root/lib/systemd/system/ifmeter-metrics.service"
install -m 0644 "$top/systemd/ifmeterd.socket" "$root/lib/systemd/system/ifmeterd.socket"
install -m 0644 "$top/systemd/sysusers.d/ifmeter.conf" "$root/usr/lib/sysusers.d/ifmeter.conf"
install -m 0644 "$top/systemd/ifmeter.conf" "$root/etc/ifmeter/ifmeter.conf"
# node_exporter's textfile collector follows this link to the copy of the
# metrics file ifmeter-metrics.service keeps in its own runtime directory.
ln -s /run/ifmeter-metrics/ifmeter.prom "$root/var/lib/prometheus/node-exporter/ifmeter.prom"

for page in ifmeter.1:man1 ifmeter.conf.5:man5 ifmeterd.8:man8; do
  gzip -9n < "$top/man/${page%:*}" > "$root/usr/share/man/${page#*:}/${page%:*}.gz"
done
"$bindir/ifmeter" completions bash > "$root/usr/share/bash-completion/completions/ifmeter"
"$bindir/ifmeter" completions zsh > "$root/usr/share/zsh/vendor-completions/_ifmeter"
"$bindir/ifmeter" completions fish > "$root/usr/share/fish/vendor_completions.d/ifmeter.fish"

install -m 0644 "$top/README.md" "$root/usr/share/doc/ifmeter/README.md"
# The design documents the README and the man pages point to.
install -d "$root/usr/share/doc/ifmeter/docs"
install -m 0644 "$top"/docs/*.md "$root/usr/share/doc/ifmeter/docs/"
install -m 0644 "$here/copyright" "$root/usr/share/doc/ifmeter/copyright"
gzip -9n < "$top/CHANGELOG.md" > "$root/usr/share/doc/ifmeter/changelog.gz"
# The Debian changelog: this revision, pointing at the upstream changelog.
{
  echo "ifmeter (${version}-${revision}) unstable; urgency=medium"
  echo
  echo "  * Package of ifmeter ${version}; see /usr/share/doc/ifmeter/changelog.gz."
  echo
  echo " -- the ifmeter authors <ifmeter@example.org>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$root/usr/share/doc/ifmeter/changelog.Debian.gz"

# Depends from the libraries the binaries really link (their NEEDED entries).
mkdir -p "$work/shlibs/debian"
printf 'Source: ifmeter\n\nPackage: ifmeter\nArchitecture: any\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/sbin/ifmeterd" "$root/usr/bin/ifmeter" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build.sh: dpkg-shlibdeps found no dependencies" >&2; exit 70; }

install -m 0755 "$here/postinst" "$here/prerm" "$here/postrm" "$root/DEBIAN/"
echo /etc/ifmeter/ifmeter.conf > "$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|${version}-${revision}|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" -e "s|@DEPENDS@|$depends|" \
  "$here/control.in" > "$root/DEBIAN/control"
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"

find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0 touch --no-dereference --date="@$SOURCE_DATE_EPOCH"
chmod -R u=rwX,go=rX "$root"
mkdir -p "$outdir"
dpkg-deb --root-owner-group -Zxz --build "$root" "$outdir/$package.deb" >/dev/null
echo "$outdir/$package.deb"
