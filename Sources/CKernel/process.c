// Process-wide settings the daemon's loop needs that Swift cannot call
// directly (prctl is variadic; mallopt is in malloc.h, outside Glibc's
// module).
#include "ckernel.h"

#include <errno.h>
#include <malloc.h>
#include <sys/prctl.h>

int ifm_set_timer_slack(uint64_t nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, (unsigned long)nanoseconds, 0, 0, 0) == 0 ? 0 : errno;
}

int ifm_set_heap_trim_threshold(int bytes) {
    return mallopt(M_TRIM_THRESHOLD, bytes) == 1 ? 0 : -1;
}
