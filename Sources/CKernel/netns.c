// The identity of the caller's network namespace.
#include "ckernel.h"

#include <errno.h>
#include <sys/socket.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71  /* Linux 5.14 */
#endif

int ifm_netns_cookie(int fd, uint64_t *cookie) {
    socklen_t size = sizeof *cookie;
    if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &size) != 0) return errno;
    return size == sizeof *cookie ? 0 : EINVAL;
}
