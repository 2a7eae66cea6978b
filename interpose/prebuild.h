/*
 * prebuild.h: background builds (issue 17). From clBuildProgram and clCreateKernel, a
 * program's translation and its paged variant are made on one VAST worker
 * thread (variant.c does the work, through the persistent cache, kcache.h), so the first launch
 * that needs them waits only for what is not done yet, and a program whose launches all run
 * direct pays nothing on the application's thread. The worker holds a reference on the
 * program it works on, so releasing a program during its build is safe (the worker's release
 * frees it); a queued program the application has released is skipped. The inspector is left
 * to the first partitioned launch that needs it (through the persistent cache after the first
 * process). At exit the worker finishes the step it is in and stops; programs still queued
 * are not built. With VAST_BUILD_WAIT (by default where every launch runs paged) the same
 * builds run inside the call instead, where a native build has its compile.
 */
#ifndef VAST_INTERPOSE_PREBUILD_H
#define VAST_INTERPOSE_PREBUILD_H

#include "object.h"

/* Queues the program's build for the device (a root device; others are left to the launch),
 * once per program. Never blocks on a build, unless VAST_BUILD_WAIT says to build here (on
 * the caller's thread, before it returns). */
void vast_prebuild_start(cl_program program, cl_device_id device);

/* Waits until the worker has nothing queued or in hand (tests, benchmarks). */
void vast_prebuild_drain(void);

/* Programs queued to the worker since the process began (tests). */
unsigned long vast_prebuild_queued(void);

/* Whether the worker has a job in hand (tests). */
bool vast_prebuild_busy(void);

#endif
