/*
 * callback.h: trampolines for callbacks the real driver calls with real handles, so that the
 * application's callback receives the VAST handle it knows. Each real callback runs exactly
 * once; a trampoline holds a reference on the VAST object until then, except for destructor
 * callbacks (the object is being destroyed: its memory stays readable in quarantine).
 */
#ifndef VAST_INTERPOSE_CALLBACK_H
#define VAST_INTERPOSE_CALLBACK_H

#include "object.h"

typedef void(CL_CALLBACK *vast_mem_fn)(cl_mem, void *);
typedef void(CL_CALLBACK *vast_program_fn)(cl_program, void *);

enum vast_trampoline_kind { VAST_TRAMPOLINE_MEM, VAST_TRAMPOLINE_PROGRAM };

struct vast_trampoline {
    enum vast_trampoline_kind kind;
    union {
        vast_mem_fn mem;
        vast_program_fn program;
    } fn;
    struct vast_object *handle;
    void *user_data;
    bool weak;          /* holds no reference on `handle` (destructor callbacks) */
    _Atomic int owners; /* the pending run, plus the caller for build callbacks */
    _Atomic bool ran;
};

/* A trampoline for the application's `fn(handle, user_data)`; NULL when out of memory. */
struct vast_trampoline *vast_trampoline_mem(vast_mem_fn fn, cl_mem m, void *user_data);
struct vast_trampoline *vast_trampoline_program(vast_program_fn fn, cl_program p, void *user_data, bool weak);

/*
 * Build, compile and link callbacks: the real driver runs them when it accepted the request,
 * before or after returning. After the real call, the caller settles the trampoline with the
 * call's result: a failed call whose callback has not run will never run it.
 */
void vast_trampoline_settle(struct vast_trampoline *t, cl_int err);

/* What the real driver is given, with the trampoline as user_data. */
void CL_CALLBACK vast_trampoline_mem_run(cl_mem real, void *trampoline);
void CL_CALLBACK vast_trampoline_program_run(cl_program real, void *trampoline);

#endif
