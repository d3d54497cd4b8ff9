#!/usr/bin/env bash
# Builds the guest the real-kernel lane boots (shared/design/VM.md): Debian
# 12 by debootstrap, its kernel unpacked to a vmlinux for qemu's PVH entry, a
# small initramfs (static busybox, the modules to reach the root disk and the
# 9p share) and the root as an ext4 image. Root; about two minutes.
#
#   build-guest.sh DIR     leaves DIR/{vmlinux,initrd.cpio,root.img}
set -euo pipefail
out=${1:?usage: build-guest.sh DIR}
packages=linux-image-amd64,kmod,busybox-static,iproute2,iw,hostapd,wpasupplicant,wireguard-tools,libnl-3-200,libnl-route-3-200,libsqlite3-0,zlib1g,iputils-ping
# The mirror apt already uses, so the lane needs no other network access.
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p; s/^deb  *\(http[^ ]*\/debian\)\/* .*/\1/p' \
  /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /var/tmp/ifmeter-vm-build.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
  || { tail -5 "$work/debootstrap.log" >&2; echo "build-guest.sh: debootstrap from $mirror failed" >&2; exit 1; }
kernel=$(ls "$root"/lib/modules)
[ "$(echo "$kernel" | wc -w)" = 1 ] || { echo "build-guest.sh: expected one kernel, found: $kernel" >&2; exit 1; }

# vmlinuz is a bzImage around an XZ stream: the stream alone is the ELF vmlinux.
vmlinuz=$root/boot/vmlinuz-$kernel
offset=$(LC_ALL=C grep -m 1 -obUaP '\xfd7zXZ\x00' "$vmlinuz" | awk -F: 'NR == 1 { print $1 }')
tail -c +$((offset + 1)) "$vmlinuz" > "$work/vmlinux.xz"
xz -dc --single-stream "$work/vmlinux.xz" > "$work/vmlinux"
[ "$(head -c 4 "$work/vmlinux" | od -An -c | tr -d ' ')" = 177ELF ] || { echo "build-guest.sh: no ELF in $vmlinuz's XZ payload" >&2; exit 1; }

# Trimmed: documentation, locales, apt's caches, driver trees no test loads.
rm -rf "$root"/usr/share/doc "$root"/usr/share/man "$root"/usr/share/locale "$root"/usr/share/info \
  "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/boot/initrd.img-* "$root"/boot/vmlinuz-*
drivers=$root/lib/modules/$kernel/kernel/drivers
for tree in gpu media infiniband scsi staging net/ethernet net/wireless/intel net/wireless/realtek \
  net/wireless/mediatek net/wireless/ath net/wireless/broadcom sound hid input iio isdn md; do
  rm -rf "${drivers:?}/$tree"
done
rm -rf "$root"/lib/modules/"$kernel"/kernel/sound "$root"/lib/firmware
chroot "$root" depmod "$kernel"
mkdir -p "$root"/mnt/vm "$root"/mnt/disk

# The initramfs: busybox, the modules in load order, and an init that mounts
# the root read-only and the share, then hands over to the lane's init.
initrd=$work/initrd
mkdir -p "$initrd"/bin "$initrd"/modules "$initrd"/newroot "$initrd"/proc "$initrd"/sys "$initrd"/dev
cp "$root"/bin/busybox "$initrd"/bin/busybox
chroot "$root" modprobe --show-depends -S "$kernel" -a virtio_pci virtio_blk ext4 9p 9pnet_virtio \
  | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$work/modules"
: > "$initrd"/modules/order
while read -r module; do
  cp "$root$module" "$initrd"/modules/
  basename "$module" >> "$initrd"/modules/order
done < "$work/modules"
cat > "$initrd"/init <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
# crc32c-intel finds no SSE4.2 under TCG; crc32c_generic stands in.
while read -r module; do /bin/busybox insmod /modules/$module 2>/dev/null; done < /modules/order
/bin/busybox mount -o ro /dev/vda /newroot || { echo "initrd: cannot mount the root disk"; /bin/busybox sleep 3600; }
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 vm /newroot/mnt/vm || echo "initrd: no 9p share"
/bin/busybox umount /proc
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /bin/sh /mnt/vm/guest/init.sh
EOF
chmod 0755 "$initrd"/init
(cd "$initrd" && find . | cpio -o -H newc --quiet) > "$work/initrd.cpio"

size=$(( $(du -sm "$root" | cut -f1) + 64 ))
truncate -s "${size}M" "$work/root.img"
mkfs.ext4 -q -F -L ifmeter-vm -d "$root" "$work/root.img"
mkdir -p "$out"
mv "$work/vmlinux" "$work/initrd.cpio" "$work/root.img" "$out/"
