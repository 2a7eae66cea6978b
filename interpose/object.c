/*
 * object.c: the life cycle every VAST object shares (reference counts, destruction,
 * quarantine), the live-handle registry, and the small helpers every entry point uses
 * (info answers, wait-list and object-array unwrapping).
 *
 * Quarantine: a released object's memory is kept, marked VAST_MAGIC_DEAD, for the next
 * VAST_QUARANTINE releases before it is freed, so a stale handle is reported as invalid
 * rather than read after free. The registry (a hash set chained through the objects
 * themselves) answers "is this value a live VAST handle?" without dereferencing the value:
 * clSetKernelArg needs that for argument values that may be anything.
 */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#define VAST_QUARANTINE 1024
#define REGISTRY_BUCKETS 1024

static pthread_mutex_t quarantine_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vast_object *quarantine[VAST_QUARANTINE];
static size_t quarantine_next;
static _Atomic long live_objects;

static struct {
    pthread_mutex_t lock;
    struct vast_object *head;
} registry[REGISTRY_BUCKETS];
static pthread_once_t registry_once = PTHREAD_ONCE_INIT;

static void registry_init(void)
{
    for (size_t i = 0; i < REGISTRY_BUCKETS; i++)
        pthread_mutex_init(&registry[i].lock, NULL);
}

static size_t registry_bucket(const void *handle)
{
    uintptr_t v = (uintptr_t)handle;
    v ^= v >> 17;
    v *= 0x9e3779b97f4a7c15ull;
    return (size_t)(v >> 40) % REGISTRY_BUCKETS;
}

void vast_registry_add(const void *handle)
{
    pthread_once(&registry_once, registry_init);
    struct vast_object *obj = (struct vast_object *)handle;
    size_t b = registry_bucket(handle);
    pthread_mutex_lock(&registry[b].lock);
    obj->registry_next = registry[b].head;
    registry[b].head = obj;
    pthread_mutex_unlock(&registry[b].lock);
}

void vast_registry_remove(const void *handle)
{
    pthread_once(&registry_once, registry_init);
    size_t b = registry_bucket(handle);
    pthread_mutex_lock(&registry[b].lock);
    for (struct vast_object **p = &registry[b].head; *p != NULL; p = &(*p)->registry_next)
        if (*p == handle) {
            *p = (*p)->registry_next;
            break;
        }
    pthread_mutex_unlock(&registry[b].lock);
}

bool vast_registry_contains(const void *handle)
{
    pthread_once(&registry_once, registry_init);
    size_t b = registry_bucket(handle);
    bool found = false;
    pthread_mutex_lock(&registry[b].lock);
    for (struct vast_object *o = registry[b].head; o != NULL && !found; o = o->registry_next)
        found = (o == handle);
    pthread_mutex_unlock(&registry[b].lock);
    return found;
}

void *vast_object_alloc(size_t size) { return calloc(1, size); }

void vast_object_init(struct vast_object *obj, enum vast_magic magic, vast_destroy_fn destroy)
{
    obj->dispatch = &vast_dispatch;
    atomic_init(&obj->refcount, 1);
    pthread_mutex_init(&obj->lock, NULL);
    obj->destroy = destroy;
    atomic_store_explicit(&obj->magic, (uint32_t)magic, memory_order_release);
    atomic_fetch_add(&live_objects, 1);
    vast_registry_add(obj);
}

void vast_object_retain(struct vast_object *obj)
{
    atomic_fetch_add_explicit(&obj->refcount, 1, memory_order_relaxed);
}

static void quarantine_put(struct vast_object *obj)
{
    pthread_mutex_lock(&quarantine_lock);
    struct vast_object *old = quarantine[quarantine_next];
    quarantine[quarantine_next] = obj;
    quarantine_next = (quarantine_next + 1) % VAST_QUARANTINE;
    pthread_mutex_unlock(&quarantine_lock);
    if (old != NULL) {
        pthread_mutex_destroy(&old->lock);
        free(old);
    }
}

void vast_object_release(struct vast_object *obj)
{
    if (atomic_fetch_sub_explicit(&obj->refcount, 1, memory_order_acq_rel) != 1)
        return;
    atomic_store_explicit(&obj->magic, VAST_MAGIC_DEAD, memory_order_release);
    vast_registry_remove(obj);
    if (obj->destroy != NULL)
        obj->destroy(obj);
    atomic_fetch_sub(&live_objects, 1);
    quarantine_put(obj);
}

long vast_object_live_count(void) { return atomic_load(&live_objects); }

cl_int vast_info_answer(const void *value, size_t value_size, size_t param_value_size,
                        void *param_value, size_t *param_value_size_ret)
{
    if (param_value != NULL) {
        VAST_RETURN_IF(param_value_size < value_size, CL_INVALID_VALUE,
                       "param_value_size %zu < %zu bytes needed", param_value_size, value_size);
        memcpy(param_value, value, value_size);
    }
    if (param_value_size_ret != NULL)
        *param_value_size_ret = value_size;
    return CL_SUCCESS;
}

cl_int vast_info_refcount(struct vast_object *obj, size_t param_value_size, void *param_value,
                          size_t *param_value_size_ret)
{
    cl_uint refs = atomic_load(&obj->refcount);
    return vast_info_answer(&refs, sizeof refs, param_value_size, param_value, param_value_size_ret);
}

/* An empty list is NULL: the real driver requires that of an empty wait or device list. */
static cl_int list_prepare(struct vast_list *out, cl_uint n)
{
    out->items = n == 0 ? NULL : out->small;
    if (n > VAST_SMALL_LIST) {
        out->items = malloc(n * sizeof(void *));
        if (out->items == NULL)
            return CL_OUT_OF_HOST_MEMORY;
    }
    return CL_SUCCESS;
}

void vast_list_free(struct vast_list *list)
{
    if (list->items != list->small && list->items != NULL)
        free(list->items);
    list->items = list->small;
}

cl_int vast_unwrap_events(cl_context context, cl_uint n, const cl_event *events,
                          struct vast_list *out)
{
    out->items = out->small;
    VAST_RETURN_IF((n == 0) != (events == NULL), CL_INVALID_EVENT_WAIT_LIST,
                   "num_events_in_wait_list %u with event_wait_list %p", n, (const void *)events);
    for (cl_uint i = 0; i < n; i++) {
        VAST_RETURN_IF(!vast_object_is(events[i], VAST_MAGIC_EVENT), CL_INVALID_EVENT_WAIT_LIST,
                       "event_wait_list[%u]=%p is not a live VAST event", i, (void *)events[i]);
        VAST_RETURN_IF(context != NULL && events[i]->context != context, CL_INVALID_CONTEXT,
                       "event_wait_list[%u] belongs to another context", i);
    }
    cl_int err = list_prepare(out, n);
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        out->items[i] = events[i]->real;
    return err;
}

cl_int vast_unwrap_mems(cl_uint n, const cl_mem *mems, struct vast_list *out)
{
    out->items = out->small;
    for (cl_uint i = 0; i < n; i++)
        VAST_RETURN_IF(!vast_object_is(mems[i], VAST_MAGIC_MEM), CL_INVALID_MEM_OBJECT,
                       "mem_objects[%u]=%p is not a live VAST memory object", i, (void *)mems[i]);
    cl_int err = list_prepare(out, n);
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        out->items[i] = mems[i]->real;
    return err;
}

static bool context_has_device(cl_context context, cl_device_id device)
{
    for (cl_uint i = 0; i < context->num_devices; i++)
        if (context->devices[i] == device)
            return true;
    return false;
}

cl_int vast_unwrap_devices(cl_context context, cl_uint n, const cl_device_id *devices,
                           struct vast_list *out)
{
    out->items = out->small;
    VAST_RETURN_IF((n == 0) != (devices == NULL), CL_INVALID_VALUE,
                   "num_devices %u with device_list %p", n, (const void *)devices);
    for (cl_uint i = 0; i < n; i++) {
        VAST_RETURN_IF(!vast_object_is(devices[i], VAST_MAGIC_DEVICE), CL_INVALID_DEVICE,
                       "device_list[%u]=%p is not a VAST device", i, (void *)devices[i]);
        VAST_RETURN_IF(context != NULL && !context_has_device(context, devices[i]),
                       CL_INVALID_DEVICE, "device_list[%u] is not in the context", i);
    }
    cl_int err = list_prepare(out, n);
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; i++)
        out->items[i] = devices[i]->real;
    return err;
}
