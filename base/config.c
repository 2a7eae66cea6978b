/*
 * config.c: parses the VAST_CONFIG_LIST variables. A malformed value is reported once on
 * stderr and replaced by its default: a typo in an environment variable must not make an
 * application's OpenCL disappear.
 */
#include "config.h"

#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool vast_parse_size(const char *text, uint64_t *out)
{
    if (text == NULL || !isdigit((unsigned char)*text))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0)
        return false;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case '\0': break;
    default: return false;
    }
    if (shift != 0) {
        end++;
        if (toupper((unsigned char)*end) == 'B' || (*end == 'i' && toupper((unsigned char)end[1]) == 'B'))
            end += *end == 'i' ? 2 : 1;
    }
    if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static bool parse_bool(const char *text, bool *out)
{
    if (!strcmp(text, "1") || !strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcasecmp(text, "on"))
        *out = true;
    else if (!strcmp(text, "0") || !strcasecmp(text, "false") || !strcasecmp(text, "no") || !strcasecmp(text, "off") || !*text)
        *out = false;
    else
        return false;
    return true;
}

static const char *const log_names[] = {"error", "warn", "info", "debug"};
static const char *const inspect_names[] = {"auto", "device", "check"};

/* The index of `text` among `n` names (any case), or -1. */
static int name_index(const char *text, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(text, names[i]))
            return i;
    return -1;
}

static bool parse_loglevel(const char *text, int *out)
{
    int i = name_index(text, log_names, 4);
    if (i >= 0)
        *out = i;
    return i >= 0;
}

static bool parse_inspect(const char *text, enum vast_inspect_mode *out)
{
    int i = name_index(text, inspect_names, 3);
    if (i >= 0)
        *out = (enum vast_inspect_mode)i;
    return i >= 0;
}

static const char *const autobool_names[] = {"auto", "0", "1"};

static bool parse_autobool(const char *text, enum vast_autobool *out)
{
    bool on = false;
    if (!strcasecmp(text, "auto"))
        *out = VAST_AUTOBOOL_AUTO;
    else if (parse_bool(text, &on))
        *out = on ? VAST_AUTOBOOL_ON : VAST_AUTOBOOL_OFF;
    else
        return false;
    return true;
}

static bool parse_string(const char *text, char *out, size_t size)
{
    if (strlen(text) >= size)
        return false;
    strcpy(out, text);
    return true;
}

/* A size that is a power of two from 4K, or the value *out holds: PARSE_ONE parses a variable's
 * default into its field before its value, so that is the default (VAST_PAGE_SIZE's 0: VAST
 * chooses). */
static bool parse_pow2(const char *text, uint64_t *out)
{
    uint64_t v;
    if (!vast_parse_size(text, &v) || (v != *out && (v < 4096 || (v & (v - 1)) != 0)))
        return false;
    *out = v;
    return true;
}

#define PARSE_STRING(f, t) parse_string(t, cfg->f, sizeof cfg->f)
#define PARSE_SIZE(f, t) vast_parse_size(t, &cfg->f)
#define PARSE_POW2(f, t) parse_pow2(t, &cfg->f)
#define PARSE_BOOL(f, t) parse_bool(t, &cfg->f)
#define PARSE_LOGLEVEL(f, t) parse_loglevel(t, &cfg->f)
#define PARSE_INSPECT(f, t) parse_inspect(t, &cfg->f)
#define PARSE_AUTOBOOL(f, t) parse_autobool(t, &cfg->f)

bool vast_config_parse(struct vast_config *cfg, const char *(*get)(const char *name), char *why,
                       size_t why_size)
{
    bool ok = true;
    memset(cfg, 0, sizeof *cfg);
#define PARSE_ONE(kind, field, var, def, desc)                                                    \
    {                                                                                             \
        const char *v = get(var);                                                                 \
        PARSE_##kind(field, def);                                                                 \
        if (v != NULL && !PARSE_##kind(field, v)) {                                               \
            if (ok && why != NULL)                                                                \
                snprintf(why, why_size, "%s='%.100s' is not valid; using the default '%s'", var, v, \
                         def);                                                                    \
            ok = false;                                                                           \
            PARSE_##kind(field, def);                                                             \
        }                                                                                         \
    }
    VAST_CONFIG_LIST(PARSE_ONE)
#undef PARSE_ONE
    return ok;
}

static const char *getenv_const(const char *name) { return getenv(name); }

static struct vast_config global_config;
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void load_global(void)
{
    char why[256];
    bool ok = vast_config_parse(&global_config, getenv_const, why, sizeof why);
    vast_log_set_level((enum vast_log_level)global_config.log);
    if (!ok)
        vast_warn("%s", why);
}

const struct vast_config *vast_config_get(void)
{
    pthread_once(&global_once, load_global);
    return &global_config;
}

#define PRINT_STRING(f) snprintf(value, sizeof value, "%s", cfg->f)
#define PRINT_SIZE(f) snprintf(value, sizeof value, "%llu", (unsigned long long)cfg->f)
#define PRINT_POW2(f) PRINT_SIZE(f)
#define PRINT_BOOL(f) snprintf(value, sizeof value, "%d", (int)cfg->f)
#define PRINT_LOGLEVEL(f) snprintf(value, sizeof value, "%s", log_names[cfg->f])
#define PRINT_INSPECT(f) snprintf(value, sizeof value, "%s", inspect_names[cfg->f])
#define PRINT_AUTOBOOL(f) snprintf(value, sizeof value, "%s", autobool_names[cfg->f])

void vast_config_print(const struct vast_config *cfg, FILE *out, bool markdown)
{
    char value[600];
    if (markdown)
        fprintf(out, "| variable | default | meaning |\n|---|---|---|\n");
#define PRINT_ONE(kind, field, var, def, desc)                                                    \
    PRINT_##kind(field);                                                                          \
    if (markdown)                                                                                 \
        fprintf(out, "| `%s` | %s | %s |\n", var, *def ? def : "(none)", desc);                   \
    else                                                                                          \
        fprintf(out, "  %-20s = %-12s %s%s\n", var, value, getenv(var) ? "(set) " : "", desc);
    VAST_CONFIG_LIST(PRINT_ONE)
#undef PRINT_ONE
}
