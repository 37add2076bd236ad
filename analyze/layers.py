#!/usr/bin/env python3
"""layers.py: the folders of the analyzer, or of the runtime, and what depends on what
between them.

usage: layers.py SOURCE_DIR [FOLDER=LIBRARY.a ...] [--deps FOLDER=BELOW,...] [--check]
                 [--quiet]
       layers.py SOURCE_DIR --runtime FOLDER,... [FOLDER=OBJ.o:OBJ.o ...]
                 [--libc LIBC.so] [--deps ...] [--check] [--quiet]

Each folder of analyze/ (util, read, symbols, ...) is one static library with one header,
analyze/FOLDER/FOLDER.h. This script derives the graph between the folders twice:
  - includes: a file of folder A that has `#include "analyze/B/..."`;
  - calls: the static library of A needs (nm: undefined) a symbol that B's defines;
and prints each folder with its files and lines, then both graphs. With --check it fails
(exit 1) on a cycle between folders in either graph, on a file that includes another
folder's header other than analyze/B/B.h (a folder's private header), and, given the
folders' declared links (--deps, as analyze/CMakeLists.txt links each library), on an
include or call to a folder that is not below it. The build runs it with --check
--quiet after linking the CLI, and so does the ctest test analyze_layers;
`cmake --build BUILD --target analyze_layers` prints the graph. Without libraries, only
the include graph is derived.

With --runtime, the folders are the runtime's components at the top of SOURCE_DIR
(common, mem, kernel, annotate, writer, sampler: libsonde.so is linked from their object
files, given per folder separated by ';' or ':').
A folder's header is FOLDER/FOLDER.h, but every header of common/ is public (its small
layers: common.h, sys.h, real.h, real_table.h, log.h, dlns.h), and folders not listed (include/, the
public API; format/, the stream's constants) are not components. A call by a libc name
that libsonde also wraps for the program (write, syscall, dlopen: --libc gives the C
library whose exported names these are) is a call to whichever comes first in the
program's scope, made on purpose by name (tests/unit/sampler/no_self_interpose.sh), not
a call up to the sampler's wrapper; it is not an edge.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"analyze/([^/"]+)/([^"]+)"', re.M)
RT_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^/"]+)/([^"]+)"', re.M)
PUBLIC_ALL = ("common",)


def folders(root, only=None):
    """The folders (those with a FOLDER.h, or those listed), each with its .c and .h files,
    those of subfolders too (as SUB/FILE)."""
    out = {}
    for name in only or sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isdir(d) and (only or os.path.exists(os.path.join(d, name + ".h"))):
            out[name] = sorted(os.path.relpath(os.path.join(dp, f), d)
                               for dp, _, fs in os.walk(d) for f in fs
                               if f.endswith((".c", ".h")))
    return out


def lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def include_graph(root, folds, problems, runtime=False):
    g = {a: set() for a in folds}
    pre = "" if runtime else "analyze/"
    for a, files in folds.items():
        for f in files:
            with open(os.path.join(root, a, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for b, hdr in (RT_INCLUDE if runtime else INCLUDE).findall(text):
                if b == a:
                    continue
                if b not in folds:
                    if not runtime:
                        problems.append(f"{pre}{a}/{f} includes {pre}{b}/{hdr}: no such folder")
                    continue
                if hdr != b + ".h" and not (runtime and b in PUBLIC_ALL):
                    problems.append(f"{pre}{a}/{f} includes {pre}{b}/{hdr}: another "
                                    f"folder's private header (include {pre}{b}/{b}.h)")
                g[a].add(b)
    return g


def nm(lib):
    files = [f for f in re.split(r"[;:]", lib) if f]
    out = subprocess.run(["nm", "-g"] + files, capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRCVWGS":
            defined.add(p[2])
        elif len(p) == 2 and p[0] in "Uw":
            undefined.add(p[1])
    return defined, undefined - defined


def libc_names(libc):
    if not libc:
        return set()
    out = subprocess.run(["nm", "-D", "--defined-only", libc], capture_output=True,
                         text=True, check=True).stdout
    return {p[2].split("@")[0] for p in (l.split() for l in out.splitlines()) if len(p) == 3}


def call_graph(libs, external=frozenset()):
    syms = {a: nm(lib) for a, lib in libs.items()}
    owner = {}
    for a, (defined, _) in syms.items():
        for s in defined:
            owner.setdefault(s, a)
    g = {a: {} for a in libs}
    for a, (_, undefined) in syms.items():
        for s in undefined:
            b = owner.get(s)
            if b and b != a and s not in external:
                g[a].setdefault(b, []).append(s)
    return g


def cycle(g):
    """One cycle of g (a list of nodes, first == last), or None."""
    state, stack = {}, []

    def visit(a):
        state[a] = 1
        stack.append(a)
        for b in sorted(g.get(a, ())):
            if state.get(b) == 1:
                return stack[stack.index(b):] + [b]
            if not state.get(b):
                c = visit(b)
                if c:
                    return c
        stack.pop()
        state[a] = 2
        return None

    for a in sorted(g):
        if not state.get(a):
            c = visit(a)
            if c:
                return c
    return None


def order(g):
    """The folders bottom first: each after everything it depends on."""
    done, out = set(), []

    def visit(a):
        if a in done:
            return
        done.add(a)
        for b in sorted(g.get(a, ())):
            visit(b)
        out.append(a)

    for a in sorted(g):
        visit(a)
    return out


def below(deps, a):
    """Every folder a may use: its declared links, and theirs."""
    seen, todo = set(), list(deps.get(a, ()))
    while todo:
        b = todo.pop()
        if b not in seen:
            seen.add(b)
            todo.extend(deps.get(b, ()))
    return seen


def main(argv):
    check = "--check" in argv
    quiet = "--quiet" in argv
    args, deps, it = [], {}, iter(a for a in argv if a not in ("--check", "--quiet"))
    runtime, libc = None, None
    for a in it:
        if a == "--deps":
            f, _, d = next(it, "").partition("=")
            deps[f] = [x for x in d.split(",") if x]
        elif a == "--runtime":
            runtime = [x for x in next(it, "").split(",") if x]
        elif a == "--libc":
            libc = next(it, "")
        else:
            args.append(a)
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if quiet:
        sys.stdout = open(os.devnull, "w")
    root = args[0] if runtime else os.path.join(args[0], "analyze")
    what = "the runtime's" if runtime else "the analyzer's"
    libs = dict(a.split("=", 1) for a in args[1:])
    folds = folders(root, runtime)
    problems = []
    inc = include_graph(root, folds, problems, bool(runtime))
    calls = call_graph(libs, libc_names(libc)) if libs else {}
    both = {a: set(inc.get(a, ())) | set(calls.get(a, ())) for a in folds}

    print(f"{what} folders, bottom first (files, lines):")
    total = 0
    for a in order(both):
        n = sum(lines(os.path.join(root, a, f)) for f in folds[a])
        total += n
        print(f"  {a + '/':10} {len(folds[a]):3} files {n:6} lines   -> "
              f"{' '.join(sorted(both[a])) or '(nothing)'}")
    print(f"  {'':10} {sum(len(v) for v in folds.values()):3} files {total:6} lines")
    print(f"includes (#include \"{'' if runtime else 'analyze/'}B/...\" in a file of A):")
    for a in order(both):
        if inc[a]:
            print(f"  {a} -> {' '.join(sorted(inc[a]))}")
    if calls:
        print("calls (symbols A's library needs from B's, nm):")
        for a in order(both):
            for b in sorted(calls.get(a, {})):
                s = sorted(calls[a][b])
                more = f" (+{len(s) - 4})" if len(s) > 4 else ""
                print(f"  {a} -> {b}: {' '.join(s[:4])}{more}")
    if deps:
        for name, g in (("includes", inc), ("calls", calls)):
            for a in sorted(g):
                for b in sorted(set(g[a]) - below(deps, a)):
                    problems.append(f"{a}/ {name} {b}/, which is not below it (its library "
                                    f"links {', '.join(deps.get(a, [])) or 'no other folder'})")
    for name, g in (("include", inc), ("call", calls)):
        c = cycle(g) if g else None
        if c:
            problems.append(f"{name} cycle between folders: {' -> '.join(c)}")
    for p in problems:
        print(f"layers: {p}", file=sys.stderr)
    if check and problems:
        return 1
    if check:
        print(f"ok: no cycle between {what} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
