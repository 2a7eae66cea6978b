/* strbuf.c - growable strings used to build translated sources and messages.
 * Owns nothing beyond its buffers; callers free with strbuf_free/strbuf_take. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *translate_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "vast: translate: out of memory (%zu bytes)\n", n);
        abort();
    }
    return q;
}

char *translate_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = translate_xrealloc(NULL, n);
    memcpy(d, s, n);
    return d;
}

static void strbuf_reserve(struct strbuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    sb->data = translate_xrealloc(sb->data, cap);
    sb->cap = cap;
}

void strbuf_append(struct strbuf *sb, const char *s, size_t n)
{
    strbuf_reserve(sb, n);
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
    strbuf_append(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    strbuf_reserve(sb, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

char *strbuf_take(struct strbuf *sb)
{
    if (!sb->data)
        strbuf_reserve(sb, 0), sb->data[0] = '\0';
    char *d = sb->data;
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return d;
}

void strbuf_free(struct strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}
