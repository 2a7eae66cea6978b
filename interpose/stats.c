/*
 * stats.c: see stats.h. Kernels are few: a list under one mutex is enough.
 */
#include "stats.h"

#include "../base/config.h"
#include "devops_opencl.h"
#include "kcache.h"
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
    struct vast_launch_counters sum[VAST_MODE_COUNT];
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

void vast_stats_add(struct vast_launch_counters *t, const struct vast_launch_counters *c)
{
    t->partitions += c->partitions;
    t->faults += c->faults;
    t->retries += c->retries;
    t->host_plans += c->host_plans;
    t->kernel_bound += c->kernel_bound;
    t->on_queue += c->on_queue;
    t->backwards += c->backwards;
    t->chained += c->chained;
    t->h2d_bytes += c->h2d_bytes;
    t->d2h_bytes += c->d2h_bytes;
    t->spill_bytes += c->spill_bytes;
    t->overdrafts += c->overdrafts;
    t->overdraft_bytes += c->overdraft_bytes;
    t->build_ns += c->build_ns;
    t->inspector_ns += c->inspector_ns;
    t->plan_ns += c->plan_ns;
    t->transfer_ns += c->transfer_ns;
    t->kernel_ns += c->kernel_ns;
    t->total_ns += c->total_ns;
}

void vast_stats_launch(const char *kernel, enum vast_launch_mode mode, const struct vast_launch_counters *c)
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
        struct vast_launch_counters *t = &k->sum[mode];
        k->launches[mode]++;
        vast_stats_add(t, c);
    }
    pthread_mutex_unlock(&stats_lock);
}

const char *vast_launch_mode_name(enum vast_launch_mode mode)
{
    static const char *const modes[] = {"direct", "paged", "partitioned", "refused"};
    return mode < VAST_MODE_COUNT ? modes[mode] : "?";
}

void vast_stats_print(void)
{
    pthread_mutex_lock(&stats_lock);
    for (struct kernel_stats *k = kernels; k != NULL; k = k->next)
        for (int m = 0; m < VAST_MODE_COUNT; m++) {
            const struct vast_launch_counters *t = &k->sum[m];
            if (k->launches[m] != 0)
                fprintf(stderr,
                        "vast: stats: kernel=%s mode=%s launches=%lu partitions=%lu faults=%lu retries=%lu "
                        "h2d_bytes=%llu d2h_bytes=%llu build_s=%.6f inspector_s=%.6f plan_s=%.6f transfer_s=%.6f kernel_s=%.6f "
                        "total_s=%.6f host_plans=%lu on_queue=%lu spill_bytes=%llu "
                        "overdrafts=%lu overdraft_bytes=%llu backwards=%lu chained=%lu kernel_bound=%lu\n",
                        k->name, vast_launch_mode_name((enum vast_launch_mode)m), k->launches[m], t->partitions, t->faults, t->retries,
                        (unsigned long long)t->h2d_bytes, (unsigned long long)t->d2h_bytes, t->build_ns * 1e-9,
                        t->inspector_ns * 1e-9,
                        t->plan_ns * 1e-9, t->transfer_ns * 1e-9, t->kernel_ns * 1e-9, t->total_ns * 1e-9, t->host_plans,
                        t->on_queue, (unsigned long long)t->spill_bytes, t->overdrafts,
                        (unsigned long long)t->overdraft_bytes, t->backwards, t->chained, t->kernel_bound);
        }
    uint64_t critical_ns = 0; /* launches waiting for translations and builds */
    for (struct kernel_stats *k = kernels; k != NULL; k = k->next)
        for (int m = 0; m < VAST_MODE_COUNT; m++)
            critical_ns += k->sum[m].build_ns;
    pthread_mutex_unlock(&stats_lock);
    vast_kcache_stats_print(stderr, critical_ns);
    cl_device_id *devices;
    size_t n = vast_platform_devices(&devices);
    for (size_t i = 0; i < n; i++) {
        if (devices[i]->merged_into != NULL || devices[i]->num_members > 1)
            fprintf(stderr, "vast: stats: merged_member=\"%s\" of=\"%s\" launches=%lu partitions=%lu\n",
                    devices[i]->name, devices[i]->merged_into ? devices[i]->merged_into->name : devices[i]->name,
                    atomic_load(&devices[i]->merged_launches), atomic_load(&devices[i]->merged_partitions));
        if (devices[i]->pool == NULL)
            continue;
        struct vast_pool_stats s;
        pagecache_get_pool_stats(devices[i]->pool, &s);
        fprintf(stderr,
                "vast: stats: pool=\"%s\" budget_bytes=%zu page_bytes=%zu h2d_transfers=%llu h2d_bytes=%llu "
                "d2h_transfers=%llu d2h_bytes=%llu hits=%llu misses=%llu evictions=%llu dirty_evictions=%llu "
                "unordered_d2h_transfers=%llu overlap_h2d_bytes=%llu noload_bytes=%llu overdraft_bytes=%zu "
                "overdrafts=%llu overdraft_max_bytes=%llu overdraft_write_backs=%llu twin_h2d_bytes=%llu "
                "merged_d2h_bytes=%llu owned_d2h_bytes=%llu owned_stale_bytes=%llu\n",
                devices[i]->name, devices[i]->pool->nframes * devices[i]->pool->page_size,
                devices[i]->pool->page_size, (unsigned long long)s.h2d_transfers, (unsigned long long)s.h2d_bytes,
                (unsigned long long)s.d2h_transfers, (unsigned long long)s.d2h_bytes, (unsigned long long)s.hits,
                (unsigned long long)s.misses, (unsigned long long)s.evictions, (unsigned long long)s.dirty_evictions,
                (unsigned long long)s.unordered_d2h_transfers, (unsigned long long)s.overlap_h2d_bytes,
                (unsigned long long)s.noload_bytes, devices[i]->pool->overdraft * devices[i]->pool->page_size, (unsigned long long)s.overdrafts,
                (unsigned long long)s.overdraft_max_frames * devices[i]->pool->page_size,
                (unsigned long long)s.overdraft_write_backs, (unsigned long long)s.twin_h2d_bytes,
                (unsigned long long)s.merged_d2h_bytes, (unsigned long long)s.owned_d2h_bytes,
                (unsigned long long)s.owned_stale_bytes);
        /* The transfers of unpinned memory through the device's ring of pinned slots (staging.h):
         * each staged call drains the ring before it returns, so calls and bytes per call say
         * how well a load used it. */
        struct vast_staging_stats st;
        if (pagecache_devops_opencl_staging_stats(devices[i]->pool->dev, &st) == VAST_PC_OK)
            fprintf(stderr,
                    "vast: stats: staging=\"%s\" staged_transfers=%llu staged_bytes=%llu slot_transfers=%llu "
                    "declined=%llu failures=%llu slots=%u slot_bytes=%zu threads=%u\n",
                    devices[i]->name, (unsigned long long)st.transfers, (unsigned long long)st.bytes,
                    (unsigned long long)st.slot_transfers, (unsigned long long)st.declined,
                    (unsigned long long)st.failures, st.slots, st.slot_bytes, st.threads);
    }
}
