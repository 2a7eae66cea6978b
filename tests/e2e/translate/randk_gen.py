#!/usr/bin/python3
"""randk_gen.py: random OpenCL C kernels in the spirit of CLsmith, deterministic from a seed.

Python 3 standard library only. gen_kernel(seed) returns a Kernel: its source (its own structs,
unions and helpers, every name suffixed with the seed, so that kernels of several seeds share
one program), its arguments (sizes, which are inputs and which the kernel writes) and its
NDRange. Every kernel is free of undefined behaviour and of races, so that any two correct
executions give the same bytes:
  - integer arithmetic in unsigned types only (wraps); shifts by `& 31` / `& 63`; divisors
    `| 1`; casts between widths and to signed types only (never signed arithmetic);
  - reads anywhere of the read-only buffers (`a`, `sin`), through data-dependent indices
    (gathers) reduced into bounds; writes only to locations the work-item owns: its slot of
    `out`, `sout`, `vout`, `b[perm[gid]]` (perm: a permutation within blocks, so a data-
    dependent scatter that no other work-item touches), the elements `i = gid + k * gsize` of
    `c` (grid-stride loop); `b` is read only at owned slots;
  - atomics on `cnt` with order-independent final values: one family per kernel (add, sub
    and inc; or; xor; and; min; max), the values returned never used;
  - barriers only in uniform control flow (the kernel's top level and counted loops of a
    constant trip count there); `__local` arrays written in full before a barrier and read
    after it; work-items of a group exchange values through global memory (`g2`) across
    `barrier(CLK_GLOBAL_MEM_FENCE)`;
  - loops bounded (counted loops of constant or data-dependent trip counts below 8; while
    loops with a data-dependent exit and a step bound).
Every value computed flows into the work-item's `out` slot (a running hash).
Constructs: helper functions taking __global pointers (and writing through them), private
arrays of __global pointers and pointers to them (nested pointers), pointer arithmetic,
casts between __global pointer types (uchar, ushort, uint2 views of uint data, bytes of
structs), structs with arrays and nested structs (packed or not, sizes that are not powers of
two), unions, whole-struct loads and stores, vector types and swizzles, vload/vstore at odd
offsets, grid-stride loops, atomics, barriers, __local memory.
Not covered: floating point, images, samplers, printf, 64-bit atomics, async copies,
OpenCL 2.x built-ins, recursion-free deep call chains beyond two levels.

usage: randk_gen.py SEED [SEED...]   prints the program of these seeds' kernels.
"""
import random
import re
import sys

TYPES = [("uchar", 1), ("ushort", 2), ("uint", 4), ("ulong", 8), ("char", 1), ("short", 2), ("int", 4)]


class Kernel:
    """One random kernel: source text, name, NDRange, buffer arguments (name, element bytes,
    count, role) and scalar arguments (name, value)."""

    def __init__(self, seed):
        self.seed = seed
        self.name = f"k{seed}"
        self.src = ""
        # (name, element bytes, count, role) in parameter order; role: "in", "inout" (random
        # contents), "perm" (a permutation of [0, count) within blocks of perm_block), "out"
        # (poisoned), "local" (a __local pointer of count elements), "scalar" (count: the value)
        self.args = []
        self.glob = 0
        self.loc = 0
        self.perm_block = 1
        self.features = set()


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed
        self.k = Kernel(seed)
        self.sfx = f"_{seed}"
        self.tmp = 0
        self.vars = []        # private uint variables live now
        self.decls = []       # top-of-file declarations (structs, helpers)
        self.uniform = True   # at a point where barriers are allowed

    # ---- names and small helpers ----
    def fresh(self, base="t"):
        self.tmp += 1
        return f"{base}{self.tmp}"

    def chance(self, p):
        return self.r.random() < p

    def var(self):
        return self.r.choice(self.vars)

    # ---- integer expressions (uint) ----
    def expr(self, depth=0):
        r = self.r
        if depth >= 3 or r.random() < 0.3:
            c = r.random()
            if c < 0.6:
                return self.var()
            if c < 0.8:
                return f"{r.randrange(1 << 32)}u"
            return r.choice(["(uint)get_global_id(0)", "(uint)get_local_id(0)", "(uint)get_group_id(0)",
                             "(uint)get_global_size(0)", "(uint)get_local_size(0)", "n"])
        a = self.expr(depth + 1)
        b = self.expr(depth + 1)
        c = r.randrange(21)
        if c < 6:
            return f"({a} {r.choice(['+', '-', '*', '^', '&', '|'])} {b})"
        if c == 6:
            return f"({a} << ({b} & 31u))"
        if c == 7:
            return f"({a} >> ({b} & 31u))"
        if c == 8:
            return f"({a} / ({b} | 1u))"
        if c == 9:
            return f"({a} % ({b} | 1u))"
        if c == 10:
            return f"(({a} {r.choice(['<', '>', '==', '!=', '<=', '>='])} {b}) ? {self.expr(depth + 1)} : {a})"
        if c == 11:
            t = r.choice(["uchar", "ushort", "char", "short", "int"])
            return f"(uint)({t})({a})"
        if c == 12:
            return f"rotate({a}, {b})"
        if c == 13:
            return f"{r.choice(['min', 'max', 'mul_hi', 'add_sat', 'sub_sat', 'hadd', 'abs_diff'])}({a}, {b})"
        if c == 14:
            return f"{r.choice(['clz', 'popcount'])}({a})"
        if c == 15:
            return f"(~{a})"
        if c == 16:
            return f"(uint)(((ulong){a} * (ulong){b}) >> {r.randrange(1, 40)})"
        if c == 17:
            return f"(uint)(({a} & 0xffffu) * ({b} & 0xffffu))"
        if c == 18:
            return f"upsample((ushort)({a}), (ushort)({b}))"
        if c == 19:
            return f"{r.choice(['bitselect', 'select'])}({a}, {b}, {self.expr(depth + 1)})"
        return f"(({a}) + ({b}) * {r.randrange(1, 1 << 16)}u)"

    # ---- statements ----
    def index(self, e, n, near=None):
        """A data-dependent index into [0, n): near the work-item's own position or anywhere."""
        if near is None:
            near = not self.far
        if near:
            w = self.window
            return f"((gid * (({n}) / GS) + (({e}) % {w}u)) % {n})"
        return f"(({e}) % {n})"

    def stmt(self, depth):
        r = self.r
        kinds = ["assign"] * 4 + ["gather"] * 3 + ["bytes", "ptr", "nested", "struct", "union", "vec", "vload"]
        kinds += ["scatter", "owned_rw", "atomic", "helper", "helper_w"]
        if depth < 2:
            kinds += ["for", "for", "while", "if"]
        if self.uniform and depth == 0:
            kinds += ["barrier_local", "barrier_global"]
        if depth == 0 and self.gridread:
            kinds += ["stride_read"]
        return getattr(self, "s_" + r.choice(kinds))(depth)

    def ind(self, depth):
        return "  " * (depth + 1)

    def mix(self, e):
        v = self.r.choice(self.wvars)
        op = self.r.choice(["+=", "^=", "-=", "*=", "="])
        if op == "*=":
            e = f"(({e}) | 1u)"
        return f"{v} {op} {e};"

    def s_assign(self, d):
        return self.ind(d) + self.mix(self.expr()) + "\n"

    def s_gather(self, d):
        self.k.features.add("gather")
        return self.ind(d) + self.mix(f"a[{self.index(self.expr(1), 'NA')}]") + "\n"

    def s_bytes(self, d):
        self.k.features.add("ptr_cast")
        t, sz = self.r.choice([("uchar", 1), ("ushort", 2), ("uint2", 8), ("char", 1)])
        n = f"(NA * 4u / {sz}u)" if sz < 8 else "(NA / 2u)"
        e = f"((__global const {t} *)a)[{self.index(self.expr(1), n)}]"
        if t == "uint2":
            sw = self.r.choice(["x", "y", "s1", "s0"])
            e = f"{e}.{sw}"
        return self.ind(d) + self.mix(f"(uint){e}") + "\n"

    def s_ptr(self, d):
        self.k.features.add("ptr_arith")
        p = self.fresh("p")
        j = self.r.randrange(1, 9)
        i = self.ind(d)
        ix = self.index(self.expr(1), f"(NA - {2 * j}u)")
        s = f"{i}__global const uint *{p} = a + {ix};\n"
        s += f"{i}{p} += {self.r.randrange(j)};\n" if self.chance(0.5) else ""
        s += f"{i}{self.mix(f'{p}[0] + *({p} + 1) * {p}[{j - 1}]')}\n" if j > 1 else f"{i}{self.mix(f'*{p}')}\n"
        return s

    def s_nested(self, d):
        self.k.features.add("nested_ptr")
        arr, pp = self.fresh("ps"), self.fresh("pp")
        i = self.ind(d)
        s = f"{i}__global const uint *{arr}[3];\n"
        s += f"{i}{arr}[0] = a + {self.index(self.expr(1), 'NA')};\n"
        s += f"{i}{arr}[1] = a + {self.index(self.expr(1), 'NA')};\n"
        s += f"{i}{arr}[2] = (__global const uint *)b + BOWN;\n"
        s += f"{i}__global const uint **{pp} = {arr} + ({self.expr(1)} % 3u);\n"
        s += f"{i}{self.mix(f'**{pp} + *{arr}[{self.r.randrange(3)}]')}\n"
        return s

    def s_struct(self, d):
        self.k.features.add("struct")
        i = self.ind(d)
        sp = self.fresh("sp")
        m = self.r.choice(self.smembers)
        e = self.expr(1)
        c = self.r.randrange(4)
        if c == 0:      # through a pointer to the element
            return f"{i}__global const struct S{self.sfx} *{sp} = sin + {self.index(e, 'NS')};\n{i}{self.mix(f'(uint){sp}->{m}')}\n"
        if c == 1:      # a whole-struct load
            t = self.fresh("st")
            return f"{i}struct S{self.sfx} {t} = sin[{self.index(e, 'NS')}];\n{i}{self.mix(f'(uint){t}.{m}')}\n"
        if c == 2:      # bytes of a struct
            self.k.features.add("ptr_cast")
            ix = self.index(e, f"(NS * {self.ssize})")
            return f"{i}{self.mix(f'(uint)((__global const uchar *)sin)[{ix}]')}\n"
        # store a member of the work-item's own struct, read it back
        return f"{i}sout[gid].{m} = {self.smtype[m]}({e});\n{i}{self.mix(f'(uint)sout[gid].{m}')}\n"

    def s_union(self, d):
        self.k.features.add("union")
        i = self.ind(d)
        u = self.fresh("u")
        s = f"{i}union U{self.sfx} {u};\n{i}{u}.w = {self.expr(1)};\n"
        s += f"{i}{u}.h[{self.r.randrange(2)}] ^= (ushort)({self.expr(1)});\n"
        s += f"{i}{self.mix(f'{u}.w + {u}.c[{self.r.randrange(4)}]')}\n"
        if self.chance(0.3):
            s += f"{i}uo[gid] = {u};\n"
            self.k.features.add("union_store")
        return s

    def s_vec(self, d):
        self.k.features.add("vector")
        i = self.ind(d)
        v = self.fresh("v")
        sw = "".join(self.r.choice("xyzw") for _ in range(4))
        s = f"{i}uint4 {v} = (uint4)({self.expr(1)}, {self.var()}, {self.expr(1)}, {self.var()});\n"
        s += f"{i}{v} = {v}.{sw} * (uint4)({self.r.randrange(1, 99)}u) + ({v} >> (uint4)(3u));\n"
        if self.chance(0.5):
            s += f"{i}{v}.{self.r.choice(['xy', 'zw', 'yx', 's13', 's02'])} ^= (uint2)({self.var()}, {self.var()});\n"
        if self.chance(0.3):
            s += f"{i}{v} += convert_uint4(as_uchar4({self.var()}));\n"
        s += f"{i}{self.mix(f'{v}.x ^ {v}.y ^ rotate({v}.z, 7u) ^ {v}.s3')}\n"
        return s

    def s_vload(self, d):
        self.k.features.add("vload")
        i = self.ind(d)
        w = self.r.choice([2, 4, 8, 16])
        v = self.fresh("v")
        off = self.r.randrange(1, 4)
        ix = self.index(self.expr(1), f"((NA - 4u) / {w}u)")
        s = f"{i}uint{w} {v} = vload{w}({ix}, a + {off});\n"
        red = " ^ ".join(f"{v}.s{'0123456789abcdef'[j]}" for j in range(w))
        if self.chance(0.5):
            s += f"{i}vstore{w}({v} + (uint{w})({self.var()}), gid, vout{w});\n"
            self.vouts.add(w)
        s += f"{i}{self.mix(red)}\n"
        return s

    def s_scatter(self, d):
        self.k.features.add("scatter")
        i = self.ind(d)
        return f"{i}b[BOWN] = {self.expr(1)};\n"

    def s_owned_rw(self, d):
        i = self.ind(d)
        return f"{i}b[BOWN] ^= {self.expr(1)};\n{i}{self.mix('b[BOWN]')}\n"

    def s_atomic(self, d):
        """An atomic of the kernel's one family: different operations on one location do not
        commute ((x + 1) | m differs from (x | m) + 1), so a kernel mixes only additions."""
        self.k.features.add("atomic")
        i = self.ind(d)
        op = self.r.choice(self.atomics)
        if op == "atomic_inc":
            return f"{i}atomic_inc(&cnt[({self.expr(1)}) % NC]);\n"
        val = self.expr(1)
        if op == "atomic_and":
            val = f"({val}) | 0xfff0ffffu"
        return f"{i}{op}(&cnt[({self.expr(1)}) % NC], {val});\n"

    def s_helper(self, d):
        self.k.features.add("helper")
        i = self.ind(d)
        return f"{i}{self.mix(f'h{self.sfx}(a, NA, {self.expr(1)}, gid)')}\n"

    def s_helper_w(self, d):
        self.k.features.add("helper_write")
        i = self.ind(d)
        return f"{i}hw{self.sfx}(b + BOWN, {self.expr(1)});\n{i}{self.mix('b[BOWN]')}\n"

    def block(self, depth, n):
        return "".join(self.stmt(depth) for _ in range(n))

    def s_for(self, d):
        self.k.features.add("loop")
        i = self.ind(d)
        iv = self.fresh("i")
        if self.chance(0.5):
            bound = f"{self.r.randrange(1, 6)}u"
            keep = self.uniform
        else:
            bound = f"(({self.expr(1)}) & 7u)"
            keep = False
        saved = self.uniform
        self.uniform = keep and d == 0 and False  # barriers stay at the top level
        self.vars.append(iv)
        body = self.block(d + 1, self.r.randrange(1, 4))
        self.vars.pop()
        self.uniform = saved
        return f"{i}for (uint {iv} = 0u; {iv} < {bound}; {iv}++) {{\n{body}{i}}}\n"

    def s_while(self, d):
        self.k.features.add("while")
        i = self.ind(d)
        w = self.fresh("w")
        saved = self.uniform
        self.uniform = False
        body = self.block(d + 1, self.r.randrange(1, 3))
        self.uniform = saved
        x = self.r.choice(self.wvars)
        return (f"{i}uint {w} = 0u;\n{i}while ({w} < {self.r.randrange(2, 9)}u && ({x} & 3u) != 0u) {{\n{body}"
                f"{self.ind(d + 1)}{x} = {x} * 1103515245u + 12345u + (a[{self.index(x, 'NA')}] >> 3);\n"
                f"{self.ind(d + 1)}{w}++;\n{i}}}\n")

    def s_if(self, d):
        i = self.ind(d)
        saved = self.uniform
        self.uniform = False
        t = self.block(d + 1, self.r.randrange(1, 3))
        e = self.block(d + 1, self.r.randrange(0, 2))
        self.uniform = saved
        s = f"{i}if (({self.expr(1)}) & {1 << self.r.randrange(4)}u) {{\n{t}{i}}}"
        return s + (f" else {{\n{e}{i}}}\n" if e else "\n")

    def s_barrier_local(self, d):
        self.k.features.add("local")
        i = self.ind(d)
        lm = "lm" if self.chance(0.5) else "larg"
        self.k.features.add("local_arg" if lm == "larg" else "local_var")
        k = self.r.randrange(1, 64)
        return (f"{i}{lm}[lid] = {self.expr(1)};\n{i}barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"{i}{self.mix(f'{lm}[(lid + {k}u) % LSZ] + {lm}[({self.var()}) % LSZ]')}\n"
                f"{i}barrier(CLK_LOCAL_MEM_FENCE);\n")

    def s_barrier_global(self, d):
        self.k.features.add("global_barrier")
        i = self.ind(d)
        return (f"{i}g2[gid] = {self.expr(1)};\n{i}barrier(CLK_GLOBAL_MEM_FENCE);\n"
                f"{i}{self.mix(f'g2[gid - lid + ((lid + {self.r.randrange(1, 64)}u) % LSZ)]')}\n"
                f"{i}barrier(CLK_GLOBAL_MEM_FENCE);\n")

    def s_stride_read(self, d):
        self.k.features.add("grid_stride")
        i = self.ind(d)
        iv = self.fresh("g")
        acc = self.r.choice(self.wvars)
        return (f"{i}for (uint {iv} = gid; {iv} < NA; {iv} += (uint)get_global_size(0))\n"
                f"{i}  {acc} = rotate({acc}, 5u) ^ (a[{iv}] + {iv});\n")

    # ---- the struct, union and helpers of this kernel ----
    def make_struct(self):
        """struct S_<seed>: 2-5 members of random integer types, some arrays, maybe a nested
        struct; packed or not. Its size follows C's layout rules (kept in self.sbytes)."""
        r = self.r
        packed = r.random() < 0.35
        members, layout = [], []   # layout: (size, alignment) of each member
        self.smembers, self.smtype = [], {}
        for j in range(r.randrange(2, 6)):
            t, sz = r.choice(TYPES)
            name = f"m{j}"
            if r.random() < 0.25:
                cnt = r.randrange(2, 5)
                members.append(f"  {t} {name}[{cnt}];")
                layout.append((sz * cnt, sz))
                for q in range(cnt):
                    self.smembers.append(f"{name}[{q}]")
                    self.smtype[f"{name}[{q}]"] = f"({t})"
            else:
                members.append(f"  {t} {name};")
                layout.append((sz, sz))
                self.smembers.append(name)
                self.smtype[name] = f"({t})"
        if r.random() < 0.4:
            if r.random() < 0.5:
                members.append("  struct { uchar x; ushort y; } in;")
                layout.append((4, 2))
                inner = (("in.x", "uchar"), ("in.y", "ushort"))
            else:
                members.append("  struct __attribute__((packed)) { uchar x; uint y; } in;")
                layout.append((5, 1))
                inner = (("in.x", "uchar"), ("in.y", "uint"))
                self.k.features.add("packed")
            for f_, t in inner:
                self.smembers.append(f_)
                self.smtype[f_] = f"({t})"
        off, al = 0, 1
        for sz, a in layout:
            a = 1 if packed else a
            off = (off + a - 1) // a * a + sz
            al = max(al, a)
        self.sbytes = (off + al - 1) // al * al
        attr = " __attribute__((packed))" if packed else ""
        if packed:
            self.k.features.add("packed")
        self.decls.append(f"struct{attr} S{self.sfx} {{\n" + "\n".join(members) + "\n};\n")
        self.decls.append(f"union U{self.sfx} {{ uint w; ushort h[2]; uchar c[4]; }};\n")

    def make_helpers(self):
        r = self.r
        self.decls.append(
            f"uint h{self.sfx}(__global const uint *p, uint n, uint k, uint gid) {{\n"
            f"  __global const uint *q = p + (k % n);\n"
            f"  uint x = *q ^ (k >> {r.randrange(1, 31)});\n"
            f"  if (k & 1u) x += p[(gid * {r.randrange(1, 9)}u + k) % n];\n"
            f"  return x * {r.randrange(1, 1 << 20)}u + k;\n}}\n")
        self.decls.append(
            f"void hw{self.sfx}(__global uint *p, uint v) {{\n"
            f"  *p = rotate(*p, {r.randrange(1, 32)}u) + v;\n}}\n")

    def build(self):
        r = self.r
        k = self.k
        k.loc = r.choice([8, 16, 32, 64])
        groups = r.randrange(3, 40)
        k.glob = k.loc * groups
        g = k.glob
        na = r.randrange((1 << 18) + 1, (1 << 18) + (1 << 17)) | 1
        nb = (g + r.randrange(1, 3000)) | 1
        ns = r.randrange(g // 2 + 1, 6000) | 1
        nc = r.randrange(1, 300) | 1
        nct = (g * r.randrange(1, 5) + r.randrange(100)) | 1
        self.far = r.random() < 0.2
        self.window = r.choice([16, 64, 256, 1024])
        self.gridread = r.random() < 0.1
        self.atomics = r.choice([["atomic_add", "atomic_sub", "atomic_inc"], ["atomic_or"], ["atomic_xor"],
                                 ["atomic_and"], ["atomic_min"], ["atomic_max"]])
        k.perm_block = r.choice([1, 8, 64, 256])
        self.make_struct()
        self.make_helpers()
        self.ssize = f"(uint)sizeof(struct S{self.sfx})"
        self.vouts = set()
        nvars = r.randrange(2, 6)
        self.vars = [f"x{j}" for j in range(nvars)]
        self.wvars = list(self.vars)
        body = ""
        for j in range(nvars):
            body += f"  uint x{j} = {r.choice(['a[gid % NA]', 'gid', 'n', 'b[BOWN]', 'sin[gid % NS].' + self.smembers[0]])}"
            body += f" * {r.randrange(1, 1 << 31) | 1}u + {r.randrange(1 << 32)}u;\n"
        self.uniform = True
        body += self.block(0, r.randrange(3, 9))
        # grid-stride writes of c: every element i = gid + k * gsize is the work-item's own
        if r.random() < 0.5:
            self.k.features.add("grid_stride")
            body += (f"  for (uint gi = gid; gi < NCT; gi += (uint)get_global_size(0))\n"
                     f"    c[gi] = a[gi % NA] * {r.randrange(1, 1 << 20)}u + gi + {self.var()};\n")
        h = " ^ ".join(f"rotate({v}, {j * 3 + 1}u)" for j, v in enumerate(self.vars))
        body += f"  out[gid] = {h};\n"
        if r.random() < 0.3:
            body += f"  sout[gid].{self.smembers[-1]} ^= {self.smtype[self.smembers[-1]]}({self.vars[0]});\n"
        sfx = self.sfx
        # (name, element bytes, count, role, parameter declaration); a kernel takes the buffers
        # its text names (b and perm where it names BOWN)
        cand = [("a", 4, na, "in", "__global const uint *a"), ("b", 4, nb, "inout", "__global uint *b"),
                ("perm", 4, nb, "perm", "__global const uint *perm"),
                ("sin", self.sbytes, ns, "in", f"__global const struct S{sfx} *sin"),
                ("sout", self.sbytes, g, "inout", f"__global struct S{sfx} *sout"),
                ("uo", 4, g, "out", f"__global union U{sfx} *uo"), ("out", 4, g, "out", "__global uint *out"),
                ("cnt", 4, nc, "inout", "__global uint *cnt"), ("c", 4, nct, "out", "__global uint *c"),
                ("g2", 4, g, "out", "__global uint *g2"), ("larg", 4, k.loc, "local", "__local uint *larg")]
        cand += [(f"vout{w}", 4 * w, g, "out", f"__global uint *vout{w}") for w in sorted(self.vouts)]
        named = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", body))
        if "BOWN" in named:
            named |= {"b", "perm"}
        k.args = [c[:4] for c in cand if c[0] in named]
        k.args.append(("n", 4, r.randrange(1 << 32), "scalar"))
        params = ", ".join([c[4] for c in cand if c[0] in named] + ["uint n"])
        defs = (f"#define NA {na}u\n#define NS {ns}u\n#define NC {nc}u\n#define NCT {nct}u\n"
                f"#define LSZ {k.loc}u\n#define GS {g}u\n#define BOWN (perm[gid])\n")
        reqd = f" __attribute__((reqd_work_group_size({k.loc}, 1, 1)))" if r.random() < 0.3 else ""
        k.src = "".join(self.decls) + defs + f"__kernel{reqd}\n"
        k.src += (f"void {k.name}({params}) {{\n  uint gid = (uint)get_global_id(0), lid = (uint)get_local_id(0);\n"
                  f"  __local uint lm[{k.loc}];\n{body}}}\n")
        k.src += "#undef NA\n#undef NS\n#undef NC\n#undef NCT\n#undef LSZ\n#undef GS\n#undef BOWN\n"
        return k


def gen_kernel(seed):
    return Gen(seed).build()


def program(kernels):
    return "".join(k.src for k in kernels)


if __name__ == "__main__":
    print(program([gen_kernel(int(s)) for s in sys.argv[1:]]))
