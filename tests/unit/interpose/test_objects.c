/*
 * test_objects: the object head shared by every VAST handle. Validation by type tag (NULL,
 * foreign, wrong type, released), reference counts from many threads, destruction exactly
 * once, the quarantine of released memory, the live-handle registry, info answers and
 * wait-list checks. Objects are built by hand: no real platform is needed.
 */
#include "interpose/api.h"
#include "interpose/check.h"
#include "vast_cmocka.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int destroyed;
static void count_destroy(struct vast_object *obj)
{
    (void)obj;
    destroyed++;
}

static cl_context fake_context(void)
{
    cl_context c = vast_object_alloc(sizeof *c);
    vast_object_init(&c->obj, VAST_MAGIC_CONTEXT, count_destroy);
    return c;
}

static void test_validation(void **state)
{
    (void)state;
    destroyed = 0;
    cl_context c = fake_context();
    struct _cl_sampler *s = vast_object_alloc(sizeof *s);
    vast_object_init(&s->obj, VAST_MAGIC_SAMPLER, count_destroy);
    static const struct _cl_icd_dispatch other = {0};
    struct vast_object foreign = {.dispatch = &other, .magic = VAST_MAGIC_CONTEXT}; /* another driver's */

    assert_true(vast_object_is(c, VAST_MAGIC_CONTEXT));
    assert_false(vast_object_is(c, VAST_MAGIC_QUEUE));
    assert_false(vast_object_is(NULL, VAST_MAGIC_CONTEXT));
    assert_false(vast_object_is(&foreign, VAST_MAGIC_CONTEXT));
    assert_int_equal(vast_clRetainContext((cl_context)(void *)s), CL_INVALID_CONTEXT);
    assert_int_equal(vast_clRetainContext((cl_context)(void *)&foreign), CL_INVALID_CONTEXT);

    cl_uint refs = 0;
    assert_int_equal(vast_clRetainContext(c), CL_SUCCESS);
    assert_int_equal(vast_clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_int_equal(refs, 2);
    assert_int_equal(vast_clReleaseContext(c), CL_SUCCESS);
    assert_int_equal(destroyed, 0);
    assert_int_equal(vast_clReleaseContext(c), CL_SUCCESS);
    assert_int_equal(destroyed, 1);
    /* Released: the handle stays readable (quarantine) and is refused. */
    assert_true(vast_object_is_own(c));
    assert_false(vast_object_is(c, VAST_MAGIC_CONTEXT));
    assert_int_equal(vast_clRetainContext(c), CL_INVALID_CONTEXT);
    assert_int_equal(vast_clReleaseContext(c), CL_INVALID_CONTEXT);
    assert_int_equal(destroyed, 1);
    vast_object_release(&s->obj);
    assert_int_equal(destroyed, 2);
}

static void *hammer(void *arg)
{
    cl_context c = arg;
    for (int i = 0; i < 100000; i++) {
        assert_int_equal(vast_clRetainContext(c), CL_SUCCESS);
        assert_int_equal(vast_clReleaseContext(c), CL_SUCCESS);
    }
    return NULL;
}

static void test_refcount_threads(void **state)
{
    (void)state;
    destroyed = 0;
    long before = vast_object_live_count();
    cl_context c = fake_context();
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, c), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&c->obj.refcount), 1);
    assert_int_equal(destroyed, 0);
    vast_object_release(&c->obj);
    assert_int_equal(destroyed, 1);
    assert_int_equal(vast_object_live_count(), before);
}

static void test_quarantine_recycles(void **state)
{
    (void)state;
    destroyed = 0;
    long before = vast_object_live_count();
    for (int i = 0; i < 5000; i++)
        vast_object_release(&fake_context()->obj);
    assert_int_equal(destroyed, 5000);
    assert_int_equal(vast_object_live_count(), before);
}

static void test_registry(void **state)
{
    (void)state;
    cl_context a = fake_context(), b = fake_context();
    int local;
    assert_true(vast_registry_contains(a));
    assert_true(vast_registry_contains(b));
    assert_false(vast_registry_contains(&local));
    assert_false(vast_registry_contains(NULL));
    vast_object_release(&a->obj);
    assert_false(vast_registry_contains(a));
    assert_true(vast_registry_contains(b));
    vast_object_release(&b->obj);
    assert_false(vast_registry_contains(b));
}

static void test_info_answer(void **state)
{
    (void)state;
    cl_ulong v = 42, out = 0;
    size_t size = 0;
    assert_int_equal(vast_info_answer(&v, sizeof v, 0, NULL, &size), CL_SUCCESS);
    assert_int_equal(size, sizeof v);
    assert_int_equal(vast_info_answer(&v, sizeof v, 4, &out, &size), CL_INVALID_VALUE);
    assert_int_equal(out, 0);
    assert_int_equal(vast_info_answer(&v, sizeof v, sizeof out, &out, NULL), CL_SUCCESS);
    assert_int_equal(out, 42);
}

static void test_wait_lists(void **state)
{
    (void)state;
    cl_context c = fake_context();
    enum { N = 40 };
    cl_event events[N];
    for (int i = 0; i < N; i++) {
        events[i] = vast_object_alloc(sizeof *events[i]);
        vast_object_init(&events[i]->obj, VAST_MAGIC_EVENT, NULL);
        events[i]->context = c;
        events[i]->real = (cl_event)(uintptr_t)(0x1000 + i);
    }
    struct vast_list list;
    assert_int_equal(vast_unwrap_events(c, 0, events, &list), CL_INVALID_EVENT_WAIT_LIST);
    assert_int_equal(vast_unwrap_events(c, 2, NULL, &list), CL_INVALID_EVENT_WAIT_LIST);
    assert_int_equal(vast_unwrap_events(c, 0, NULL, &list), CL_SUCCESS);
    vast_list_free(&list);
    assert_int_equal(vast_unwrap_events(c, N, events, &list), CL_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(list.items[i], (void *)(uintptr_t)(0x1000 + i));
    vast_list_free(&list);
    cl_context other = fake_context();
    assert_int_equal(vast_unwrap_events(other, N, events, &list), CL_INVALID_CONTEXT);
    cl_event mixed[2] = {events[0], (cl_event)(void *)c};
    assert_int_equal(vast_unwrap_events(c, 2, mixed, &list), CL_INVALID_EVENT_WAIT_LIST);
    for (int i = 0; i < N; i++)
        vast_object_release(&events[i]->obj);
    vast_object_release(&c->obj);
    vast_object_release(&other->obj);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_validation, test_refcount_threads, test_quarantine_recycles, test_registry, test_info_answer,
                 test_wait_lists)
