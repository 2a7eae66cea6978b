/*
 * check.h: argument checks that say why, and calls into the real platform.
 *
 * Every failed check logs its reason at debug level (VAST_LOG=debug shows which argument was
 * wrong and why) and returns the code the OpenCL specification names. Calls into the real
 * driver go through the real object's own dispatch table, never through the global cl*
 * symbols (which are VAST's own in LD_PRELOAD mode), and only to slots that exist for the
 * real platform's OpenCL version.
 */
#ifndef VAST_INTERPOSE_CHECK_H
#define VAST_INTERPOSE_CHECK_H

#include "../base/driver.h"
#include "../base/log.h"
#include "object.h"

#include <stdio.h>
#include <stdlib.h>

static inline void vast_set_error(cl_int *errcode_ret, cl_int code)
{
    if (errcode_ret != NULL)
        *errcode_ret = code;
}

#define VAST_WHY(code, ...)                                                                       \
    do {                                                                                          \
        if (vast_log_get_level() >= VAST_LOG_DEBUG) {                                             \
            char why_[512];                                                                       \
            snprintf(why_, sizeof why_, __VA_ARGS__);                                             \
            vast_log(VAST_LOG_DEBUG, "%s: %s: %s", __func__, #code, why_);                        \
        }                                                                                         \
    } while (0)

/* Return `code` from a cl_int function when `cond` holds. */
#define VAST_RETURN_IF(cond, code, ...)                                                           \
    do {                                                                                          \
        if (cond) {                                                                               \
            VAST_WHY(code, __VA_ARGS__);                                                          \
            return (code);                                                                        \
        }                                                                                         \
    } while (0)

/* Return `code` unconditionally, saying why. */
#define VAST_FAIL(code, ...)                                                                      \
    do {                                                                                          \
        VAST_WHY(code, __VA_ARGS__);                                                              \
        return (code);                                                                            \
    } while (0)

/* Return NULL from a constructor, setting *errcode_ret, when `cond` holds. */
#define VAST_RETURN_NULL_IF(cond, code, errcode_ret, ...)                                         \
    do {                                                                                          \
        if (cond) {                                                                               \
            VAST_WHY(code, __VA_ARGS__);                                                          \
            vast_set_error((errcode_ret), (code));                                                \
            return NULL;                                                                          \
        }                                                                                         \
    } while (0)

#define VAST_CHECK(h, MAGIC, code) VAST_RETURN_IF(!vast_object_is((h), MAGIC), code, "%s=%p is not a live VAST object", #h, (const void *)(h))
#define VAST_CHECK_MEM(m) VAST_CHECK(m, VAST_MAGIC_MEM, CL_INVALID_MEM_OBJECT)
#define VAST_CHECK_NULL(h, MAGIC, code, errcode_ret)                                              \
    VAST_RETURN_NULL_IF(!vast_object_is((h), MAGIC), code, errcode_ret,                           \
                        "%s=%p is not a live VAST object", #h, (const void *)(h))

/*
 * clRetain* and clRelease* of one object family, defined together: check the handle, then take
 * or drop one reference (the last release runs the type's destructor, object.c). One line per
 * family keeps the seven pairs the same; devices differ (root devices are never counted).
 */
#define VAST_RETAIN_RELEASE(retain_fn, release_fn, type, h, MAGIC, code)                          \
    VAST_RETAIN_RELEASE_AFTER(retain_fn, release_fn, type, h, MAGIC, code, (void)0)
/* The same, with `before` run ahead of each release (the handle checked): queues and buffers
 * first reap the kernels VAST put on applications' queues (onqueue.h). */
#define VAST_RETAIN_RELEASE_AFTER(retain_fn, release_fn, type, h, MAGIC, code, before)           \
    cl_int retain_fn(type h)                                                                      \
    {                                                                                             \
        VAST_CHECK(h, MAGIC, code);                                                               \
        VAST_RETAIN(h);                                                                           \
        return CL_SUCCESS;                                                                        \
    }                                                                                             \
    cl_int release_fn(type h)                                                                     \
    {                                                                                             \
        VAST_CHECK(h, MAGIC, code);                                                               \
        before;                                                                                   \
        VAST_RELEASE(h);                                                                          \
        return CL_SUCCESS;                                                                        \
    }

/* A slot of the real platform's table, or NULL where that platform's version has none. */
#define VAST_REAL(be, robj, entry)                                                                 \
    ((offsetof(struct _cl_icd_dispatch, entry) / sizeof(void *) < (be)->dispatch_slots)           \
         ? VAST_DISPATCH(robj)->entry                                                              \
         : NULL)

/* `return` the real function's cl_int result, or CL_INVALID_OPERATION when it has none. A
 * NULL real object is a virtual buffer given where only a real memory object will do (a pipe,
 * an image): CL_INVALID_MEM_OBJECT, never a call through NULL. */
#define VAST_PASS(be, robj, entry, ...)                                                            \
    do {                                                                                          \
        VAST_RETURN_IF((robj) == NULL, CL_INVALID_MEM_OBJECT, "%s: a virtual buffer is no real object",   \
                       #entry);                                                                   \
        cl_api_##entry fn_ = VAST_REAL(be, robj, entry);                                           \
        VAST_RETURN_IF(fn_ == NULL, CL_INVALID_OPERATION, "the real platform '%s' has no %s",     \
                       (be)->name, #entry);                                                        \
        return fn_(__VA_ARGS__);                                                                  \
    } while (0)

/* Declare `fn_` = the real function, or fail the constructor with CL_INVALID_OPERATION. */
#define VAST_REAL_OR_NULL(be, robj, entry, errcode_ret)                                            \
    cl_api_##entry fn_ = VAST_REAL(be, robj, entry);                                               \
    VAST_RETURN_NULL_IF(fn_ == NULL, CL_INVALID_OPERATION, errcode_ret,                           \
                        "the real platform '%s' has no %s", (be)->name, #entry)

/* Answer a clGet*Info query from a value VAST holds. */
cl_int vast_info_answer(const void *value, size_t value_size, size_t param_value_size,
                        void *param_value, size_t *param_value_size_ret);
/* Answer a *_REFERENCE_COUNT query: the object's count now. */
cl_int vast_info_refcount(struct vast_object *obj, size_t param_value_size, void *param_value,
                          size_t *param_value_size_ret);

/*
 * Event wait lists and object arrays: VAST handles in, real handles out. The scratch array
 * holds up to VAST_SMALL_LIST entries; longer lists are allocated and must be freed with
 * vast_list_free. Checks follow the specification (wait list consistent with its count,
 * every event a live VAST event of the same context where given).
 */
#define VAST_SMALL_LIST 16
struct vast_list {
    void **items;
    void *small[VAST_SMALL_LIST];
};
cl_int vast_unwrap_events(cl_context context, cl_uint n, const cl_event *events,
                          struct vast_list *out);
cl_int vast_unwrap_mems(cl_uint n, const cl_mem *mems, struct vast_list *out);
cl_int vast_unwrap_devices(cl_context context, cl_uint n, const cl_device_id *devices,
                           struct vast_list *out);
void vast_list_free(struct vast_list *list);
/* vast_unwrap_events for a real command about to be enqueued on q's real queue: also notes
 * the events not complete yet (see waited in object.h). */
cl_int vast_queue_unwrap(cl_command_queue q, cl_uint n, const cl_event *events, struct vast_list *out);
/* Counts a real command just enqueued on q's real queue for the application, whether or not
 * the enqueue succeeded (real_enqueued of object.h; after the call, so that a wait for the
 * queue's order that reads the count also covers the command). */
void vast_queue_note_real(cl_command_queue q);
/* The count of such commands now, and: every one up to `count` has ended. */
uint64_t vast_queue_real_count(cl_command_queue q);
void vast_queue_real_ended(cl_command_queue q, uint64_t count);
/* Whether every such command has ended as far as VAST knows (none since the last wait). */
bool vast_queue_real_idle(cl_command_queue q);

/* Wrap the real event a command returned, when the application asked for one. */
cl_int vast_event_wrap_out(cl_command_queue queue, cl_event real, cl_event *event);

/* The VAST device whose real device is `real` (root or sub-device), or NULL. */
cl_device_id vast_device_from_real(cl_device_id real);

/*
 * The body of a pass-through enqueue: checks the queue, unwraps the wait list, calls the real
 * entry with `...` followed by the real wait list and event, and wraps the event it returns.
 * Arguments that are handles must be checked and unwrapped by the caller beforehand.
 */
#define VAST_ENQUEUE(q, entry, nw, wl, ev, ...)                                                    \
    do {                                                                                          \
        VAST_CHECK(q, VAST_MAGIC_QUEUE, CL_INVALID_COMMAND_QUEUE);                                \
        cl_api_##entry fn_ = VAST_REAL((q)->context->backend, (q)->real, entry);                  \
        VAST_RETURN_IF(fn_ == NULL, CL_INVALID_OPERATION, "the real platform has no %s", #entry); \
        struct vast_list waits_;                                                                  \
        cl_int err_ = vast_queue_unwrap((q), (nw), (wl), &waits_);                                \
        if (err_ != CL_SUCCESS)                                                                   \
            return err_;                                                                          \
        cl_event real_ev_ = NULL;                                                                 \
        err_ = fn_((q)->real, __VA_ARGS__, (nw), (nw) ? (const cl_event *)waits_.items : NULL,    \
                   (ev) ? &real_ev_ : NULL);                                                      \
        vast_queue_note_real((q));                                                                \
        vast_list_free(&waits_);                                                                  \
        return err_ == CL_SUCCESS ? vast_event_wrap_out((q), real_ev_, (ev)) : err_;              \
    } while (0)

#endif
