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



/* setns(2) for a network namespace (glibc declares it only with _GNU_SOURCE).
 * Returns 0 or -errno. */
int ifm_test_enter_network_namespace(int fd);
#endif
