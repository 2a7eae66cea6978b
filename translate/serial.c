/*
 * serial.c: a struct translate_result as bytes and back (translate.h, translate_result_pack),
 * for VAST's persistent cache. One walk over the struct serves both directions, so a field
 * cannot be written and not read. Format: "VTRS", format version, TRANSLATE_ABI_VERSION, then
 * every field in declaration order; integers as 8 bytes little-endian, strings as a length
 * (~0: NULL) and their bytes, arrays as a count and their elements. The reader checks every
 * length against the bytes left, every enum against its range and that nothing trails; any
 * failure frees what was read and says no.
 */
#include "translate.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SERIAL_MAGIC 0x53525456u /* "VTRS" */
#define SERIAL_FORMAT 4u /* 2: resumable loops' fields; 3: whole stores and their guards; 4: ranged loops */
#define NULL_STRING UINT64_MAX

/* A tripwire for the walk below: a field added to one of these structs must be walked too
 * (then update its size here, and SERIAL_FORMAT). Sizes on LP64 targets. */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct translate_kernel) == 80 && sizeof(struct translate_result) == 72 &&
                   sizeof(struct translate_arg) == 32 && sizeof(struct translate_diag) == 40 &&
                   sizeof(struct translate_anode) == 16 && sizeof(struct translate_aexpr) == 16 &&
                   sizeof(struct translate_aloop) == 56 && sizeof(struct translate_asite) == 56 &&
                   sizeof(struct translate_aguard) == 40 &&
                   sizeof(struct translate_affine) == 32,
               "a struct of translate.h changed: walk its new fields in serial.c");
#endif

struct ser {
    bool reading, bad;
    unsigned char *buf;
    size_t len, cap, pos;
};

static void put_bytes(struct ser *s, const void *p, size_t n)
{
    if (s->bad)
        return;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        unsigned char *b = realloc(s->buf, cap);
        if (b == NULL) {
            s->bad = true;
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static bool get_bytes(struct ser *s, void *p, size_t n)
{
    if (s->bad || n > s->len - s->pos) {
        s->bad = true;
        return false;
    }
    memcpy(p, s->buf + s->pos, n);
    s->pos += n;
    return true;
}

static void ser_u64(struct ser *s, uint64_t *v)
{
    unsigned char b[8];
    if (s->reading) {
        *v = 0;
        if (get_bytes(s, b, 8))
            for (int i = 7; i >= 0; i--)
                *v = *v << 8 | b[i];
        return;
    }
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(*v >> (8 * i));
    put_bytes(s, b, 8);
}

/* An integer field of any type, its value checked against max when read. */
#define SER_INT(s, field, max)                                                                    \
    do {                                                                                          \
        uint64_t v_ = (uint64_t)(field);                                                          \
        ser_u64((s), &v_);                                                                        \
        if ((s)->reading) {                                                                       \
            (s)->bad = (s)->bad || v_ > (uint64_t)(max);                                          \
            (field) = (__typeof__(field))v_;                                                      \
        }                                                                                         \
    } while (0)

static void ser_str(struct ser *s, char **p)
{
    uint64_t n = *p != NULL ? strlen(*p) : NULL_STRING;
    ser_u64(s, &n);
    if (!s->reading) {
        if (*p != NULL)
            put_bytes(s, *p, n);
        return;
    }
    *p = NULL;
    if (n == NULL_STRING || s->bad)
        return;
    if (n > s->len - s->pos || (*p = malloc(n + 1)) == NULL) {
        s->bad = true;
        return;
    }
    get_bytes(s, *p, n);
    (*p)[n] = '\0';
    if (memchr(*p, '\0', n) != NULL) /* a string holds no NUL: the length said otherwise */
        s->bad = true;
}

/* An array's count, and its storage when reading (zeroed: a half-read array frees cleanly).
 * Each element takes at least 8 bytes, which bounds the count by the bytes left. */
static bool ser_array(struct ser *s, void **arr, uint64_t *count, size_t elem)
{
    ser_u64(s, count);
    if (!s->reading || s->bad)
        return !s->bad;
    *arr = NULL;
    if (*count > (s->len - s->pos) / 8) {
        s->bad = true;
        *count = 0;
        return false;
    }
    if (*count > 0 && (*arr = calloc(*count, elem)) == NULL)
        s->bad = true;
    return !s->bad;
}

static void ser_aexpr(struct ser *s, struct translate_aexpr *e)
{
    uint64_t n = e->n;
    if (!ser_array(s, (void **)&e->nodes, &n, sizeof *e->nodes))
        return;
    if (s->reading)
        e->n = (unsigned)n;
    for (unsigned i = 0; i < e->n && !s->bad; i++) {
        struct translate_anode *d = &e->nodes[i];
        SER_INT(s, d->op, TRANSLATE_AOP_EITHER);
        SER_INT(s, d->bits, 64);
        SER_INT(s, d->is_signed, 1);
        SER_INT(s, d->v, UINT64_MAX);
    }
}

static void ser_guards(struct ser *s, struct translate_asite *site)
{
    uint64_t n = site->nguards;
    if (!ser_array(s, (void **)&site->guards, &n, sizeof *site->guards))
        return;
    if (s->reading)
        site->nguards = (unsigned)n;
    for (unsigned i = 0; i < site->nguards && !s->bad; i++) {
        ser_aexpr(s, &site->guards[i].lhs);
        ser_aexpr(s, &site->guards[i].rhs);
        SER_INT(s, site->guards[i].cmp, TRANSLATE_ACMP_LE);
    }
}

static void ser_affine(struct ser *s, struct translate_affine **pa)
{
    uint64_t present = *pa != NULL;
    SER_INT(s, present, 1);
    if (s->reading)
        *pa = present && !s->bad ? calloc(1, sizeof **pa) : NULL;
    struct translate_affine *a = *pa;
    if (a == NULL) {
        s->bad = s->bad || present;
        return;
    }
    uint64_t n = a->nsites;
    if (!ser_array(s, (void **)&a->sites, &n, sizeof *a->sites))
        return;
    if (s->reading)
        a->nsites = (unsigned)n;
    for (unsigned i = 0; i < a->nsites && !s->bad; i++) {
        SER_INT(s, a->sites[i].arg, UINT32_MAX);
        SER_INT(s, a->sites[i].bytes, UINT32_MAX);
        SER_INT(s, a->sites[i].access, TRANSLATE_READ | TRANSLATE_WRITE);
        SER_INT(s, a->sites[i].whole, 1);
        ser_aexpr(s, &a->sites[i].offset);
        ser_guards(s, &a->sites[i]);
        SER_INT(s, a->sites[i].range_part, 2);
        SER_INT(s, a->sites[i].range_loop, UINT32_MAX);
    }
    n = a->nloops;
    if (!ser_array(s, (void **)&a->loops, &n, sizeof *a->loops))
        return;
    if (s->reading)
        a->nloops = (unsigned)n;
    for (unsigned i = 0; i < a->nloops && !s->bad; i++) {
        ser_aexpr(s, &a->loops[i].first);
        ser_aexpr(s, &a->loops[i].bound);
        ser_aexpr(s, &a->loops[i].step);
        SER_INT(s, a->loops[i].cmp, TRANSLATE_ACMP_GE);
        SER_INT(s, a->loops[i].ranged, 1);
    }
    SER_INT(s, a->ranges, 1);
    for (unsigned i = 0; i < a->nsites && !s->bad; i++) /* a site's ranged loop is one of them */
        s->bad = a->sites[i].range_part != 0 && (a->sites[i].range_loop >= a->nloops ||
                                                 !a->loops[a->sites[i].range_loop].ranged);
}

static void ser_kernel(struct ser *s, struct translate_kernel *k)
{
    ser_str(s, &k->name);
    uint64_t n = k->num_args;
    if (!ser_array(s, (void **)&k->args, &n, sizeof *k->args))
        return;
    if (s->reading)
        k->num_args = (unsigned)n;
    for (unsigned i = 0; i < k->num_args && !s->bad; i++) {
        struct translate_arg *a = &k->args[i];
        ser_str(s, &a->name);
        ser_str(s, &a->type);
        SER_INT(s, a->kind, TRANSLATE_ARG_SAMPLER);
        SER_INT(s, a->elem_size, UINT32_MAX);
        SER_INT(s, a->access, TRANSLATE_READ | TRANSLATE_WRITE);
    }
    SER_INT(s, k->paged_ok, 1);
    SER_INT(s, k->uses_global_atomics, 1);
    SER_INT(s, k->may_be_non_idempotent, 1);
    SER_INT(s, k->data_dependent_addresses, 1);
    SER_INT(s, k->work_group_bound, 1);
    ser_affine(s, &k->affine);
    SER_INT(s, k->iteration_ranges, 1);
    SER_INT(s, k->resumable, 1);
    SER_INT(s, k->spill_item_bytes, UINT64_MAX);
    SER_INT(s, k->spill_group_bytes, UINT64_MAX);
}

static void ser_diag(struct ser *s, struct translate_diag *d)
{
    ser_str(s, &d->kernel);
    ser_str(s, &d->construct);
    ser_str(s, &d->file);
    SER_INT(s, d->line, UINT32_MAX);
    ser_str(s, &d->message);
}

static void ser_result(struct ser *s, struct translate_result *r)
{
    uint64_t magic = SERIAL_MAGIC, format = SERIAL_FORMAT, abi = TRANSLATE_ABI_VERSION;
    ser_u64(s, &magic);
    ser_u64(s, &format);
    ser_u64(s, &abi);
    if (magic != SERIAL_MAGIC || format != SERIAL_FORMAT || abi != TRANSLATE_ABI_VERSION)
        s->bad = true;
    ser_str(s, &r->paged_source);
    ser_str(s, &r->inspector_source);
    ser_str(s, &r->build_options);
    uint64_t n = r->num_kernels;
    if (ser_array(s, (void **)&r->kernels, &n, sizeof *r->kernels) && s->reading)
        r->num_kernels = n;
    for (size_t i = 0; i < r->num_kernels && !s->bad; i++)
        ser_kernel(s, &r->kernels[i]);
    n = r->num_diags;
    if (ser_array(s, (void **)&r->diags, &n, sizeof *r->diags) && s->reading)
        r->num_diags = n;
    for (size_t i = 0; i < r->num_diags && !s->bad; i++)
        ser_diag(s, &r->diags[i]);
    ser_str(s, &r->error);
    uint64_t secs;
    memcpy(&secs, &r->seconds, sizeof secs);
    ser_u64(s, &secs);
    if (s->reading)
        memcpy(&r->seconds, &secs, sizeof secs);
}

void *translate_result_pack(const struct translate_result *res, size_t *len)
{
    struct ser s = {.reading = false};
    struct translate_result copy = *res; /* the walk takes non-const pointers; writing changes nothing */
    ser_result(&s, &copy);
    if (s.bad) {
        free(s.buf);
        return NULL;
    }
    *len = s.len;
    return s.buf;
}

int translate_result_unpack(const void *data, size_t len, struct translate_result **out)
{
    struct ser s = {.reading = true, .buf = (unsigned char *)data, .len = len};
    struct translate_result *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL)
        return -1;
    ser_result(&s, r);
    if (s.bad || s.pos != s.len) {
        translate_result_free(r);
        return -1;
    }
    *out = r;
    return 0;
}
