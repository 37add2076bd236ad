#!/usr/bin/env python3
"""shape.py: the shape rules of the product code (issue 20): no function over 80 lines, no
file over 800 lines, in the runtime's and the analyzer's folders.

usage: shape.py SOURCE_DIR [--max-function N] [--max-file N]

A function's length is the number of lines between its opening brace and its closing one,
both in column 0 (the project's style: STYLE.md); a file's, its number of lines. Prints
each function and file over the limits and exits 1 if there is any; prints the largest of
each and exits 0 otherwise. The ctest test style.shape runs it.
"""
import os
import sys

FOLDERS = ("common", "mem", "kernel", "annotate", "writer", "sampler", "mpi", "format",
           "include", "analyze")


def sizes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    funcs, start = [], None
    for i, line in enumerate(lines):
        if line.startswith("{"):
            start = i
        elif line.startswith("}") and start is not None:
            funcs.append((i - start - 1, lines[start - 1].strip()[:70] if start else ""))
            start = None
    return len(lines) - 1, funcs


def main(argv):
    args, opts, it = [], {}, iter(argv)
    for a in it:
        if a.startswith("--"):
            opts[a] = next(it, "")
        else:
            args.append(a)
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    max_fn = int(opts.get("--max-function", 80))
    max_file = int(opts.get("--max-file", 800))
    root, bad, big_fn, big_file = args[0], [], (0, ""), (0, "")
    for folder in FOLDERS:
        for dp, _, fs in os.walk(os.path.join(root, folder)):
            for f in sorted(fs):
                if not f.endswith((".c", ".h")):
                    continue
                p = os.path.join(dp, f)
                rel = os.path.relpath(p, root)
                n, funcs = sizes(p)
                if n > max_file:
                    bad.append(f"{rel}: {n} lines (at most {max_file})")
                big_file = max(big_file, (n, rel))
                for k, name in funcs:
                    if k > max_fn:
                        bad.append(f"{rel}: {name}: {k} lines (at most {max_fn})")
                    big_fn = max(big_fn, (k, f"{rel}: {name}"))
    for b in bad:
        print(f"shape: {b}")
    if bad:
        return 1
    print(f"ok: no function over {max_fn} lines (largest {big_fn[0]}: {big_fn[1]}), "
          f"no file over {max_file} (largest {big_file[0]}: {big_file[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
