/*
 * callback.c: see callback.h. The real handle the driver passes is ignored: the trampoline
 * knows the VAST object.
 */
#include "callback.h"

#include <stdlib.h>

static struct vast_trampoline *trampoline_new(enum vast_trampoline_kind kind, struct vast_object *handle,
                                              void *user_data, bool weak)
{
    struct vast_trampoline *t = malloc(sizeof *t);
    if (t == NULL)
        return NULL;
    t->kind = kind;
    t->handle = handle;
    t->user_data = user_data;
    t->weak = weak;
    atomic_init(&t->owners, kind == VAST_TRAMPOLINE_PROGRAM ? 2 : 1);
    atomic_init(&t->ran, false);
    if (!weak)
        vast_object_retain(handle);
    return t;
}

struct vast_trampoline *vast_trampoline_mem(vast_mem_fn fn, cl_mem m, void *user_data)
{
    struct vast_trampoline *t = trampoline_new(VAST_TRAMPOLINE_MEM, &m->obj, user_data, true);
    if (t != NULL)
        t->fn.mem = fn;
    return t;
}

struct vast_trampoline *vast_trampoline_program(vast_program_fn fn, cl_program p, void *user_data, bool weak)
{
    struct vast_trampoline *t = trampoline_new(VAST_TRAMPOLINE_PROGRAM, &p->obj, user_data, weak);
    if (t != NULL)
        t->fn.program = fn;
    return t;
}

static void trampoline_done(struct vast_trampoline *t)
{
    if (atomic_fetch_sub(&t->owners, 1) != 1)
        return;
    if (!t->weak)
        vast_object_release(t->handle);
    free(t);
}

void vast_trampoline_settle(struct vast_trampoline *t, cl_int err)
{
    if (t == NULL)
        return;
    if (err != CL_SUCCESS && !atomic_load(&t->ran))
        trampoline_done(t); /* the run that will not happen */
    trampoline_done(t);
}

void CL_CALLBACK vast_trampoline_mem_run(cl_mem real, void *trampoline)
{
    (void)real;
    struct vast_trampoline *t = trampoline;
    t->fn.mem((cl_mem)t->handle, t->user_data);
    trampoline_done(t);
}

void CL_CALLBACK vast_trampoline_program_run(cl_program real, void *trampoline)
{
    struct vast_trampoline *t = trampoline;
    /* clLinkProgram's callback may run before the real call returns its program. */
    cl_program expected = NULL;
    atomic_compare_exchange_strong(&((cl_program)t->handle)->real, &expected, real);
    t->fn.program((cl_program)t->handle, t->user_data);
    atomic_store(&t->ran, true);
    trampoline_done(t);
}
