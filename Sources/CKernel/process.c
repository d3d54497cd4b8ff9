// Process-wide settings the daemon's loop needs that Swift cannot call
// directly (prctl is variadic; mallopt is in malloc.h, statfs in sys/vfs.h
// and adjtimex in sys/timex.h, outside Glibc's module).
#define _GNU_SOURCE  // statx
#include "ckernel.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/timex.h>
#include <sys/stat.h>
#include <sys/vfs.h>

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
