/* test_diskcache.c - base/sha256.c against FIPS 180-4's vectors, and base/diskcache.c: entries
 * round-trip; a missing, truncated, flipped or foreign entry is a miss and is removed; the
 * folder keeps its bound by removing the least recently used (a hit makes an entry young);
 * a payload over the bound is not stored; temporary files of dead writers go after an hour;
 * VAST_CACHE_DIR's values name the folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/diskcache.h"
#include "vast_cmocka.h"

static void hex(const uint8_t *d, char *out)
{
    for (int i = 0; i < VAST_SHA256_BYTES; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    uint8_t d[VAST_SHA256_BYTES];
    char h[2 * VAST_SHA256_BYTES + 1];
    vast_sha256("abc", 3, d);
    hex(d, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    vast_sha256("", 0, d);
    hex(d, h);
    assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    struct vast_sha256 s; /* the same message fed in odd pieces */
    vast_sha256_init(&s);
    for (size_t i = 0, n = strlen(m); i < n; i += 7)
        vast_sha256_update(&s, m + i, n - i < 7 ? n - i : 7);
    vast_sha256_final(&s, d);
    hex(d, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

struct fixture {
    char dir[64];
    struct vast_diskcache c;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/vast-dc-XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/a/b", f->dir); /* parents are made */
    if (!vast_diskcache_open(&f->c, sub, 1 << 20))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    return rc;
}

static void key_of(unsigned n, uint8_t key[VAST_SHA256_BYTES])
{
    char text[32];
    snprintf(text, sizeof text, "key %u", n);
    vast_sha256(text, strlen(text), key);
}

static void path_of(const struct vast_diskcache *c, unsigned n, char *out, size_t size)
{
    uint8_t key[VAST_SHA256_BYTES];
    char h[2 * VAST_SHA256_BYTES + 1];
    key_of(n, key);
    hex(key, h);
    snprintf(out, size, "%s/%s" VAST_DISKCACHE_SUFFIX, c->dir, h);
}

static void put(const struct vast_diskcache *c, unsigned n, size_t len)
{
    uint8_t key[VAST_SHA256_BYTES];
    key_of(n, key);
    unsigned char *data = malloc(len);
    for (size_t i = 0; i < len; i++)
        data[i] = (unsigned char)(i * 31 + n);
    assert_true(vast_diskcache_put(c, key, data, len));
    free(data);
}

/* Whether entry n is there and holds put()'s bytes. */
static bool holds(const struct vast_diskcache *c, unsigned n, size_t len)
{
    uint8_t key[VAST_SHA256_BYTES];
    key_of(n, key);
    size_t got = 0;
    unsigned char *data = vast_diskcache_get(c, key, &got);
    bool ok = data != NULL && got == len;
    for (size_t i = 0; ok && i < len; i++)
        ok = data[i] == (unsigned char)(i * 31 + n);
    free(data);
    return ok;
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

static void test_round_trip(void **state)
{
    struct fixture *f = *state;
    assert_false(holds(&f->c, 1, 100));
    put(&f->c, 1, 1001);
    put(&f->c, 2, 0);
    assert_true(holds(&f->c, 1, 1001));
    assert_true(holds(&f->c, 2, 0));
    put(&f->c, 1, 77); /* replaced */
    assert_true(holds(&f->c, 1, 77));
}

/* Damage entry 1 by `how`, then it must miss and be gone. */
static void damage(struct fixture *f, int how)
{
    char path[1200];
    put(&f->c, 1, 5000);
    path_of(&f->c, 1, path, sizeof path);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    off_t at = how == 0 ? 3000 : how == 1 ? 40 : 0; /* payload, key in the header, magic */
    if (how == 3) {
        assert_int_equal(ftruncate(fd, 4000), 0);
    } else {
        assert_int_equal(pread(fd, &b, 1, at), 1);
        b ^= 0x10;
        assert_int_equal(pwrite(fd, &b, 1, at), 1);
    }
    close(fd);
    assert_false(holds(&f->c, 1, 5000));
    assert_false(exists(path));
}

static void test_damaged_entries_miss(void **state)
{
    struct fixture *f = *state;
    for (int how = 0; how < 4; how++)
        damage(f, how);
    /* another key's entry under this name (a rename of the wrong file) */
    char from[1200], to[1200];
    put(&f->c, 2, 10);
    path_of(&f->c, 2, from, sizeof from);
    path_of(&f->c, 3, to, sizeof to);
    assert_int_equal(rename(from, to), 0);
    assert_false(holds(&f->c, 3, 10));
}

static void set_age(const struct vast_diskcache *c, unsigned n, time_t seconds_ago)
{
    char path[1200];
    path_of(c, n, path, sizeof path);
    struct timespec t[2] = {{time(NULL) - seconds_ago, 0}, {time(NULL) - seconds_ago, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void test_bound_evicts_least_recently_used(void **state)
{
    struct fixture *f = *state;
    f->c.max_bytes = 4 * (1000 + sizeof(struct vast_diskcache_header)); /* four entries of 1000 */
    for (unsigned n = 1; n <= 4; n++) {
        put(&f->c, n, 1000);
        set_age(&f->c, n, 100 - (time_t)n); /* 1 oldest */
    }
    assert_true(holds(&f->c, 1, 1000)); /* a hit: 1 is now the youngest, 2 the oldest */
    put(&f->c, 5, 1000);
    assert_false(holds(&f->c, 2, 1000));
    assert_true(holds(&f->c, 1, 1000) && holds(&f->c, 3, 1000) && holds(&f->c, 4, 1000) && holds(&f->c, 5, 1000));
    uint8_t key[VAST_SHA256_BYTES];
    key_of(9, key);
    char big[8000] = {0};
    assert_false(vast_diskcache_put(&f->c, key, big, sizeof big)); /* alone over the bound */
    assert_true(holds(&f->c, 5, 1000));
    assert_int_equal(vast_diskcache_trim(&f->c, 0), 4);
}

static void test_stale_temporaries_removed(void **state)
{
    struct fixture *f = *state;
    char old[1200], young[1200];
    snprintf(old, sizeof old, "%s/.tmp-1-2-3", f->c.dir);
    snprintf(young, sizeof young, "%s/.tmp-1-2-4", f->c.dir);
    fclose(fopen(old, "w"));
    fclose(fopen(young, "w"));
    struct timespec t[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    assert_int_equal(utimensat(AT_FDCWD, old, t, 0), 0);
    put(&f->c, 1, 10);
    assert_false(exists(old));
    assert_true(exists(young));
}

static void test_folder_setting(void **state)
{
    (void)state;
    char out[256];
    assert_false(vast_diskcache_dir("", out, sizeof out));
    assert_false(vast_diskcache_dir("off", out, sizeof out));
    assert_true(vast_diskcache_dir("/x/y", out, sizeof out));
    assert_string_equal(out, "/x/y");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    assert_true(vast_diskcache_dir("auto", out, sizeof out));
    assert_string_equal(out, "/xdg/vast");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", "/home/u", 1);
    assert_true(vast_diskcache_dir("auto", out, sizeof out));
    assert_string_equal(out, "/home/u/.cache/vast");
    struct vast_diskcache c;
    assert_false(vast_diskcache_open(&c, "/proc/no/such", 100)); /* cannot be made */
}

VAST_CMOCKA_MAIN(setup, teardown, test_sha256_vectors, test_round_trip, test_damaged_entries_miss,
                 test_bound_evicts_least_recently_used, test_stale_temporaries_removed, test_folder_setting)
