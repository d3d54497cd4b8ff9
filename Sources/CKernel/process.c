// Process-wide settings the daemon's loop needs that Swift cannot call
// directly (prctl is variadic).
#include "ckernel.h"

#include <errno.h>
#include <sys/prctl.h>

int ifm_set_timer_slack(uint64_t nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, (unsigned long)nanoseconds, 0, 0, 0) == 0 ? 0 : errno;
}
