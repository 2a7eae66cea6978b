/*
 * config.h: every VAST_* environment variable, declared once in VAST_CONFIG_LIST. Parsing,
 * defaults, `vastinfo`'s listing and the README's table all come from that list. The
 * configuration is read once (the first vast_config_get) into a struct vast_config that never
 * changes afterwards, so it is read without locks. Variables with a few named values are parsed
 * into enums there, so no caller compares strings.
 */
#ifndef VAST_BASE_CONFIG_H
#define VAST_BASE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* VAST_INSPECT: where partitioned launches get their page sets. */
enum vast_inspect_mode { VAST_INSPECT_AUTO = 0, VAST_INSPECT_DEVICE, VAST_INSPECT_CHECK };

/* A switch whose default VAST chooses: "auto", or a boolean's spellings. */
enum vast_autobool { VAST_AUTOBOOL_AUTO = 0, VAST_AUTOBOOL_OFF, VAST_AUTOBOOL_ON };

/* X(kind, field, variable, default, description). Kinds: STRING, SIZE, POW2 (a size that is a power
 * of two from 4K, or its default), BOOL, LOGLEVEL, INSPECT, AUTOBOOL. */
#define VAST_CONFIG_LIST(X)                                                                       \
    X(STRING, backend, "VAST_BACKEND", "",                                                        \
      "real platform(s) to wrap: a platform-name substring or a vendor library path; "           \
      "default: every GPU platform, or every platform when no GPU exists")                        \
    X(LOGLEVEL, log, "VAST_LOG", "warn", "what VAST writes to stderr: error, warn, info or debug")     \
    X(SIZE, memory, "VAST_MEMORY", "0",                                                           \
      "memory a virtual device reports and backs, bytes with K/M/G suffix; 0: host RAM")          \
    X(SIZE, device_memory, "VAST_DEVICE_MEMORY", "0",                                             \
      "device page-cache budget per real device; 0: most of the device's memory")                 \
    X(STRING, overdraft, "VAST_OVERDRAFT", "auto",                                                \
      "frames past the budget that one launch may borrow for a work-group (or one loop iteration "  \
      "of one) larger than the budget, bytes with K/M/G suffix; auto: 1/16 of the device's memory, "  \
      "at most what the budget leaves of it; 0: none (such launches are refused)")                  \
    X(POW2, page_size, "VAST_PAGE_SIZE", "0",                                                     \
      "page size, a power of two from 4K; 0: chosen by VAST")                                     \
    X(BOOL, pin, "VAST_PIN", "1",                                                                 \
      "pin host backing stores (fast transfers); 0: never, transfers from 256K stage via pinned slots") \
    X(BOOL, pin_background, "VAST_PIN_BACKGROUND", "1",                                           \
      "pin host backing stores in the background (the application's memory from the buffer's "  \
      "creation, VAST's own stores from their first use); 0: transfers pin what they touch (measuring)") \
    X(POW2, pin_granule, "VAST_PIN_GRANULE", "256M",                                              \
      "bytes pinned per driver call (a power of two from 4K): the driver holds its other calls "  \
      "while it pins one (measuring)")                                                            \
    X(SIZE, staging_threads, "VAST_STAGING_THREADS", "0",                                         \
      "host threads of bulk copies (reads and writes of backing stores, staging through pinned "    \
      "slots); 0: min(16, cores)")                                                                \
    X(SIZE, staging_slot, "VAST_STAGING_SLOT", "8M",                                              \
      "bytes per pinned staging slot (a ring of 3 per device, made on first use)")                \
    X(SIZE, duplex_window, "VAST_DUPLEX_WINDOW", "8M",                                            \
      "write-backs run beside loads (both link directions), in windows of this size; 0: write-backs then loads") \
    X(BOOL, force_paged, "VAST_FORCE_PAGED", "0",                                                 \
      "run the paged kernel even where direct mode would do (testing and measuring)")             \
    X(AUTOBOOL, build_wait, "VAST_BUILD_WAIT", "auto",                                            \
      "clBuildProgram (clCreateKernel for a program built before) builds VAST's paged variants "  \
      "before it returns; 0: on VAST's background thread, a launch waiting for what is not done; " \
      "auto: inside where every launch runs paged (VAST_FORCE_PAGED=1), else in the background")  \
    X(BOOL, merge_devices, "VAST_MERGE_DEVICES", "0",                                             \
      "show every device of a real platform as one virtual device whose launches run on all of them") \
    X(INSPECT, inspect, "VAST_INSPECT", "auto",                                                    \
      "how partitioned launches find page sets: auto (on the host where the kernel's accesses are affine, "  \
      "else the inspector kernel), device (always the inspector), check (both; a host set missing a page "  \
      "the inspector marked fails the launch)")                                                  \
    X(BOOL, skip_overwritten, "VAST_SKIP_OVERWRITTEN", "1",                                       \
      "pages a partition's kernel provably overwrites get frames without a load; 0: load them (measuring)") \
    X(BOOL, serpentine, "VAST_SERPENTINE", "1",                                                   \
      "a partitioned launch starts from whichever end of its plan has more pages resident, so a "   \
      "repeated launch over data above the budget reuses what the last one left; 0: always from "   \
      "the first partition (measuring)")                                                          \
    X(BOOL, chain, "VAST_CHAIN", "1",                                                             \
      "identical launches that follow each other on an in-order queue, over data above the budget, " \
      "run partition by partition together, moving their data once; 0: each on its own (measuring)") \
    X(BOOL, stats, "VAST_STATS", "0", "print per-kernel statistics at exit")                      \
    X(STRING, trace, "VAST_TRACE", "", "write a Chrome/Perfetto trace of VAST's work to this file") \
    X(STRING, cache_dir, "VAST_CACHE_DIR", "auto",                                                \
      "folder of VAST's persistent cache of translations and variant binaries; auto: "             \
      "$XDG_CACHE_HOME/vast, else $HOME/.cache/vast; empty or off: no cache")                      \
    X(SIZE, cache_max, "VAST_CACHE_MAX", "256M",                                                  \
      "bound of that cache's size; the least recently used entries go first")                    \
    X(AUTOBOOL, cache_binaries, "VAST_CACHE_BINARIES", "auto",                                    \
      "keep the real binaries of VAST's variants in that cache; auto: on, except on PoCL, which "  \
      "keeps its own compiled kernels and compiles every kernel of a program to hand out its binary")

struct vast_config {
#define VAST_CONFIG_FIELD_STRING(f) char f[512];
#define VAST_CONFIG_FIELD_SIZE(f) uint64_t f;
#define VAST_CONFIG_FIELD_POW2(f) uint64_t f;
#define VAST_CONFIG_FIELD_BOOL(f) bool f;
#define VAST_CONFIG_FIELD_LOGLEVEL(f) int f;
#define VAST_CONFIG_FIELD_INSPECT(f) enum vast_inspect_mode f;
#define VAST_CONFIG_FIELD_AUTOBOOL(f) enum vast_autobool f;
#define VAST_CONFIG_FIELD(kind, field, var, def, desc) VAST_CONFIG_FIELD_##kind(field)
    VAST_CONFIG_LIST(VAST_CONFIG_FIELD)
#undef VAST_CONFIG_FIELD
};

/* Read the environment once; later calls return the same configuration. */
const struct vast_config *vast_config_get(void);

/* Parse from a getenv-like function (unit tests); returns false and names the bad variable. */
bool vast_config_parse(struct vast_config *cfg, const char *(*get)(const char *name),
                       char *why, size_t why_size);

/* "123", "64K", "4M", "2G", "1T" (binary multiples). False on junk or overflow. */
bool vast_parse_size(const char *text, uint64_t *out);

/* Print the variables, their effective values and descriptions (vastinfo). */
void vast_config_print(const struct vast_config *cfg, FILE *out, bool markdown);

#endif
