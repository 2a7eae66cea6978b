/*
 * prebuild.c: see prebuild.h. One worker thread, started on first use, over a FIFO of
 * (program, device) jobs under `lock`; `changed` wakes the worker and the drainers. The job a
 * worker has in hand is `busy`; the exit handler sets `stopping` and waits for it.
 * See also variant.c (vast_variant_claim_prebuild, vast_variant_prebuild).
 */
#include "prebuild.h"

#include "launch.h"
#include "variant.h"
#include "../base/config.h"
#include "../base/log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct job {
    struct job *next;
    cl_program program; /* retained */
    cl_device_id device;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct job *head, **tail = &head;
static bool started, stopping, busy;

static void *worker(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (head == NULL && !stopping)
            pthread_cond_wait(&changed, &lock);
        if (stopping)
            break;
        struct job *j = head;
        if ((head = j->next) == NULL)
            tail = &head;
        busy = true;
        pthread_mutex_unlock(&lock);
        if (atomic_load(&j->program->obj.refcount) > 1) /* else the application released it: skip */
            vast_variant_prebuild(j->program, j->device);
        VAST_RELEASE(j->program);
        free(j);
        pthread_mutex_lock(&lock);
        busy = false;
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

#define EXIT_WAIT_S 30 /* the longest exit waits for the step in hand */

/* At exit: the step in hand ends before the drivers and libclang are torn down, if it ends
 * within EXIT_WAIT_S (a process that never exits is the worse failure); programs still queued
 * are not built. */
static void stop(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += EXIT_WAIT_S;
    pthread_mutex_lock(&lock);
    bool was = stopping;
    stopping = true;
    pthread_cond_broadcast(&changed);
    int rc = 0;
    while (busy && rc == 0)
        rc = pthread_cond_timedwait(&changed, &lock, &until);
    pthread_mutex_unlock(&lock);
    if (rc != 0 && !was)
        vast_warn("exit: a background build was still running after %d s; not waiting for it", EXIT_WAIT_S);
}

static void stop_at_exit(void)
{
    stop();
}

static void stop_at_main_thread_exit(void *unused)
{
    (void)unused;
    stop();
}

/* glibc's exit() runs the exiting thread's thread_local destructors first, before every atexit
 * handler; it exports their registration to C++ runtimes. */
extern int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso_symbol) __attribute__((weak));
extern void *__dso_handle;

/* The wait must come before every teardown, not only before the handlers registered ahead of
 * ours: exit() runs atexit handlers in reverse order of registration, and a driver's compiler
 * registers the destructors of its function-local statics when a build first makes them,
 * which can be the background build itself (CI: e2e.platform.test_api ended with SIGSEGV in
 * PoCL's LLVM, in the instruction selection of VAST's paged variant, while stop_at_exit still
 * waited for it; also libclang's statics, "pure virtual method called" under TSan). So on the
 * main thread, whose exit() is the program's, the wait is a thread_local destructor, which exit()
 * runs before any atexit handler. atexit covers exit() called on another thread as well as
 * it can. A main thread that ends with pthread_exit while others go on stops the background
 * builds too: launches then build what they need themselves. */
static void hook_main_thread_exit(void)
{
    /* Only the main thread registers, so one flag for the process serves. (No thread_local
     * here: one more in this library made LeakSanitizer's stop-the-world crash at every exit,
     * "Tracer caught signal 11", in the ASan builds of CI.) */
    static atomic_bool hooked;
    if (atomic_load(&hooked) || gettid() != getpid() || __cxa_thread_atexit_impl == NULL)
        return;
    atomic_store(&hooked, __cxa_thread_atexit_impl(stop_at_main_thread_exit, NULL, &__dso_handle) == 0);
}

/* Lock held. */
static bool start_worker(void)
{
    if (started)
        return true;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the application's signals stay on its threads */
    pthread_t t;
    started = pthread_create(&t, &attr, worker, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (started)
        atexit(stop_at_exit);
    return started;
}

static atomic_ulong queued_ever;

/* VAST_BUILD_WAIT: where every launch runs paged, the variants are certain to be needed, and a
 * build in the background only moves the driver's compile into the application's first launch
 * (NVIDIA's compile cache cold: forced paged NBody 0.26 s against 0.018 natively, its pins and
 * launch held by the driver while it compiled; samples/results/h200-2026-11-30-paged/, c1). */
static bool build_waits(void)
{
    const struct vast_config *cfg = vast_config_get();
    return cfg->build_wait == VAST_AUTOBOOL_ON || (cfg->build_wait == VAST_AUTOBOOL_AUTO && cfg->force_paged);
}

void vast_prebuild_start(cl_program program, cl_device_id device)
{
    if (device == NULL || !device->is_root || !vast_variant_claim_prebuild(program))
        return;
    if (build_waits()) {
        vast_variant_prebuild(program, device);
        vast_paged_prepare(device);
        return;
    }
    struct job *j = malloc(sizeof *j);
    if (j == NULL)
        return; /* the launch builds */
    j->next = NULL;
    j->program = program;
    j->device = device;
    VAST_RETAIN(program);
    pthread_mutex_lock(&lock);
    bool queued = !stopping && start_worker();
    if (queued) {
        hook_main_thread_exit();
        *tail = j;
        tail = &j->next;
        atomic_fetch_add(&queued_ever, 1);
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    if (!queued) {
        VAST_RELEASE(program);
        free(j);
    }
}

void vast_prebuild_drain(void)
{
    pthread_mutex_lock(&lock);
    while ((head != NULL || busy) && !stopping)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

unsigned long vast_prebuild_queued(void) { return atomic_load(&queued_ever); }

bool vast_prebuild_busy(void)
{
    pthread_mutex_lock(&lock);
    bool b = busy;
    pthread_mutex_unlock(&lock);
    return b;
}
