/* cursor.h - what every pass of translate/ asks of libclang's cursors and types: spans and
 * children, the parent stack of a pre-order walk, OpenCL address spaces, __global pointers,
 * lvalues and accesses, parameters, and the unit's functions and diagnostics (cursor.c).
 * One home, so that the passes (walk.c, affine.c, stride.c, guard.c, straddle.c, meta.c,
 * signature.c) agree on what a __global access is and include no pass to reach a helper. */
#ifndef VAST_TRANSLATE_CURSOR_H
#define VAST_TRANSLATE_CURSOR_H

#include <clang-c/Index.h>

struct tr_unit;
struct tr_fn;

/* OpenCL address spaces as clang_getAddressSpace reports them for OpenCL C: clang's language
 * address spaces (LangAS), where a type without a qualifier has the default one (private for
 * variables) and an explicit __private is a space of its own. */
enum tr_address_space {
    TR_AS_DEFAULT = 0,
    TR_AS_GLOBAL = 1,
    TR_AS_LOCAL = 2,
    TR_AS_CONSTANT = 3,
    TR_AS_PRIVATE = 4,
};
/* The address space of t (TR_AS_DEFAULT for an invalid type). */
unsigned tr_address_space(CXType t);
/* A pointer (after typedefs) to __global memory. */
int tr_is_global_pointer(CXType t);
/* An lvalue in __global memory: *p, p[i] or m.f / p->f, arrays included (p->arr names the
 * memory its elements lie in: affine.c records p->arr[i] there, as a site of the struct;
 * stride.c only asks whether a subtree touches __global memory). */
int tr_is_global_lvalue(CXCursor c);
/* A __global lvalue that is loaded or stored as a value: tr_is_global_lvalue without arrays,
 * which only decay to their address (walk.c rewrites p->arr[i], never p->arr). */
int tr_is_global_access(CXCursor c);
/* c may change what its first child names: `=`, a compound assignment, ++ or --, or & (the
 * address escapes, so a write through it cannot be ruled out). */
int tr_modifies_operand(CXCursor c);
/* The index of the parameter declared by decl among the first nparams of function fn, or -1. */
int tr_param_index(CXCursor fn, unsigned nparams, CXCursor decl);

/* Byte offsets [*start, *end) of c in the preprocessed text; -1 when it has none there. */
int tr_cursor_span(CXCursor c, unsigned *start, unsigned *end);
CXCursor tr_nth_child(CXCursor c, unsigned i); /* null cursor past the last child */
unsigned tr_num_children(CXCursor c);
/* The body (compound statement) of function fn, or a null cursor. */
CXCursor tr_fn_body(CXCursor fn);
int tr_in_main_file(CXCursor c);
char *tr_cursor_type_spelling(CXCursor c);
/* One level of a pre-order walk's parent stack: the cursor, its span and its index among
 * its parent's children (walk.c, affine.c). */
struct tr_frame {
    CXCursor c;
    enum CXCursorKind kind;
    unsigned start, end, index, nchildren;
};
/* Fills st[depth] for c (counting it as a child of st[depth - 1]) and returns it. */
struct tr_frame *tr_frame_enter(struct tr_frame *st, int depth, CXCursor c);

/* The program's own function declared by decl (NULL: a builtin). */
struct tr_fn *tr_find_fn(struct tr_unit *u, CXCursor decl);
void tr_diag_add(struct tr_unit *u, CXCursor where, const char *kernel,
                 const char *construct, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
