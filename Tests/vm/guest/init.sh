#!/bin/sh
# PID 1 of the guest, started by the initramfs with the root read-only and
# the share on /mnt/vm: mounts the rest, runs this boot's tests under a
# timeout, then powers off. No set -e: PID 1 must reach the power-off
# whatever fails, and never exit (the kernel panics).
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=0755 run /run
mkdir -p /dev/pts /dev/shm /dev/net
mount -t devpts devpts /dev/pts
ip link set lo up
# The persistent disk of this run: the same image on every boot.
mount -t ext4 /dev/vdb /mnt/disk || echo "guest: cannot mount the persistent disk /dev/vdb"
set -a
. /mnt/vm/plan
set +a
timeout -s KILL "$GUEST_TIMEOUT" sh /mnt/vm/guest/run-tests.sh
[ $? = 137 ] && echo "note: the tests were killed after $GUEST_TIMEOUT s" >> /mnt/vm/results
umount /mnt/disk 2>/dev/null
sync
echo o > /proc/sysrq-trigger
while :; do sleep 60; done
