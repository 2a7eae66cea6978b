/*
 * stats.c: see stats.h. Kernels are few: a list under one mutex is enough.
 */
#include "stats.h"

#include "../icd/config.h"
#include "object.h"
#include "pagecache.h"
#include "platform.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kernel_stats {
    struct kernel_stats *next;
    char name[128];
    unsigned long launches[VAST_MODE_COUNT];
    double seconds[VAST_MODE_COUNT];
};

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kernel_stats *kernels;
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

static void print_at_exit(void) { vast_stats_print(); }

static void register_atexit(void)
{
    if (vast_config_get()->stats)
        atexit(print_at_exit);
}

void vast_stats_start(void) { pthread_once(&atexit_once, register_atexit); }

void vast_stats_launch(const char *kernel, enum vast_launch_mode mode, double seconds)
{
    vast_stats_start();
    pthread_mutex_lock(&stats_lock);
    struct kernel_stats *k = kernels;
    while (k != NULL && strcmp(k->name, kernel) != 0)
        k = k->next;
    if (k == NULL && (k = calloc(1, sizeof *k)) != NULL) {
        snprintf(k->name, sizeof k->name, "%s", kernel);
        k->next = kernels;
        kernels = k;
    }
    if (k != NULL) {
        k->launches[mode]++;
        k->seconds[mode] += seconds;
    }
    pthread_mutex_unlock(&stats_lock);
}

void vast_stats_print(void)
{
    static const char *const modes[] = {"direct", "paged", "refused"};
    fprintf(stderr, "vast: stats: %-24s %8s %8s %12s\n", "kernel", "mode", "launches", "seconds");
    pthread_mutex_lock(&stats_lock);
    for (struct kernel_stats *k = kernels; k != NULL; k = k->next)
        for (int m = 0; m < VAST_MODE_COUNT; m++)
            if (k->launches[m] != 0)
                fprintf(stderr, "vast: stats: %-24s %8s %8lu %12.6f\n", k->name, modes[m], k->launches[m],
                        k->seconds[m]);
    pthread_mutex_unlock(&stats_lock);
    cl_device_id *devices;
    size_t n = vast_platform_devices(&devices);
    for (size_t i = 0; i < n; i++) {
        if (devices[i]->pool == NULL)
            continue;
        struct vast_pool_stats s;
        pagecache_get_pool_stats(devices[i]->pool, &s);
        fprintf(stderr,
                "vast: stats: page cache of %s: %zu MiB, %zu KiB pages; host->device %llu transfers %.1f MiB; "
                "device->host %llu transfers %.1f MiB; page hits %llu, misses %llu; evictions %llu (%llu dirty)\n",
                devices[i]->name, devices[i]->pool->nframes * devices[i]->pool->page_size >> 20,
                devices[i]->pool->page_size >> 10, (unsigned long long)s.h2d_transfers, s.h2d_bytes / 1048576.0,
                (unsigned long long)s.d2h_transfers, s.d2h_bytes / 1048576.0, (unsigned long long)s.hits,
                (unsigned long long)s.misses, (unsigned long long)s.evictions, (unsigned long long)s.dirty_evictions);
    }
}
