/*
 * diskcache.c: see diskcache.h for the rules. Entries are files named <hex key>.vc; writers
 * go through <dir>/.tmp-<pid>-<thread>-<n> and rename(2).
 */
#include "diskcache.h"

#include "config.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX ".tmp-"
#define STALE_TMP_SECONDS 3600

static bool make_dirs(const char *dir)
{
    char path[sizeof((struct vast_diskcache *)0)->dir];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path || path[0] == '\0')
        return false;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return false;
        *p = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

bool vast_diskcache_open(struct vast_diskcache *c, const char *dir, uint64_t max_bytes)
{
    if (snprintf(c->dir, sizeof c->dir, "%s", dir) >= (int)sizeof c->dir || !make_dirs(c->dir))
        return false;
    c->max_bytes = max_bytes;
    return true;
}

bool vast_diskcache_dir(const char *setting, char *out, size_t size)
{
    if (setting == NULL || setting[0] == '\0' || strcmp(setting, "off") == 0)
        return false;
    if (strcmp(setting, "auto") != 0)
        return snprintf(out, size, "%s", setting) < (int)size;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg != NULL && xdg[0] == '/')
        return snprintf(out, size, "%s/vast", xdg) < (int)size;
    if (home != NULL && home[0] != '\0')
        return snprintf(out, size, "%s/.cache/vast", home) < (int)size;
    return false;
}

static struct vast_diskcache default_cache;
static bool default_ok;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void open_default(void)
{
    const struct vast_config *cfg = vast_config_get();
    char dir[sizeof default_cache.dir];
    if (!vast_diskcache_dir(cfg->cache_dir, dir, sizeof dir))
        return;
    default_ok = vast_diskcache_open(&default_cache, dir, cfg->cache_max);
    if (!default_ok)
        vast_warn("VAST_CACHE_DIR: cannot use '%s' as the cache folder: building without a cache", dir);
}

const struct vast_diskcache *vast_diskcache_default(void)
{
    pthread_once(&default_once, open_default);
    return default_ok ? &default_cache : NULL;
}

static void entry_path(const struct vast_diskcache *c, const uint8_t key[VAST_SHA256_BYTES], char *out, size_t size)
{
    char hex[2 * VAST_SHA256_BYTES + 1];
    for (int i = 0; i < VAST_SHA256_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    snprintf(out, size, "%s/%s" VAST_DISKCACHE_SUFFIX, c->dir, hex);
}

/* All len bytes read (or written), across short transfers and signals. */
static bool transfer_all(int fd, void *buf, size_t len, bool writing)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = writing ? write(fd, (const char *)buf + done, len - done) : read(fd, (char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

static bool read_all(int fd, void *buf, size_t len) { return transfer_all(fd, buf, len, false); }
static bool write_all(int fd, const void *buf, size_t len) { return transfer_all(fd, (void *)buf, len, true); }

/* The entry's payload if its header and checksum hold, else NULL. */
static void *read_entry(int fd, const uint8_t key[VAST_SHA256_BYTES], uint64_t max_bytes, size_t *len)
{
    struct stat st;
    struct vast_diskcache_header h;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof h || (uint64_t)st.st_size > max_bytes ||
        !read_all(fd, &h, sizeof h))
        return NULL;
    if (memcmp(h.magic, VAST_DISKCACHE_MAGIC, sizeof h.magic) != 0 || h.format != VAST_DISKCACHE_FORMAT ||
        h.header_bytes != sizeof h || h.payload_bytes != (uint64_t)st.st_size - sizeof h ||
        memcmp(h.key, key, VAST_SHA256_BYTES) != 0)
        return NULL;
    void *data = malloc(h.payload_bytes > 0 ? h.payload_bytes : 1);
    uint8_t sum[VAST_SHA256_BYTES];
    if (data == NULL || !read_all(fd, data, h.payload_bytes)) {
        free(data);
        return NULL;
    }
    vast_sha256(data, h.payload_bytes, sum);
    if (memcmp(sum, h.checksum, sizeof sum) != 0) {
        free(data);
        return NULL;
    }
    *len = h.payload_bytes;
    return data;
}

void *vast_diskcache_get(const struct vast_diskcache *c, const uint8_t key[VAST_SHA256_BYTES], size_t *len)
{
    char path[sizeof c->dir + 80];
    entry_path(c, key, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *data = read_entry(fd, key, c->max_bytes, len);
    if (data != NULL)
        futimens(fd, NULL); /* least recently used: a hit makes the entry young */
    close(fd);
    if (data == NULL) {
        vast_debug("cache entry %s is not valid: removed", path);
        unlink(path); /* a writer's rename may have replaced it since: then it misses once more */
    }
    return data;
}

bool vast_diskcache_put(const struct vast_diskcache *c, const uint8_t key[VAST_SHA256_BYTES], const void *data,
                        size_t len)
{
    static atomic_uint counter;
    struct vast_diskcache_header h = {.format = VAST_DISKCACHE_FORMAT, .header_bytes = sizeof h, .payload_bytes = len};
    if (len > c->max_bytes || sizeof h + len > c->max_bytes)
        return false;
    memcpy(h.magic, VAST_DISKCACHE_MAGIC, sizeof h.magic);
    memcpy(h.key, key, VAST_SHA256_BYTES);
    vast_sha256(data, len, h.checksum);
    char tmp[sizeof c->dir + 80], path[sizeof c->dir + 80];
    snprintf(tmp, sizeof tmp, "%s/" TMP_PREFIX "%ld-%lx-%u", c->dir, (long)getpid(), (unsigned long)pthread_self(),
             atomic_fetch_add(&counter, 1));
    entry_path(c, key, path, sizeof path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return false;
    bool ok = write_all(fd, &h, sizeof h) && write_all(fd, data, len);
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok)
        unlink(tmp);
    else
        vast_diskcache_trim(c, c->max_bytes);
    return ok;
}

struct entry {
    char name[96];
    struct timespec mtime;
    uint64_t bytes;
};

static int older_first(const void *a, const void *b)
{
    const struct timespec *x = &((const struct entry *)a)->mtime, *y = &((const struct entry *)b)->mtime;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The folder's entries (and the total of their sizes); stale temporary files are removed. */
static struct entry *list_entries(const struct vast_diskcache *c, size_t *count, uint64_t *total)
{
    DIR *d = opendir(c->dir);
    struct entry *list = NULL;
    size_t n = 0, cap = 0;
    *total = 0;
    time_t now = time(NULL);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        struct stat st;
        size_t nl = strlen(e->d_name), sl = strlen(VAST_DISKCACHE_SUFFIX);
        bool tmp = strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
        bool entry = nl > sl && nl < sizeof list->name && strcmp(e->d_name + nl - sl, VAST_DISKCACHE_SUFFIX) == 0;
        if ((!tmp && !entry) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (tmp) {
            if (now - st.st_mtime > STALE_TMP_SECONDS)
                unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (n == cap) {
            struct entry *more = realloc(list, (cap = cap ? 2 * cap : 64) * sizeof *list);
            if (more == NULL)
                break;
            list = more;
        }
        memcpy(list[n].name, e->d_name, nl + 1); /* nl < sizeof name: checked above */
        list[n].mtime = st.st_mtim;
        list[n].bytes = (uint64_t)st.st_size;
        *total += list[n++].bytes;
    }
    if (d != NULL)
        closedir(d);
    *count = n;
    return list;
}

unsigned vast_diskcache_trim(const struct vast_diskcache *c, uint64_t max_bytes)
{
    size_t n;
    uint64_t total;
    struct entry *list = list_entries(c, &n, &total);
    unsigned removed = 0;
    if (total > max_bytes && list != NULL) {
        qsort(list, n, sizeof *list, older_first);
        char path[sizeof c->dir + 100];
        for (size_t i = 0; i < n && total > max_bytes; i++) {
            snprintf(path, sizeof path, "%s/%s", c->dir, list[i].name);
            if (unlink(path) == 0)
                removed++;
            total -= list[i].bytes; /* gone either way: another process may have removed it */
        }
    }
    free(list);
    return removed;
}
