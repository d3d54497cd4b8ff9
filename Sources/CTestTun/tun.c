#define _GNU_SOURCE
#include "ctesttun.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/if.h>
#include <linux/if_tun.h>

int ifm_test_tun_open(const char *name, int tap, int persist) {
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct ifreq request;
    memset(&request, 0, sizeof request);
    request.ifr_flags = (tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI;
    strncpy(request.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &request) < 0 ||
        (persist && ioctl(fd, TUNSETPERSIST, 1) < 0)) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int ifm_test_tun_set_persist(int fd, int persist) {
    return ioctl(fd, TUNSETPERSIST, persist) < 0 ? -errno : 0;
}

#include <sched.h>

int ifm_test_enter_network_namespace(int fd) {
    return setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
}
