#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
