/* preprocess.c - build options and preprocessing (mcpp) for translate/.
 * Expanding macros before parsing lets every access produced by a macro be rewritten
 * on its own (FACTS.md). mcpp keeps #pragma OPENCL EXTENSION and writes #line markers;
 * it has global state, so calls are serialised by one mutex. The source reaches mcpp
 * through a private temporary file; its path in #line markers becomes source_name. */
#include "internal.h"

#include <ctype.h>
#include <mcpp_lib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mcpp_lock = PTHREAD_MUTEX_INITIALIZER;

/* Splits an option string into words, honouring '...' and "..." quoting. */
static char **split_words(const char *s, size_t *n)
{
    char **v = NULL;
    *n = 0;
    while (s && *s) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        struct strbuf w = {0};
        while (*s && !isspace((unsigned char)*s)) {
            if (*s == '"' || *s == '\'') {
                char q = *s++;
                while (*s && *s != q)
                    strbuf_append(&w, s++, 1);
                if (*s)
                    s++;
            } else {
                strbuf_append(&w, s++, 1);
            }
        }
        v = translate_xrealloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = strbuf_take(&w);
    }
    return v;
}

static void add_pp_arg(struct tr_options *o, const char *flag, const char *val)
{
    struct strbuf a = {0};
    strbuf_printf(&a, "%s%s", flag, val);
    o->pp_args = translate_xrealloc(o->pp_args, (o->num_pp_args + 1) * sizeof(char *));
    o->pp_args[o->num_pp_args++] = strbuf_take(&a);
}

static int parse_cl_std(const char *v, struct tr_options *o, char **error)
{
    /* CL3.0 is parsed and built as CL3.0, with the optional features that would take pointers
     * out of the translator's view turned off in the parse (translate.c, parse_unit). */
    static const struct { const char *name, *parse_as; int ver; } known[] = {
        {"CL1.0", "CL1.0", 100}, {"CL1.1", "CL1.1", 110}, {"CL1.2", "CL1.2", 120},
        {"CL3.0", "CL3.0", 300},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(v, known[i].name)) {
            o->cl_std = translate_strdup(known[i].parse_as);
            o->opencl_c_version = known[i].ver;
            return 0;
        }
    struct strbuf e = {0};
    strbuf_printf(&e, "-cl-std=%s: only OpenCL C 1.0-1.2 and 3.0 (without the generic address "
                      "space, pipes, device-side enqueue and program-scope global variables) can be "
                      "translated", v);
    *error = strbuf_take(&e);
    return -1;
}

int tr_parse_options(const char *opts, struct tr_options *o, char **error)
{
    memset(o, 0, sizeof *o);
    o->opencl_c_version = 120;
    size_t n;
    char **w = split_words(opts, &n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *a = w[i];
        const char *flags[] = {"-D", "-U", "-I"};
        int handled = 0;
        for (int f = 0; f < 3 && !handled; f++) {
            if (strncmp(a, flags[f], 2))
                continue;
            handled = 1;
            if (a[2])
                add_pp_arg(o, flags[f], a + 2);
            else if (i + 1 < n)
                add_pp_arg(o, flags[f], w[++i]);
            else
                *error = translate_strdup("build option ends with a bare -D/-U/-I"), rc = -1;
        }
        if (handled)
            continue;
        if (!strncmp(a, "-cl-std=", 8)) {
            rc = parse_cl_std(a + 8, o, error);
            if (rc == 0)
                strbuf_printf(&o->rest, "%s-cl-std=%s", o->rest.len ? " " : "", o->cl_std);
            continue;
        }
        strbuf_printf(&o->rest, "%s%s", o->rest.len ? " " : "", a);
    }
    for (size_t i = 0; i < n; i++)
        free(w[i]);
    free(w);
    if (!o->cl_std && rc == 0)
        o->cl_std = translate_strdup("CL1.2");
    return rc;
}

void tr_free_options(struct tr_options *o)
{
    for (size_t i = 0; i < o->num_pp_args; i++)
        free(o->pp_args[i]);
    free(o->pp_args);
    free(o->cl_std);
    strbuf_free(&o->rest);
}

/* What the real driver predefines, so that #if blocks choose the same branch. */
static void add_driver_defines(struct tr_options *o, const struct translate_options *to,
                               struct strbuf *args)
{
    strbuf_printf(args, "-D__OPENCL_VERSION__=%u\n-D__OPENCL_C_VERSION__=%d\n"
                        "-DCL_VERSION_1_0=100\n-DCL_VERSION_1_1=110\n-DCL_VERSION_1_2=120\n"
                        "-DCL_VERSION_2_0=200\n-DCL_VERSION_3_0=300\n"
                        "-D__ENDIAN_LITTLE__=1\n-D__kernel_exec(X,typen)=__kernel "
                        "__attribute__((work_group_size_hint(X,1,1))) "
                        "__attribute__((vec_type_hint(typen)))\n",
                  to && to->opencl_version ? to->opencl_version : 120u, o->opencl_c_version);
    if (to && to->image_support)
        strbuf_puts(args, "-D__IMAGE_SUPPORT__=1\n");
    size_t n;
    char **ext = split_words(to ? to->device_extensions : NULL, &n);
    for (size_t i = 0; i < n; i++) {
        strbuf_printf(args, "-D%s=1\n", ext[i]);
        free(ext[i]);
    }
    free(ext);
}

/* Replaces `"<path>"` in #line markers with `"<name>"`. */
static char *rename_line_markers(const char *pp, const char *path, const char *name)
{
    struct strbuf out = {0};
    struct strbuf quoted = {0};
    strbuf_printf(&quoted, "\"%s\"", path);
    const char *p = pp;
    for (const char *hit; (hit = strstr(p, quoted.data));) {
        strbuf_append(&out, p, (size_t)(hit - p));
        strbuf_printf(&out, "\"%s\"", name);
        p = hit + quoted.len;
    }
    strbuf_puts(&out, p);
    strbuf_free(&quoted);
    return strbuf_take(&out);
}

static char *run_mcpp(char **argv, int argc, char **error)
{
    pthread_mutex_lock(&mcpp_lock);
    mcpp_reset_def_out_func();
    mcpp_use_mem_buffers(1);
    int rc = mcpp_lib_main(argc, argv);
    const char *out = mcpp_get_mem_buffer(OUT);
    const char *err = mcpp_get_mem_buffer(ERR);
    char *res = NULL;
    if (rc != 0 || !out) {
        struct strbuf e = {0};
        strbuf_printf(&e, "preprocessing failed (mcpp status %d): %s", rc, err ? err : "");
        *error = strbuf_take(&e);
    } else {
        res = translate_strdup(out);
    }
    /* No mcpp_use_mem_buffers(0) here: it frees the buffers but keeps the pointers, and
     * the next mcpp_use_mem_buffers(1) would free them again. The next call frees them. */
    pthread_mutex_unlock(&mcpp_lock);
    return res;
}

/* Debian's libmcpp (2.7.2) aborts the process on a logical line (backslash continuations
 * joined) of about 64 KiB: its "too long line" message is formatted into a fixed buffer
 * (measured: 60,014 bytes pass, 65,614 abort in glibc's fortified vsprintf). A source with
 * such a line is not translated: its kernels run direct, or are refused with this reason.
 * Not covered: headers the source includes, and one macro expanding past mcpp's buffer
 * (NMACWORK), which abort the same way. */
#define TR_MCPP_MAX_LINE 60000

static size_t longest_logical_line(const char *s)
{
    size_t longest = 0, cur = 0;
    for (; *s; s++) {
        if (*s == '\\' && (s[1] == '\n' || (s[1] == '\r' && s[2] == '\n'))) {
            s += s[1] == '\r' ? 2 : 1; /* a continuation: the line goes on */
            continue;
        }
        if (*s == '\n') {
            cur = 0;
            continue;
        }
        if (++cur > longest)
            longest = cur;
    }
    return longest;
}

char *tr_preprocess(const char *source, const struct tr_options *o,
                    const struct translate_options *to, char **error)
{
    size_t longest = longest_logical_line(source);
    if (longest > TR_MCPP_MAX_LINE) {
        struct strbuf e = {0};
        strbuf_printf(&e, "a source line of %zu bytes is longer than the preprocessor VAST uses takes (%d)",
                      longest, TR_MCPP_MAX_LINE);
        *error = strbuf_take(&e);
        return NULL;
    }
    /* mcpp opens its input by name and resolves links, so a memfd will not do: use a
     * private temporary file, removed at once after preprocessing. */
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/vast-translate-XXXXXX.cl", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(path, 3);
    if (fd < 0) {
        *error = translate_strdup("cannot create a temporary file for mcpp (TMPDIR)");
        return NULL;
    }
    size_t len = strlen(source);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, source + off, len - off);
        if (w <= 0) {
            close(fd);
            unlink(path);
            *error = translate_strdup("writing the source to a temporary file failed");
            return NULL;
        }
        off += (size_t)w;
    }
    close(fd);

    struct strbuf a = {0};
    strbuf_puts(&a, "mcpp\n-N\n-W0\n");
    add_driver_defines((struct tr_options *)o, to, &a);
    for (size_t i = 0; i < o->num_pp_args; i++)
        strbuf_printf(&a, "%s\n", o->pp_args[i]);
    strbuf_printf(&a, "-I.\n%s\n", path);
    size_t argc = 0;
    char **argv = NULL;
    for (char *s = a.data, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        *nl = '\0';
        argv = translate_xrealloc(argv, (argc + 1) * sizeof *argv);
        argv[argc++] = s;
    }
    char *pp = run_mcpp(argv, (int)argc, error);
    free(argv);
    strbuf_free(&a);
    unlink(path);
    if (!pp)
        return NULL;
    char *res = rename_line_markers(pp, path, to && to->source_name ? to->source_name
                                                                     : "input.cl");
    free(pp);
    return res;
}
