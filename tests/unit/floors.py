#!/usr/bin/env python3
"""floors.py: the include graph of VAST's sources points one way.

    icd -> interpose -> {translate, pagecache} -> base

A file may include from its own folder or a folder on a lower floor; translate/ and pagecache/
share a floor and include neither each other. Two files of different folders may not include
each other, directly or through others (an include cycle across folders: a piece sits in the
wrong folder). Quoted includes are resolved the way the build resolves them: the including
file's folder, then the source root, then the component folders whose headers CMake exports
(translate/, pagecache/: `#include "pagecache.h"`); an include that names no file of the tree
is a system or generated header and is not checked. A folder the top CMakeLists.txt builds
must have a floor here (or be samples/ or tests/), so a new component cannot go unchecked.

Usage: floors.py [SOURCE_ROOT]   (default: the tree this script is in). Exit 0 when clean;
1, listing every upward include and every cycle, when not.
"""
import os
import re
import sys
import tempfile

FLOORS = {"icd": 4, "interpose": 3, "translate": 2, "pagecache": 2, "base": 1}
NOT_FLOORS = {"samples", "tests"}  # programs that use VAST from outside
EXPORTED = ["translate", "pagecache"]  # target_include_directories(... PUBLIC its folder)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def sources(root):
    """Every .c and .h of the floors, as root-relative paths."""
    for folder in FLOORS:
        top = os.path.join(root, folder)
        for dirpath, _, names in os.walk(top):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def resolve(root, src, name):
    """The root-relative file `#include "name"` in `src` reaches, or None (not ours)."""
    bases = [os.path.dirname(src), ""] + EXPORTED
    for base in bases:
        path = os.path.normpath(os.path.join(base, name))
        if not path.startswith("..") and os.path.isfile(os.path.join(root, path)):
            return path
    return None


def folder(path):
    return path.split(os.sep)[0]


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the components of more than one file."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.append(member)
                        if member == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def unplaced(root):
    """Components the top CMakeLists.txt builds that have no floor here: a new folder must be
    given one, or its includes would go unchecked."""
    try:
        with open(os.path.join(root, "CMakeLists.txt")) as f:
            subdirs = re.findall(r"^\s*add_subdirectory\(\s*([\w./-]+)", f.read(), re.M)
    except OSError:
        return []
    return [f"{d}/ is built but has no floor in tests/unit/floors.py"
            for d in subdirs if d not in FLOORS and d not in NOT_FLOORS]


def check(root):
    """(files, includes, problems) of the tree at `root`."""
    graph, problems = {}, unplaced(root)
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            text = f.read()
        graph[src] = []
        for line_no, name in ((text.count("\n", 0, m.start()) + 1, m.group(1))
                              for m in INCLUDE.finditer(text)):
            dst = resolve(root, src, name)
            if dst is None or folder(dst) not in FLOORS:
                continue
            graph[src].append(dst)
            a, b = folder(src), folder(dst)
            if a != b and FLOORS[b] >= FLOORS[a]:
                problems.append(f"{src}:{line_no}: includes {dst}: {a}/ (floor {FLOORS[a]}) may not "
                                f"include from {b}/ (floor {FLOORS[b]})")
    for comp in strongly_connected(graph):
        if len({folder(p) for p in comp}) > 1:
            problems.append("include cycle across folders: " + " <-> ".join(comp))
    if not graph:
        problems.append(f"no sources found under {root}")
    return len(graph), sum(map(len, graph.values())), problems


def self_test():
    """The check must be able to fail: a made-up tree with one flaw of each kind."""
    files = {"base/a.h": '#include "../interpose/b.h"\n',        # up, and a cycle with b.h
             "interpose/b.h": '#include "../base/a.h"\n',
             "translate/t.c": '  # include "pagecache.h"\n',    # sideways, exported folder
             "pagecache/pagecache.h": '#include <stdio.h>\n#include "gen.h"\n'}
    with tempfile.TemporaryDirectory() as tmp:
        for path, text in files.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(tmp, path), "w") as f:
                f.write(text)
        _, includes, problems = check(tmp)
    want = ["base/a.h:1: includes interpose/b.h", "translate/t.c:1: includes pagecache/pagecache.h",
            "include cycle across folders: base/a.h <-> interpose/b.h"]
    missing = [w for w in want if not any(p.startswith(w) for p in problems)]
    if includes != 3 or len(problems) != 3 or missing:
        print(f"floors: self-test failed: {includes} includes, problems {problems}, missing {missing}")
        return False
    return True


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    if not self_test():
        return 1
    files, includes, problems = check(root)
    for p in problems:
        print(p)
    print(f"floors: {files} files, {includes} includes checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
