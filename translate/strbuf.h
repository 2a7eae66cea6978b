/* strbuf.h - growable byte strings for the translator (translate/ only).
 * Invariant: data is always NUL-terminated when non-NULL; len excludes the NUL.
 * Allocation failure aborts: translate/ works on program-sized inputs and has no
 * meaningful partial result to return. */
#ifndef VAST_TRANSLATE_STRBUF_H
#define VAST_TRANSLATE_STRBUF_H
#include <stddef.h>

struct strbuf {
    char *data;
    size_t len;
    size_t cap;
};

void strbuf_append(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *strbuf_take(struct strbuf *sb); /* returns data (never NULL) and resets sb */
void strbuf_free(struct strbuf *sb);
char *translate_strdup(const char *s);
void *translate_xrealloc(void *p, size_t n);

#endif
