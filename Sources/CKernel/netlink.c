// rtnetlink link dumps and link events through libnl-route-3.
//
// Both paths parse each message themselves (nl_msg_parse) rather than use
// libnl's cache manager: its delete callback hands back the stale cached
// object, while the DELLINK message itself carries the final counters.
//
// Dumps are received with nl_recv and their datagrams walked in place
// (receive_dump) rather than through nl_recvmsgs, which copies every
// message into a newly allocated nl_msg before its callback sees it. The
// statistics dump reads each message where it lies; only link messages are
// copied, for libnl-route's parser. Measured (2026-12-01, `ifmeterd
// --benchmark-samples` in one namespace, builds alternating, five rounds,
// medians): 4,000 links 1.10 -> 0.85 us a link per sample pass, 1,000
// links 0.79 -> 0.67.
//
// Parsing with nlmsg_parse and a policy of the six attributes read, instead
// of into rtnl_link objects, was measured (issue 15, two side-by-side runs
// under a churn of 1,600 link events a minute): 0.91x and 0.98x the CPU,
// 0.25 MiB more resident in both. Then the whole event path by hand
// (2026-12-01: recvmmsg, 16 datagrams a call into slots kept across reads,
// and that parse; two daemons side by side under the bench's "churn seen by
// every daemon", nine 120 s runs, order alternated): CPU 0.90, 0.91, 0.92,
// 1.01, 0.98, 0.92, 1.02, 0.91, 0.94, median 0.92x; peak RSS +68 KiB
// (median); syscalls 33 -> 8 a second; 26 queued events read in a C loop,
// 2.6 us an event against 1.1 (0.6 of it the kernel's own receive). The
// event read is about an eighth of the daemon's CPU under that churn, so
// hand-written parsing and reading saves under a tenth of it: not worth
// 180 lines of C in place of libnl-route's parser.
#include "ckernel.h"
#include "lists.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>

/* Large enough for any dump datagram (the kernel builds them at most about
 * 32 KiB plus one link's message): with MSG_PEEK disabled libnl reads into
 * a buffer of this size, one syscall per datagram. A larger datagram (about
 * a link with huge attributes) is never taken cut short: libnl fails the
 * read with NLE_MSG_TRUNC; a dump is then run again on a fresh socket with
 * a buffer twice as large, and the event reader reports the loss as an
 * overrun, on which the daemon re-dumps. */
enum { MESSAGE_BUFFER_BYTES = 64 * 1024 };
/* The largest a receive buffer grows to after truncated reads. */
enum { MAX_MESSAGE_BUFFER_BYTES = 4 << 20 };

const char *ifm_netlink_error_string(int code) {
    if (code == IFM_DUMP_INCOMPLETE)
        return "the kernel ended the link dump with an error: the dump is incomplete and was discarded";
    if (code == IFM_STATS_MALFORMED)
        return "a statistics message lacks a complete IFLA_STATS_LINK_64";
    return nl_geterror(code);
}

static void copy_link(struct rtnl_link *link, ifm_link *out) {
    out->ifindex = rtnl_link_get_ifindex(link);
    out->flags = rtnl_link_get_flags(link);
    out->arptype = (uint16_t)rtnl_link_get_arptype(link);
    out->operstate = rtnl_link_get_operstate(link);
    const char *name = rtnl_link_get_name(link);
    if (name) strncpy(out->name, name, IFM_NAME_SIZE - 1);
    const char *kind = rtnl_link_get_type(link);
    if (kind) strncpy(out->kind, kind, IFM_KIND_SIZE - 1);
    /* libnl stores IFLA_STATS64 over IFLA_STATS when both are present. */
    ifm_counters *c = &out->counters;
    c->rx_bytes = rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES);
    c->tx_bytes = rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES);
    c->rx_packets = rtnl_link_get_stat(link, RTNL_LINK_RX_PACKETS);
    c->tx_packets = rtnl_link_get_stat(link, RTNL_LINK_TX_PACKETS);
    c->rx_errors = rtnl_link_get_stat(link, RTNL_LINK_RX_ERRORS);
    c->tx_errors = rtnl_link_get_stat(link, RTNL_LINK_TX_ERRORS);
    c->rx_dropped = rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED);
    c->tx_dropped = rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED);
}

/* Bridge-port (AF_BRIDGE) messages arrive on the same group without
 * statistics: only AF_UNSPEC messages describe the link itself. */
static int is_link_message(struct nlmsghdr *header) {
    if (header->nlmsg_type != RTM_NEWLINK && header->nlmsg_type != RTM_DELLINK) return 0;
    if (!nlmsg_valid_hdr(header, sizeof(struct ifinfomsg))) return 0;
    const struct ifinfomsg *info = nlmsg_data(header);
    return info->ifi_family == AF_UNSPEC;
}

struct parse_target {
    ifm_link *slot;
};

static void on_parsed_link(struct nl_object *object, void *arg) {
    struct parse_target *target = arg;
    copy_link((struct rtnl_link *)object, target->slot);
}

/* Parses one link message into slot; returns 0 or a libnl error. */
static int parse_link(struct nl_msg *message, ifm_link *slot) {
    struct parse_target target = { slot };
    return nl_msg_parse(message, on_parsed_link, &target);
}

/* A connected NETLINK_ROUTE socket whose valid messages go to callback
 * (if any: the dump socket's datagrams are walked by receive_dump): a new
 * one, or `adopted` (>= 0), one already bound that this process was handed.
 * MSG_PEEK is off (libnl 3.7 peeks by default: two syscalls per read). */
static struct nl_sock *open_route_socket(nl_recvmsg_msg_cb_t callback, void *arg, int adopted, int *error) {
    struct nl_sock *sock = nl_socket_alloc();
    if (!sock) {
        if (adopted >= 0) close(adopted);
        *error = NLE_NOMEM;
        return NULL;
    }
    if (callback) nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, callback, arg);
    int err = adopted >= 0 ? nl_socket_set_fd(sock, NETLINK_ROUTE, adopted) : nl_connect(sock, NETLINK_ROUTE);
    if (err < 0) {
        /* libnl closes an adopted descriptor only once it took it. */
        if (adopted >= 0) close(adopted);
        nl_socket_free(sock);
        *error = -err;
        return NULL;
    }
    nl_socket_disable_msg_peek(sock);
    nl_socket_set_msg_buf_size(sock, MESSAGE_BUFFER_BYTES);
    /* A dump's answer ends at its DONE or an error message: no NLM_F_ACK is
     * asked for, so receive_dump never waits on an acknowledgement. */
    nl_socket_disable_auto_ack(sock);
    return sock;
}

/* ---- Dump ---- */

struct ifm_netlink {
    struct nl_sock *sock;
    size_t buffer_bytes;  /* receive buffer, doubled after a MSG_TRUNC */
    int request;          /* RTM_GETLINK or RTM_GETSTATS: what is being dumped */
    ifm_link_list *list;  /* the list being filled by the current dump */
    int interrupted;      /* the kernel flagged the current dump NLM_F_DUMP_INTR */
    int answered;         /* the current request's answer was read to its end */
    unsigned long interrupted_dumps;  /* dumps run again for NLM_F_DUMP_INTR */
};

/* The first eight fields of rtnl_link_stats64, the ones ifmeter counts:
 * the struct has grown at its end over kernel versions, never in front. */
enum { COUNTED_STATS_BYTES = 8 * sizeof(uint64_t) };

/* One RTM_NEWSTATS message into slot: ifindex and counters only. */
static int parse_stats(struct nlmsghdr *header, ifm_link *slot) {
    const struct if_stats_msg *info = nlmsg_data(header);
    struct nlattr *attribute = nlmsg_find_attr(header, sizeof *info, IFLA_STATS_LINK_64);
    if (!attribute || nla_len(attribute) < (int)COUNTED_STATS_BYTES) return IFM_STATS_MALFORMED;
    struct rtnl_link_stats64 stats;
    memset(&stats, 0, sizeof stats);
    size_t length = (size_t)nla_len(attribute);
    memcpy(&stats, nla_data(attribute), length < sizeof stats ? length : sizeof stats);
    slot->ifindex = (int32_t)info->ifindex;
    ifm_counters *c = &slot->counters;
    c->rx_bytes = stats.rx_bytes;
    c->tx_bytes = stats.tx_bytes;
    c->rx_packets = stats.rx_packets;
    c->tx_packets = stats.tx_packets;
    c->rx_errors = stats.rx_errors;
    c->tx_errors = stats.tx_errors;
    c->rx_dropped = stats.rx_dropped;
    c->tx_dropped = stats.tx_dropped;
    return 0;
}

static int is_stats_message(struct nlmsghdr *header) {
    if (header->nlmsg_type != RTM_NEWSTATS) return 0;
    if (!nlmsg_valid_hdr(header, sizeof(struct if_stats_msg))) return 0;
    const struct if_stats_msg *info = nlmsg_data(header);
    return info->family == AF_UNSPEC;
}

/* One data message of a dump into the next slot of handle->list: 0, or an
 * error code. A statistics message is read in place; a link message goes
 * through libnl-route's parser, which wants it as an nl_msg. */
static int take_link_message(ifm_netlink *handle, struct nlmsghdr *header) {
    int wanted = handle->request == RTM_GETSTATS ? is_stats_message(header) : is_link_message(header);
    if (!wanted) return 0;
    ifm_link *slot = ifm_link_list_append(handle->list);
    if (!slot) return NLE_NOMEM;
    int err;
    if (handle->request == RTM_GETSTATS) {
        err = parse_stats(header, slot);
    } else {
        struct nl_msg *message = nlmsg_convert(header);
        if (!message) {
            err = NLE_NOMEM;
        } else {
            nlmsg_set_proto(message, NETLINK_ROUTE);
            err = -parse_link(message, slot);
            nlmsg_free(message);
        }
    }
    if (err) handle->list->count--;
    return err;
}

/* One message of the answer to the dump request numbered `sequence`: 0 to
 * read on, else an error code; handle->answered once the answer's last
 * message (DONE, or an error) is read. The checks are nl_recvmsgs' own,
 * but a message of an earlier request (another sequence number) is passed
 * over instead of failing this one. */
static int take_dump_message(ifm_netlink *handle, struct nlmsghdr *header, uint32_t sequence) {
    if (header->nlmsg_seq != sequence) return 0;
    /* The links changed while the kernel was dumping them: what was read
     * may miss one or hold one twice. The rest is still read, to its end. */
    if (header->nlmsg_flags & NLM_F_DUMP_INTR) handle->interrupted = 1;
    switch (header->nlmsg_type) {
    case NLMSG_DONE:
        handle->answered = 1;
        /* DONE carries the dump's final status, which libnl ignores: a
         * dump the kernel ended with an error must not pass as complete,
         * or a missing link would read as a deleted one. (A link too large
         * for the dump buffer is not reported here, see link_request.) */
        if (header->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
            int status;
            memcpy(&status, nlmsg_data(header), sizeof status);
            if (status < 0) return IFM_DUMP_INCOMPLETE;
        }
        return handle->interrupted ? NLE_DUMP_INTR : 0;
    case NLMSG_ERROR: {
        handle->answered = 1;
        if (!nlmsg_valid_hdr(header, sizeof(struct nlmsgerr))) return IFM_DUMP_INCOMPLETE;
        const struct nlmsgerr *failure = nlmsg_data(header);
        /* No acknowledgement is asked for: an error message, even one
         * reporting success, ends the request without its DONE. */
        return failure->error ? nl_syserr2nlerr(failure->error) : IFM_DUMP_INCOMPLETE;
    }
    case NLMSG_OVERRUN:
        return NLE_MSG_OVERFLOW;
    case NLMSG_NOOP:
        return 0;
    default:
        return take_link_message(handle, header);
    }
}

/* Reads the answer to the dump request numbered `sequence` datagram by
 * datagram, walking each in place, until its end or the first error.
 * nl_recvmsgs would first copy every message into a newly allocated nl_msg
 * (two allocations, a copy and two frees per link): at 4,000 links that was
 * a third of the statistics pass (see the note at the top). */
static int receive_dump(ifm_netlink *handle, uint32_t sequence) {
    int err = 0;
    while (!err && !handle->answered) {
        struct sockaddr_nl peer;
        unsigned char *datagram = NULL;
        int length = nl_recv(handle->sock, &peer, &datagram, NULL);
        if (length < 0) return -length;
        /* Empty, or not from the kernel (only the kernel answers a dump):
         * not read. nl_recv keeps no buffer when it returns 0. */
        if (length == 0) continue;
        if (peer.nl_pid == 0) {
            struct nlmsghdr *header = (struct nlmsghdr *)datagram;
            for (; !err && !handle->answered && nlmsg_ok(header, length); header = nlmsg_next(header, &length))
                err = take_dump_message(handle, header, sequence);
        }
        free(datagram);
    }
    return err;
}

ifm_netlink *ifm_netlink_open(int *error) {
    ifm_netlink *handle = calloc(1, sizeof *handle);
    if (!handle) { *error = NLE_NOMEM; return NULL; }
    handle->sock = open_route_socket(NULL, NULL, -1, error);
    if (!handle->sock) { free(handle); return NULL; }
    handle->buffer_bytes = MESSAGE_BUFFER_BYTES;
    return handle;
}

void ifm_netlink_close(ifm_netlink *handle) {
    if (!handle) return;
    nl_socket_free(handle->sock);
    free(handle);
}

/* The kernel sizes each dump datagram for the largest link's message only
 * when the request carries a nonzero IFLA_EXT_MASK (rtnl_calcit); without
 * it a link whose message exceeds about 32 KiB (hundreds of long altnames)
 * ends the dump right there, with a DONE that reports success: that link
 * and every later one silently missing. iproute2 always sends the mask,
 * which is why `ip link` still lists them. RTEXT_FILTER_BRVLAN_COMPRESSED
 * only shapes bridge VLAN data of AF_BRIDGE dumps: for this AF_UNSPEC dump
 * it changes nothing but the buffer size. */
static int link_request(struct nl_msg *request) {
    struct ifinfomsg header = { .ifi_family = AF_UNSPEC };
    int err = nlmsg_append(request, &header, sizeof header, NLMSG_ALIGNTO);
    if (err >= 0) err = nla_put_u32(request, IFLA_EXT_MASK, RTEXT_FILTER_BRVLAN_COMPRESSED);
    return err;
}

/* RTM_GETSTATS asking for IFLA_STATS_LINK_64 alone: the kernel fills about
 * 200 bytes per link instead of RTM_GETLINK's kilobyte and more (devconf
 * arrays, qdisc, link info), from the same dev_get_stats() call. */
static int stats_request(struct nl_msg *request) {
    struct if_stats_msg header = { .family = AF_UNSPEC, .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) };
    return nlmsg_append(request, &header, sizeof header, NLMSG_ALIGNTO);
}

static int dump_once(ifm_netlink *handle) {
    struct nl_msg *request = nlmsg_alloc_simple(handle->request, NLM_F_DUMP);
    if (!request) return NLE_NOMEM;
    int err = handle->request == RTM_GETSTATS ? stats_request(request) : link_request(request);
    if (err >= 0) err = nl_send_auto(handle->sock, request);
    /* Numbered by nl_send_auto. */
    uint32_t sequence = nlmsg_hdr(request)->nlmsg_seq;
    nlmsg_free(request);
    if (err < 0) return -err;
    return receive_dump(handle, sequence);
}

/* How many times a dump the kernel flags interrupted is run again at once
 * before the error is reported: links created or deleted while a dump of
 * several datagrams is filled interrupt it, so under link churn, or at
 * boot while links are being set up, a single attempt often fails (a test
 * churning links beside 400 others saw a fifth of them fail). */
enum { DUMP_ATTEMPTS = 5 };

static int dump(ifm_netlink *handle, int request, ifm_link_list *list) {
    handle->request = request;
    int attempts = 0;
    for (;;) {
        list->count = 0;
        handle->list = list;
        handle->interrupted = 0;
        handle->answered = 0;
        int err = dump_once(handle);
        handle->list = NULL;
        if (err == NLE_DUMP_INTR && ++attempts < DUMP_ATTEMPTS) {
            handle->interrupted_dumps++;
            continue;
        }
        if (!err || handle->answered) return err;
        /* The answer was left part-read: the kernel keeps that dump going
         * on the socket and refuses another request there (EBUSY) until it
         * has been read to its end. The socket is replaced instead. After
         * a datagram larger than the buffer (never taken cut short: libnl
         * fails the read, MSG_TRUNC) the new one reads into a buffer twice
         * as large, and the dump is run again. */
        int larger = err == NLE_MSG_TRUNC && handle->buffer_bytes < MAX_MESSAGE_BUFFER_BYTES;
        int open_error = 0;
        struct nl_sock *fresh = open_route_socket(NULL, NULL, -1, &open_error);
        if (!fresh) return err;
        nl_socket_free(handle->sock);
        handle->sock = fresh;
        if (larger) handle->buffer_bytes *= 2;
        nl_socket_set_msg_buf_size(handle->sock, handle->buffer_bytes);
        if (!larger) return err;
    }
}

unsigned long ifm_netlink_interrupted_dumps(const ifm_netlink *handle) {
    return handle->interrupted_dumps;
}

int ifm_netlink_dump(ifm_netlink *handle, ifm_link_list *list) {
    return dump(handle, RTM_GETLINK, list);
}

int ifm_netlink_stats(ifm_netlink *handle, ifm_link_list *list) {
    return dump(handle, RTM_GETSTATS, list);
}

/* ---- Events ---- */

struct ifm_events {
    struct nl_sock *sock;
    size_t buffer_bytes;
    ifm_event_list *list;
    int error;
    int counts_drops;     /* NETLINK_NO_ENOBUFS is set: overruns show as drops */
    uint32_t seen_drops;  /* the kernel's drop count at the last read */
};

/* The kernel's count of messages the socket dropped for want of room
 * (SO_MEMINFO, Linux 4.12+). netlink_overrun counts every one, whether or
 * not it also reports ENOBUFS. */
static int socket_drops(int fd, uint32_t *drops) {
    uint32_t info[SK_MEMINFO_VARS] = {0};
    socklen_t length = sizeof info;
    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &length) != 0 || length <= SK_MEMINFO_DROPS * sizeof info[0]) return -1;
    *drops = info[SK_MEMINFO_DROPS];
    return 0;
}

static int on_event_message(struct nl_msg *message, void *arg) {
    struct ifm_events *handle = arg;
    struct nlmsghdr *header = nlmsg_hdr(message);
    if (!is_link_message(header)) return NL_OK;
    ifm_link_event *event = ifm_event_list_append(handle->list);
    if (!event) {
        handle->error = NLE_NOMEM;
        return NL_STOP;
    }
    event->type = header->nlmsg_type == RTM_DELLINK ? IFM_LINK_DEL : IFM_LINK_NEW;
    /* A DELLINK with these attributes is a move to another namespace, not
     * the end of the device. */
    event->moved = header->nlmsg_type == RTM_DELLINK &&
        (nlmsg_find_attr(header, sizeof(struct ifinfomsg), IFLA_NEW_NETNSID) ||
         nlmsg_find_attr(header, sizeof(struct ifinfomsg), IFLA_NEW_IFINDEX));
    int err = parse_link(message, &event->link);
    if (err < 0) {
        handle->list->count--;
        handle->error = -err;
        return NL_STOP;
    }
    return NL_OK;
}

/* net.core.rmem_max, what SO_RCVBUF may ask without CAP_NET_ADMIN, or -1. */
static long receive_buffer_cap(void) {
    FILE *file = fopen("/proc/sys/net/core/rmem_max", "re");
    if (!file) return -1;
    long cap = -1;
    if (fscanf(file, "%ld", &cap) != 1) cap = -1;
    fclose(file);
    return cap;
}

/* Raises the receive buffer to bytes; never lowers it. SO_RCVBUFFORCE is
 * tried first (CAP_NET_ADMIN), then SO_RCVBUF, which the kernel caps at
 * net.core.rmem_max (208 KiB on a stock Debian). The kernel keeps twice
 * what it grants (its bookkeeping). An adopted socket may hold more than
 * rmem_max already (systemd forces a socket unit's ReceiveBuffer=), which
 * SO_RCVBUF would cut down: it is asked only when that raises it. */
static int set_receive_buffer(int fd, int bytes, int adopted) {
    int granted = 0;
    socklen_t length = sizeof granted;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &length) == 0 && granted / 2 >= bytes) return 0;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) == 0) return 0;
    if (adopted) {
        long cap = receive_buffer_cap();
        if (cap < 0 || 2 * (cap < bytes ? cap : (long)bytes) <= granted) return 0;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) == 0) return 0;
    return -nl_syserr2nlerr(errno);
}

int ifm_events_receive_buffer(const ifm_events *handle) {
    int bytes = 0;
    socklen_t length = sizeof bytes;
    if (getsockopt(nl_socket_get_fd(handle->sock), SOL_SOCKET, SO_RCVBUF, &bytes, &length) < 0) return -1;
    /* The kernel doubles a request to cover its own bookkeeping. */
    return bytes / 2;
}

/* Whether fd is a NETLINK_ROUTE socket of the caller's own network
 * namespace: a socket handed over from elsewhere is only taken as the
 * event socket when it is. The namespace is compared by netns cookie
 * (Linux 5.14+); a kernel without it refuses the descriptor. */
static int is_route_socket_of_this_namespace(int fd) {
    int domain = 0, protocol = -1, type = 0;
    socklen_t length = sizeof domain;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0 || domain != AF_NETLINK) return 0;
    length = sizeof protocol;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &length) != 0 || protocol != NETLINK_ROUTE) return 0;
    length = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_RAW) return 0;
    int own = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (own < 0) return 0;
    uint64_t theirs = 0, ours = 0;
    int same = ifm_netns_cookie(fd, &theirs) == 0 && ifm_netns_cookie(own, &ours) == 0 && theirs == ours;
    close(own);
    return same;
}

static ifm_events *events_open(int adopted, int receive_buffer_bytes, int *error) {
    ifm_events *handle = calloc(1, sizeof *handle);
    if (!handle) {
        if (adopted >= 0) close(adopted);
        *error = NLE_NOMEM;
        return NULL;
    }
    handle->sock = open_route_socket(on_event_message, handle, adopted, error);
    if (!handle->sock) { free(handle); return NULL; }
    handle->buffer_bytes = MESSAGE_BUFFER_BYTES;
    /* Multicast messages carry no sequence numbers of ours. */
    nl_socket_disable_seq_check(handle->sock);
    int err = nl_socket_add_membership(handle->sock, RTNLGRP_LINK);
    if (err >= 0) err = nl_socket_set_nonblocking(handle->sock);
    if (err >= 0 && receive_buffer_bytes > 0)
        err = set_receive_buffer(nl_socket_get_fd(handle->sock), receive_buffer_bytes, adopted >= 0);
    if (err < 0) {
        nl_socket_free(handle->sock);
        free(handle);
        *error = -err;
        return NULL;
    }
    /* An overrun is counted, not reported as an error. An error would make
     * the socket poll as EPOLLERR, and systemd, watching a socket unit's
     * socket while no daemon runs, fails the unit on any event but EPOLLIN
     * and closes the socket with the queue in it. Set on the socket, not
     * the process: it holds for whoever watches it next. Only where the
     * drop count can be read (SO_MEMINFO, Linux 4.12): elsewhere overruns
     * stay errors, or nothing would tell of them. One limit: a notification
     * the kernel cannot even allocate (memory pressure) is reported by an
     * error alone, which NETLINK_NO_ENOBUFS suppresses and no drop counts
     * (README 'Limits'). */
    int fd = nl_socket_get_fd(handle->sock), on = 1, off = 0;
    uint32_t drops = 0;
    handle->counts_drops = socket_drops(fd, &drops) == 0
        && setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &on, sizeof on) == 0;
    if (!handle->counts_drops) setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &off, sizeof off);
    /* Every drop is news until the caller says what an earlier reader of a
     * socket taken over saw; a new socket has dropped nothing. */
    handle->seen_drops = 0;
    return handle;
}

ifm_events *ifm_events_open(int receive_buffer_bytes, int *error) {
    return events_open(-1, receive_buffer_bytes, error);
}

ifm_events *ifm_events_adopt(int fd, int receive_buffer_bytes, int *error) {
    if (!is_route_socket_of_this_namespace(fd)) {
        close(fd);
        *error = NLE_BAD_SOCK;
        return NULL;
    }
    /* Passed without close-on-exec, as every descriptor systemd passes. */
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    /* Subscribing again is harmless; the messages queued stay queued. */
    return events_open(fd, receive_buffer_bytes, error);
}

void ifm_events_close(ifm_events *handle) {
    if (!handle) return;
    nl_socket_free(handle->sock);
    free(handle);
}

int ifm_events_fd(const ifm_events *handle) {
    return nl_socket_get_fd(handle->sock);
}

/* Sets *overrun if the drop count moved since the last read. Called at
 * every exit of a read, a failed one too: the caller re-dumps after either,
 * and a drop noted once is not reported again by the next read. */
static void note_drops(ifm_events *handle, int *overrun) {
    uint32_t drops = 0;
    if (handle->counts_drops && socket_drops(nl_socket_get_fd(handle->sock), &drops) == 0 && drops != handle->seen_drops) {
        *overrun = 1;
        handle->seen_drops = drops;
    }
}

int ifm_events_read(ifm_events *handle, ifm_event_list *list, int *overrun) {
    *overrun = 0;
    handle->list = list;
    handle->error = 0;
    while (list->count < IFM_EVENTS_PER_READ) {
        int err = nl_recvmsgs_default(handle->sock);
        if (handle->error) { handle->list = NULL; note_drops(handle, overrun); return handle->error; }
        if (err >= 0) continue;
        if (err == -NLE_AGAIN) break;
        /* libnl maps the kernel's ENOBUFS (receive queue overrun) to NOMEM;
         * the socket stays usable and the queued messages still follow. */
        if (err == -NLE_NOMEM) { *overrun = 1; continue; }
        /* A message larger than the buffer (a link with hundreds of long
         * altnames) was consumed cut short: that event is lost like an
         * overrun, and later ones get a buffer twice as large. */
        if (err == -NLE_MSG_TRUNC) {
            *overrun = 1;
            if (handle->buffer_bytes < MAX_MESSAGE_BUFFER_BYTES) {
                handle->buffer_bytes *= 2;
                nl_socket_set_msg_buf_size(handle->sock, handle->buffer_bytes);
            }
            continue;
        }
        handle->list = NULL;
        note_drops(handle, overrun);
        return -err;
    }
    handle->list = NULL;
    note_drops(handle, overrun);
    return 0;
}

uint64_t ifm_events_identity(const ifm_events *handle) {
    /* The socket cookie (Linux 4.12+): never reused within a boot. */
    uint64_t cookie = 0;
    socklen_t length = sizeof cookie;
    return getsockopt(nl_socket_get_fd(handle->sock), SOL_SOCKET, SO_COOKIE, &cookie, &length) == 0 ? cookie : 0;
}

uint32_t ifm_events_seen_drops(const ifm_events *handle) { return handle->seen_drops; }

void ifm_events_set_seen_drops(ifm_events *handle, uint32_t drops) { handle->seen_drops = drops; }
