// Test support: a test playing systemd passing socket descriptors (sd_listen_fds(3)).
#define _GNU_SOURCE
#include "ctesttun.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <unistd.h>

extern char **environ;

int ifm_test_spawn_passing(const char *command, const int *descriptors, int count, const char *output_path) {
    /* dup2 in order would overwrite a source that is another's target. */
    for (int i = 0; i < count; i++) if (descriptors[i] < 3 + count) return -EINVAL;
    posix_spawn_file_actions_t actions;
    int err = posix_spawn_file_actions_init(&actions);
    if (err) return -err;
    for (int i = 0; i < count && !err; i++) err = posix_spawn_file_actions_adddup2(&actions, descriptors[i], 3 + i);
    if (!err) err = posix_spawn_file_actions_addopen(&actions, 1, output_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (!err) err = posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = -1;
    char *const arguments[] = { "sh", "-c", (char *)command, NULL };
    if (!err) err = posix_spawn(&pid, "/bin/sh", &actions, NULL, arguments, environ);
    posix_spawn_file_actions_destroy(&actions);
    return err ? -err : pid;
}

int ifm_test_listen_netlink(unsigned groups, int receive_buffer_bytes) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl address = { .nl_family = AF_NETLINK, .nl_groups = groups };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer_bytes, sizeof receive_buffer_bytes) != 0
        || bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int ifm_test_receive_buffer(int descriptor) {
    int bytes = 0;
    socklen_t length = sizeof bytes;
    return getsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, &length) == 0 ? bytes : -errno;
}
