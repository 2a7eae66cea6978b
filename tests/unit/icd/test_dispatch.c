/*
 * test_dispatch: entries.h against <CL/cl_icd.h>: every slot present, in the header's order,
 * with the header's function type; every slot of VAST's table filled except the Windows-only
 * ones; unsupported entries answer the specification's error without touching arguments.
 */
#include "interpose/api.h"
#include "interpose/object.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vast_cmocka.h"

struct slot {
    const char *name;
    size_t offset;
    int null_allowed;
};

/* entries.h's rows by kind, read twice below: a slot VAST implements, one it answers with an
 * error, one left NULL. */
#define VAST_ENTRIES_KEEP_ROWS
#define VAST_API(ret, name, params, args, obj) IMPLEMENTED(name)
#define VAST_API_CUSTOM(ret, name, params, args) IMPLEMENTED(name)
#define VAST_API_EXT(ret, name, params, args) IMPLEMENTED(name)
#define VAST_UNSUPPORTED_INT(name, params, code) UNSUPPORTED(name)
#define VAST_UNSUPPORTED_OBJ(ret, name, params, code) UNSUPPORTED(name)
#define VAST_NULL_SLOT(name) NULL_SLOT(name)

/* Every row, with its offset in cl_icd.h's table. */
#define ROW(name, n) {#name, offsetof(struct _cl_icd_dispatch, name), n},
#define IMPLEMENTED(name) ROW(name, 0)
#define UNSUPPORTED(name) ROW(name, 0)
#define NULL_SLOT(name) ROW(name, 1)
static const struct slot slots[] = {
#include "interpose/entries.h"
};
#undef IMPLEMENTED
#undef UNSUPPORTED
#undef NULL_SLOT

/* Each implementation has exactly the type of its slot (a compile-time check). */
#define IMPLEMENTED(name)                                                                         \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&vast_##name), cl_api_##name), #name " differs from cl_icd.h");
#define UNSUPPORTED(name)
#define NULL_SLOT(name)
#include "interpose/entries.h"

static void test_every_slot_in_header_order(void **state)
{
    (void)state;
    size_t n = sizeof slots / sizeof slots[0];
    assert_int_equal(n, sizeof(struct _cl_icd_dispatch) / sizeof(void *));
    for (size_t i = 0; i < n; i++) {
        if (slots[i].offset != i * sizeof(void *))
            fail_msg("entries.h row %zu (%s) is slot %zu in cl_icd.h", i, slots[i].name, slots[i].offset / sizeof(void *));
    }
}

static void test_table_filled(void **state)
{
    (void)state;
    uintptr_t words[sizeof(struct _cl_icd_dispatch) / sizeof(void *)];
    memcpy(words, &vast_dispatch, sizeof words);
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        if (slots[i].null_allowed)
            assert_true(words[i] == 0);
        else if (words[i] == 0)
            fail_msg("slot %s is empty", slots[i].name);
    }
}

static void test_unsupported_entries_answer_errors(void **state)
{
    (void)state;
    cl_int err = CL_SUCCESS;
    assert_null(vast_dispatch.clCreateFromGLBuffer(NULL, 0, 0, &err));
    assert_int_equal(err, CL_INVALID_CONTEXT);
    assert_null(vast_dispatch.clCreateFromGLBuffer(NULL, 0, 0, NULL)); /* errcode_ret may be NULL */
    assert_int_equal(vast_dispatch.clGetGLObjectInfo(NULL, NULL, NULL), CL_INVALID_GL_OBJECT);
    assert_int_equal(vast_dispatch.clGetGLContextInfoKHR(NULL, 0, 0, NULL, NULL), CL_INVALID_OPERATION);
    assert_int_equal(vast_dispatch.clCreateSubDevicesEXT(NULL, NULL, 0, NULL, NULL), CL_INVALID_OPERATION);
    err = CL_SUCCESS;
    assert_null(vast_dispatch.clCreateEventFromEGLSyncKHR(NULL, NULL, NULL, &err));
    assert_int_equal(err, CL_INVALID_OPERATION);
}

static void test_invalid_handles_through_table(void **state)
{
    (void)state;
    /* A foreign object: another platform's dispatch table first. */
    static const struct _cl_icd_dispatch other = {0};
    struct { const struct _cl_icd_dispatch *d; uint32_t words[16]; } foreign = {&other, {0}};
    cl_int err = CL_SUCCESS;
    assert_int_equal(vast_dispatch.clRetainContext(NULL), CL_INVALID_CONTEXT);
    assert_int_equal(vast_dispatch.clRetainContext((cl_context)&foreign), CL_INVALID_CONTEXT);
    assert_int_equal(vast_dispatch.clReleaseMemObject(NULL), CL_INVALID_MEM_OBJECT);
    assert_int_equal(vast_dispatch.clFinish(NULL), CL_INVALID_COMMAND_QUEUE);
    assert_int_equal(vast_dispatch.clReleaseKernel((cl_kernel)&foreign), CL_INVALID_KERNEL);
    assert_int_equal(vast_dispatch.clWaitForEvents(0, NULL), CL_INVALID_VALUE);
    assert_null(vast_dispatch.clCreateBuffer(NULL, 0, 16, NULL, &err));
    assert_int_equal(err, CL_INVALID_CONTEXT);
    assert_null(vast_dispatch.clCreateKernel(NULL, "k", &err));
    assert_int_equal(err, CL_INVALID_PROGRAM);
    assert_int_equal(vast_dispatch.clGetDeviceInfo(NULL, CL_DEVICE_NAME, 0, NULL, NULL), CL_INVALID_DEVICE);
}

VAST_CMOCKA_MAIN(NULL, NULL,
                 test_every_slot_in_header_order, test_table_filled, test_unsupported_entries_answer_errors,
                 test_invalid_handles_through_table)
