/*
 * progbin.h: the program binaries VAST hands out (CL_PROGRAM_BINARIES). Applications keep
 * binaries and load them on their next run (pyopencl's cache, hashcat, darktable); a real
 * driver's binary alone would leave VAST without the source it translates into the paged and
 * inspector variants. So VAST hands out a versioned container: a magic, a version, the real
 * device it was made for, the source and build options of the program, and the real binary,
 * with a checksum over all of it. clCreateProgramWithBinary (program.c) gives the real driver
 * the real binary and keeps the source and options for translation. Pure functions over bytes.
 *
 * Layout, integers little-endian:
 *   0   magic "\x7fVASTPRG" (8 bytes)
 *   8   u32 version (VAST_PROGBIN_VERSION)   12  u32 flags (bit 0: a source is present)
 *   16  u64 device identity length          24  u64 source length
 *   32  u64 options length                   40  u64 real binary length
 *   48  u64 FNV-1a 64 of every byte but these 8
 *   56  device identity, source, options, real binary (no terminating NULs)
 * A binary that does not begin with the magic is not VAST's (foreign: the real driver's, or
 * another tool's); one that does but whose length, version or checksum is wrong is invalid.
 */
#ifndef VAST_INTERPOSE_PROGBIN_H
#define VAST_INTERPOSE_PROGBIN_H

#include <stddef.h>

#define VAST_PROGBIN_VERSION 1u

struct vast_progbin {
    const char *device;           /* the real device's identity (program.c) */
    size_t device_len;
    const char *source;           /* NULL: the program has no source (linked, IL, foreign) */
    size_t source_len;
    const char *options;          /* the build options the real binary was made with */
    size_t options_len;
    const unsigned char *binary;  /* the real driver's binary */
    size_t binary_len;
};

enum vast_progbin_kind { VAST_PROGBIN_FOREIGN, VAST_PROGBIN_VALID, VAST_PROGBIN_INVALID };

/* Bytes of the container for b. */
size_t vast_progbin_size(const struct vast_progbin *b);
/* Writes the container (vast_progbin_size(b) bytes) to out. */
void vast_progbin_pack(const struct vast_progbin *b, unsigned char *out);
/* Recognises and checks a container; VALID fills *out with views into bytes. */
enum vast_progbin_kind vast_progbin_unpack(const unsigned char *bytes, size_t len, struct vast_progbin *out);

#endif
