// Test support: tun/tap creation, which needs the variadic ioctl(2).
#ifndef IFMETER_CTESTTUN_H
#define IFMETER_CTESTTUN_H

/* Opens /dev/net/tun and attaches it to the device `name` (created when
 * missing), layer 3 without packet info (IFF_TUN|IFF_NO_PI), or layer 2
 * when tap is non-zero. persist non-zero makes the device outlive the fd.
 * Returns the fd, or -errno. */
int ifm_test_tun_open(const char *name, int tap, int persist);

/* Clears persistence on an open tun fd, so closing it deletes the device. */
int ifm_test_tun_set_persist(int fd, int persist);



/* Test support for the descriptors systemd passes (sd_listen_fds(3)), played by a test. */

/* Runs /bin/sh -c command with descriptors[0..count) as its fds 3, 4, ...
 * and stdout and stderr appended to output_path, as systemd passes a
 * socket unit's and kept descriptors. Returns the pid, or -errno. */
int ifm_test_spawn_passing(const char *command, const int *descriptors, int count, const char *output_path);

/* A route netlink socket as systemd opens a socket unit's ListenNetlink=route
 * GROUPS with ReceiveBuffer=BYTES: bound to the multicast groups, its buffer
 * forced (SO_RCVBUFFORCE, past net.core.rmem_max). Returns the descriptor
 * (close-on-exec) or -errno. */
int ifm_test_listen_netlink(unsigned groups, int receive_buffer_bytes);

/* What SO_RCVBUF reads on descriptor (twice what was granted), or -errno. */
int ifm_test_receive_buffer(int descriptor);

/* setns(2) for a network namespace (glibc declares it only with _GNU_SOURCE).
 * Returns 0 or -errno. */
int ifm_test_enter_network_namespace(int fd);
#endif
