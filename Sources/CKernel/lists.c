#include "lists.h"
#include <stdlib.h>
#include <string.h>

static void *grow(void *items, size_t *capacity, size_t size) {
    size_t wanted = *capacity ? *capacity * 2 : 64;
    void *bigger = realloc(items, wanted * size);
    if (bigger) *capacity = wanted;
    return bigger;
}

ifm_link *ifm_link_list_append(ifm_link_list *list) {
    if (list->count == list->capacity) {
        ifm_link *bigger = grow(list->links, &list->capacity, sizeof *bigger);
        if (!bigger) return NULL;
        list->links = bigger;
    }
    ifm_link *slot = &list->links[list->count++];
    memset(slot, 0, sizeof *slot);
    return slot;
}

ifm_link_event *ifm_event_list_append(ifm_event_list *list) {
    if (list->count == list->capacity) {
        ifm_link_event *bigger = grow(list->events, &list->capacity, sizeof *bigger);
        if (!bigger) return NULL;
        list->events = bigger;
    }
    ifm_link_event *slot = &list->events[list->count++];
    memset(slot, 0, sizeof *slot);
    return slot;
}

void ifm_link_list_free(ifm_link_list *list) {
    free(list->links);
    list->links = NULL;
    list->count = list->capacity = 0;
}

void ifm_event_list_free(ifm_event_list *list) {
    free(list->events);
    list->events = NULL;
    list->count = list->capacity = 0;
}
