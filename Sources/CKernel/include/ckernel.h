// The only code in ifmeter that touches libnl-route-3 and getifaddrs.
// Everything crosses into Swift as plain structs: no libnl object, no
// callback, no pointer into kernel memory outlives a call.
#ifndef IFMETER_CKERNEL_H
#define IFMETER_CKERNEL_H

#include <stddef.h>
#include <stdint.h>

#define IFM_NAME_SIZE 16  /* IFNAMSIZ */
#define IFM_KIND_SIZE 32

typedef struct ifm_counters {
    uint64_t rx_bytes, tx_bytes;
    uint64_t rx_packets, tx_packets;
    uint64_t rx_errors, tx_errors;
    uint64_t rx_dropped, tx_dropped;
} ifm_counters;

typedef struct ifm_link {
    int32_t ifindex;
    uint32_t flags;        /* IFF_* */
    uint16_t arptype;      /* ARPHRD_* */
    uint8_t operstate;     /* IF_OPER_* */
    char name[IFM_NAME_SIZE];
    char kind[IFM_KIND_SIZE]; /* IFLA_INFO_KIND, "" when the driver sets none */
    ifm_counters counters;
} ifm_link;

/* A growable array owned by the caller; reused across calls to avoid
 * allocating on every sample. Free with ifm_link_list_free. */
typedef struct ifm_link_list {
    ifm_link *links;
    size_t count;
    size_t capacity;
} ifm_link_list;

void ifm_link_list_free(ifm_link_list *list);

/* Error codes are libnl's (positive NLE_* values) unless said otherwise. */

/* The kernel ended a dump with an error in NLMSG_DONE: links may be missing. */
#define IFM_DUMP_INCOMPLETE 1000
/* A statistics message without the 64-bit counters it was asked for. */
#define IFM_STATS_MALFORMED 1001
const char *ifm_netlink_error_string(int code);

/* ---- Link dump over rtnetlink (IFLA_STATS64, 64-bit counters) ---- */

typedef struct ifm_netlink ifm_netlink;

/* Opens a NETLINK_ROUTE socket for dumps; NULL with *error set on failure. */
ifm_netlink *ifm_netlink_open(int *error);
void ifm_netlink_close(ifm_netlink *handle);
/* Replaces list's contents with every link of the caller's namespace.
 * Returns 0 or an error code (libnl's, or IFM_DUMP_INCOMPLETE): a dump
 * that may be missing links is never returned as complete. A dump the
 * kernel flags interrupted (links changed while it was filled) is run
 * again, up to five times, then fails with NLE_DUMP_INTR. */
int ifm_netlink_dump(ifm_netlink *handle, ifm_link_list *list);
/* The same for counters alone (RTM_GETSTATS, IFLA_STATS_LINK_64): each
 * entry has its ifindex and counters; name, kind, flags, operstate and
 * arptype are zero. Same guarantees as ifm_netlink_dump (a dump the kernel
 * ended with an error, or cut short, is never returned as complete). */
int ifm_netlink_stats(ifm_netlink *handle, ifm_link_list *list);
/* How many dumps were run again because the kernel flagged them
 * interrupted (tests). */
unsigned long ifm_netlink_interrupted_dumps(const ifm_netlink *handle);

/* ---- Link events (RTNLGRP_LINK) ---- */

enum {
    IFM_LINK_NEW = 1,  /* RTM_NEWLINK: created or changed */
    IFM_LINK_DEL = 2,  /* RTM_DELLINK: deleted, or moved to another namespace */
};

typedef struct ifm_link_event {
    int32_t type;      /* IFM_LINK_NEW or IFM_LINK_DEL */
    int32_t moved;     /* DELLINK carrying IFLA_NEW_NETNSID or IFLA_NEW_IFINDEX */
    ifm_link link;     /* the message's own counters */
} ifm_link_event;

typedef struct ifm_event_list {
    ifm_link_event *events;
    size_t count;
    size_t capacity;
} ifm_event_list;

void ifm_event_list_free(ifm_event_list *list);

typedef struct ifm_events ifm_events;

/* Subscribes to link events on a non-blocking socket whose kernel receive
 * buffer is receive_buffer_bytes (0 keeps the default). */
ifm_events *ifm_events_open(int receive_buffer_bytes, int *error);
/* The same on fd, an event socket this process was handed (the service
 * manager kept it across a restart: the events queued in it while no
 * process read them are still there). Refused (NLE_BAD_SOCK) unless fd is
 * a NETLINK_ROUTE socket of the caller's network namespace. Takes fd:
 * closed on failure, by ifm_events_close otherwise. */
ifm_events *ifm_events_adopt(int fd, int receive_buffer_bytes, int *error);
void ifm_events_close(ifm_events *handle);
int ifm_events_fd(const ifm_events *handle);

/* The receive buffer the kernel granted, in the bytes a request is given
 * in (less than asked without CAP_NET_ADMIN: net.core.rmem_max caps it);
 * -1 if it cannot be read. */
int ifm_events_receive_buffer(const ifm_events *handle);

/* Appends pending events to list without blocking, at most a few thousand
 * per call (call again while the descriptor is readable). Sets *overrun when
 * the kernel dropped messages because the receive buffer was full: its drop
 * count moved past the one last seen (or, where NETLINK_NO_ENOBUFS could
 * not be set, a read failed with ENOBUFS): events were lost and the caller
 * must re-dump. Returns 0 or a libnl error. */
int ifm_events_read(ifm_events *handle, ifm_event_list *list, int *overrun);

/* The socket's identity within a boot (its cookie, 0 if unknown) and the kernel's
 * count of messages it dropped, as the last read saw it. A socket kept
 * across processes carries its count with it: a process taking one over
 * says which count the last reader saw (ifm_events_set_seen_drops, 0 when
 * unknown), so that drops while no process read it count as an overrun. */
uint64_t ifm_events_identity(const ifm_events *handle);
uint32_t ifm_events_seen_drops(const ifm_events *handle);
void ifm_events_set_seen_drops(ifm_events *handle, uint32_t drops);

/* The most events one ifm_events_read call returns: a bound, so a steady
 * stream of events cannot keep the caller's loop from its other work; the
 * socket stays readable and the caller comes back for the rest. */
enum { IFM_EVENTS_PER_READ = 4096 };

/* ---- Network namespace identity ---- */

/* The netns cookie of the namespace socket fd lives in (SO_NETNS_COOKIE,
 * Linux 5.14+): unique within a boot and never reused, unlike the nsfs
 * inode. Returns 0 or an errno value (ENOPROTOOPT on older kernels). */
int ifm_netns_cookie(int fd, uint64_t *cookie);

/* How late the kernel may fire this process's timers (poll timeouts
 * included), so its wakeups coalesce with others'. Returns 0 or errno. */
int ifm_set_timer_slack(uint64_t nanoseconds);
/* How much free memory the C heap keeps at its top before handing it back
 * (mallopt M_TRIM_THRESHOLD); 0, or -1 if refused. */
int ifm_set_heap_trim_threshold(int bytes);

/* Whether the kernel counts its clock synchronised (adjtimex(2) read-only: STA_UNSYNC clear), as
 * timesyncd, chrony and ntpd leave it once they set the clock: 1 or 0, or -1 with errno set. */
int ifm_clock_is_synchronized(void);

/* Whether the file open at fd is on a tmpfs (fstatfs(2), which Swift's
 * Glibc module does not reach): 1 or 0, or -1 with errno set. */
int ifm_is_tmpfs(int fd);
/* Whether the file open at fd is the root of a mount, a bind mount of a
 * file included (statx's STATX_ATTR_MOUNT_ROOT, Linux 5.8+; comparing
 * st_dev with the parent's cannot tell on overlayfs, where a file reports
 * its layer's device): 1 or 0, or -1 with errno set. */
int ifm_is_mount_root(int fd);

/* ---- Child processes (the PNG renderer) ---- */

/* An anonymous file (memfd_create(2), close-on-exec) to hand a child as
 * standard input or output: no pipe to deadlock on, no file on disk.
 * Returns the descriptor, or -1 with errno set. */
int ifm_anonymous_file(const char *name);
/* Runs the program at path (no shell, no PATH search) with `arguments`,
 * `count` NUL-terminated strings laid end to end (argv[0] first), this
 * process's environment, and input, output and errors on its descriptors
 * 0, 1 and 2; waits for it. Returns 0 with *status as waitpid(2) gives it,
 * or an errno value (posix_spawn's, or E2BIG for more than 64 arguments). */
int ifm_spawn_and_wait(const char *path, const char *arguments, int count, int input, int output, int errors, int *status);

/* ---- Service manager notification (sd_notify(3)) ---- */

/* Sends message as one datagram to address, $NOTIFY_SOCKET's value: a path,
 * or "@name" for an abstract socket. Returns 0 or an errno value. */
int ifm_notify(const char *address, const char *message, size_t length);

/* ---- getifaddrs (32-bit IFLA_STATS copies; every counter wraps at 2^32) ---- */

/* Replaces list's contents with one entry per link getifaddrs reports,
 * including links without a hardware address (ifa_addr == NULL: tun,
 * WireGuard, raw-IP modems). kind is empty: getifaddrs does not report it.
 * Returns 0 or an errno value. */
int ifm_ifaddrs_dump(ifm_link_list *list);

#endif
