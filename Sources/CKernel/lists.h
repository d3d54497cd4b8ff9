// Private to CKernel: growth of the caller-owned arrays.
#ifndef IFMETER_CKERNEL_LISTS_H
#define IFMETER_CKERNEL_LISTS_H
#include "ckernel.h"

/* Returns a zeroed slot at the end of the list, or NULL when out of memory. */
ifm_link *ifm_link_list_append(ifm_link_list *list);
ifm_link_event *ifm_event_list_append(ifm_event_list *list);
#endif
