// getifaddrs as a fallback counter source. glibc copies the 32-bit
// IFLA_STATS into ifa_data, so every counter here wraps at 2^32.
#include "ckernel.h"
#include "lists.h"

#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <linux/if_link.h>

int ifm_ifaddrs_dump(ifm_link_list *list) {
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0) return errno;
    list->count = 0;
    int result = 0;
    for (struct ifaddrs *entry = all; entry; entry = entry->ifa_next) {
        /* Only the per-link entries carry statistics. Links without a
         * hardware address (tun, WireGuard, raw-IP modems) have
         * ifa_addr == NULL: filtering on AF_PACKET would drop them. */
        if (!entry->ifa_data) continue;
        if (entry->ifa_addr && entry->ifa_addr->sa_family != AF_PACKET) continue;
        ifm_link *out = ifm_link_list_append(list);
        if (!out) { result = ENOMEM; break; }
        strncpy(out->name, entry->ifa_name, IFM_NAME_SIZE - 1);
        out->flags = entry->ifa_flags;
        if (entry->ifa_addr) {
            const struct sockaddr_ll *link = (const struct sockaddr_ll *)entry->ifa_addr;
            out->ifindex = link->sll_ifindex;
            out->arptype = link->sll_hatype;
        } else {
            out->ifindex = (int32_t)if_nametoindex(entry->ifa_name);
            out->arptype = ARPHRD_VOID; /* not reported without an address */
        }
        const struct rtnl_link_stats *stats = entry->ifa_data;
        ifm_counters *c = &out->counters;
        c->rx_bytes = stats->rx_bytes;
        c->tx_bytes = stats->tx_bytes;
        c->rx_packets = stats->rx_packets;
        c->tx_packets = stats->tx_packets;
        c->rx_errors = stats->rx_errors;
        c->tx_errors = stats->tx_errors;
        c->rx_dropped = stats->rx_dropped;
        c->tx_dropped = stats->tx_dropped;
    }
    freeifaddrs(all);
    return result;
}
