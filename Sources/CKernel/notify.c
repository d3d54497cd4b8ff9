// The service manager's notification protocol (sd_notify(3)), written here
// rather than linked from libsystemd: libsystemd brings six libraries and
// most of a megabyte resident for one sendmsg().
#include "ckernel.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One datagram socket for the life of the process, opened at the first
 * notification: the same the daemon's sandbox allows (AF_UNIX). */
static int notify_socket = -1;

int ifm_notify(const char *address, const char *message, size_t length) {
    struct sockaddr_un target;
    memset(&target, 0, sizeof target);
    target.sun_family = AF_UNIX;
    size_t address_length = strlen(address);
    /* "@name" is the abstract name "\0name"; anything else must be a path. */
    if (address[0] != '/' && address[0] != '@') return EAFNOSUPPORT;
    if (address_length < 2 || address_length > sizeof target.sun_path) return EINVAL;
    memcpy(target.sun_path, address, address_length);
    if (address[0] == '@') target.sun_path[0] = '\0';
    socklen_t target_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + address_length);
    /* A path is NUL-terminated when it fits; the length covers it either way. */
    if (address[0] == '/' && address_length < sizeof target.sun_path) target_length++;

    if (notify_socket < 0) {
        notify_socket = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (notify_socket < 0) return errno;
    }
    struct iovec part = { .iov_base = (void *)message, .iov_len = length };
    struct msghdr datagram = {
        .msg_name = &target, .msg_namelen = target_length, .msg_iov = &part, .msg_iovlen = 1,
    };
    ssize_t sent;
    do {
        sent = sendmsg(notify_socket, &datagram, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) return errno;
    return (size_t)sent == length ? 0 : EMSGSIZE;
}
