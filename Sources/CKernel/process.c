// Process-wide settings the daemon's loop needs that Swift cannot call
// directly (prctl is variadic; mallopt is in malloc.h, statfs in sys/vfs.h
// and adjtimex in sys/timex.h, outside Glibc's module), and the PNG
// renderer's spawn, whose argument vector is built here so Swift hands over one buffer.
#define _GNU_SOURCE  // statx
#include "ckernel.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/timex.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/mman.h>
#include <sys/wait.h>

int ifm_set_timer_slack(uint64_t nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, (unsigned long)nanoseconds, 0, 0, 0) == 0 ? 0 : errno;
}

int ifm_set_heap_trim_threshold(int bytes) {
    return mallopt(M_TRIM_THRESHOLD, bytes) == 1 ? 0 : -1;
}

int ifm_clock_is_synchronized(void) {
    struct timex state = {0};
    if (adjtimex(&state) < 0) return -1;
    return (state.status & STA_UNSYNC) == 0;
}

int ifm_is_tmpfs(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return info.f_type == TMPFS_MAGIC;
}

int ifm_is_mount_root(int fd) {
    struct statx info;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &info) != 0) return -1;
    if (!(info.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
        errno = ENOTSUP;
        return -1;
    }
    return (info.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

int ifm_anonymous_file(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}

extern char **environ;

int ifm_spawn_and_wait(const char *path, const char *arguments, int count, int input, int output, int errors, int *status) {
    char *argv[65];
    if (count < 1 || count > 64) return E2BIG;
    for (int i = 0; i < count; i++) {
        argv[i] = (char *)arguments;
        arguments += strlen(arguments) + 1;
    }
    argv[count] = NULL;
    posix_spawn_file_actions_t actions;
    int err = posix_spawn_file_actions_init(&actions);
    if (err) return err;
    // dup2 clears close-on-exec on the copies: only these three reach the child.
    if (!err) err = posix_spawn_file_actions_adddup2(&actions, input, 0);
    if (!err) err = posix_spawn_file_actions_adddup2(&actions, output, 1);
    if (!err) err = posix_spawn_file_actions_adddup2(&actions, errors, 2);
    pid_t pid = 0;
    if (!err) err = posix_spawn(&pid, path, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err) return err;
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) return errno;
    }
    return 0;
}
