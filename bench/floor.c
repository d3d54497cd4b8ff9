// make bench's floors, in plain C over a raw NETLINK_ROUTE socket (no libnl):
//   floor stats N           N RTM_GETSTATS dumps asking for IFLA_STATS_LINK_64
//                           alone: median CPU seconds of one, and the link count
//   floor loop SECONDS      a daemon that does one such dump every SECONDS in a
//                           poll() loop, on multiples of SECONDS with the timer
//                           slack ifmeterd sets: the least any sampler can cost
//   floor traffic MS DEV... writes one 1000-byte IPv4/UDP packet into each
//                           (persistent, configured) tun DEV every MS
//                           milliseconds and drains what the kernel answers:
//                           traffic with no link event at all
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what) {
    fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double seconds(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static char buffer[64 * 1024];
static uint64_t checksum_of_counters;  /* keeps the reads from being optimised out */

/* One RTM_GETSTATS dump; returns the number of links, or -1. */
static int stats_dump(int fd, uint32_t sequence) {
    struct {
        struct nlmsghdr header;
        struct if_stats_msg body;
    } request = {
        .header = { .nlmsg_len = sizeof request, .nlmsg_type = RTM_GETSTATS, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                    .nlmsg_seq = sequence },
        .body = { .family = AF_UNSPEC, .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) },
    };
    if (send(fd, &request, sizeof request, 0) < 0) return -1;
    int links = 0;
    for (;;) {
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, (size_t)length);
             header = NLMSG_NEXT(header, length)) {
            if (header->nlmsg_type == NLMSG_DONE) return links;
            if (header->nlmsg_type == NLMSG_ERROR) return -1;
            if (header->nlmsg_type != RTM_NEWSTATS) continue;
            struct if_stats_msg *body = NLMSG_DATA(header);
            struct rtattr *attribute = (struct rtattr *)((char *)body + NLMSG_ALIGN(sizeof *body));
            int remaining = (int)header->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof *body));
            for (; RTA_OK(attribute, remaining); attribute = RTA_NEXT(attribute, remaining)) {
                if (attribute->rta_type != IFLA_STATS_LINK_64) continue;
                struct rtnl_link_stats64 stats;
                memcpy(&stats, RTA_DATA(attribute), sizeof stats);
                checksum_of_counters += stats.rx_bytes + stats.tx_bytes + stats.rx_packets + stats.tx_packets;
            }
            links++;
        }
    }
}

static int route_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) fail("socket");
    return fd;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int stats(int count) {
    int fd = route_socket();
    double *cpus = calloc((size_t)count, sizeof *cpus);
    int links = 0;
    for (int i = 0; i < count; i++) {
        double before = seconds(CLOCK_PROCESS_CPUTIME_ID);
        links = stats_dump(fd, (uint32_t)i + 1);
        cpus[i] = seconds(CLOCK_PROCESS_CPUTIME_ID) - before;
        if (links < 0) fail("RTM_GETSTATS dump");
    }
    qsort(cpus, (size_t)count, sizeof *cpus, compare);
    printf("links=%d stats_cpu_seconds=%.9f\n", links, cpus[count / 2]);
    return 0;
}

static _Noreturn void loop(double interval) {
    int fd = route_socket();
    prctl(PR_SET_TIMERSLACK, (unsigned long)(interval / 100 * 1e9), 0, 0, 0);
    for (uint32_t sequence = 1;; sequence++) {
        if (stats_dump(fd, sequence) < 0) fail("RTM_GETSTATS dump");
        double now = seconds(CLOCK_MONOTONIC);
        double next = ((double)(long long)(now / interval) + 1) * interval;
        while (poll(NULL, 0, (int)((next - now) * 1000 + 1)) < 0 && errno == EINTR) now = seconds(CLOCK_MONOTONIC);
    }
}

static uint16_t ip_checksum(const uint8_t *bytes, size_t length) {
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < length; i += 2) sum += (uint32_t)(bytes[i] << 8 | bytes[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* tunK carries 198.18.K.1/24 (run.sh sets it): packets from 198.18.K.2 to
 * an unbound port, answered (rate-limited) with ICMP, which is read back. */
static _Noreturn void traffic(int milliseconds, int count, char **names) {
    int fds[64];
    if (count > 64) count = 64;
    for (int i = 0; i < count; i++) {
        fds[i] = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fds[i] < 0) fail("/dev/net/tun");
        struct ifreq request;
        memset(&request, 0, sizeof request);
        request.ifr_flags = IFF_TUN | IFF_NO_PI;
        strncpy(request.ifr_name, names[i], IFNAMSIZ - 1);
        if (ioctl(fds[i], TUNSETIFF, &request) < 0) fail(names[i]);
    }
    uint8_t packet[1000];
    for (;;) {
        for (int i = 0; i < count; i++) {
            int subnet = atoi(names[i] + strcspn(names[i], "0123456789"));
            memset(packet, 0, sizeof packet);
            packet[0] = 0x45;
            packet[2] = sizeof packet >> 8;
            packet[3] = sizeof packet & 0xff;
            packet[8] = 64;
            packet[9] = 17;
            uint8_t source[4] = { 198, 18, (uint8_t)subnet, 2 }, target[4] = { 198, 18, (uint8_t)subnet, 1 };
            memcpy(packet + 12, source, 4);
            memcpy(packet + 16, target, 4);
            uint16_t sum = ip_checksum(packet, 20);
            packet[10] = sum >> 8;
            packet[11] = sum & 0xff;
            packet[20] = 0x9c; packet[21] = 0x40;           /* source port 40000 */
            packet[22] = 0x00; packet[23] = 0x09;           /* discard */
            packet[24] = (sizeof packet - 20) >> 8;
            packet[25] = (sizeof packet - 20) & 0xff;
            if (write(fds[i], packet, sizeof packet) < 0 && errno != EAGAIN) fail("write");
            while (read(fds[i], buffer, sizeof buffer) > 0) {}
        }
        poll(NULL, 0, milliseconds);
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "stats") == 0) return stats(atoi(argv[2]) > 0 ? atoi(argv[2]) : 1);
    if (argc >= 3 && strcmp(argv[1], "loop") == 0) loop(atof(argv[2]) > 0 ? atof(argv[2]) : 15);
    if (argc >= 4 && strcmp(argv[1], "traffic") == 0) traffic(atoi(argv[2]), argc - 3, argv + 3);
    fprintf(stderr, "usage: floor stats N | loop SECONDS | traffic MS DEV...\n");
    return 64;
}
