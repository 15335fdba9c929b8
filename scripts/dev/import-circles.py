#!/usr/bin/env python3
"""Import circles inside each crate of the workspace.

A circle is a strongly connected component of two or more source files in the graph
"file A names a path in file B" (`use crate::…`, `use super::…`, `crate::x::y` in code; test
modules after `#[cfg(test)]` left out; an item re-exported with `pub use` counts as its
defining module's). A folder is one concept: its
files naming its `mod.rs` (or the crate root) is not a circle; a folder holds its files, so a
module that names a folder depends on every file in it (run -> mpi -> mpi::rank -> run is a
circle). Circles are between concepts: siblings and cousins that name each other.

    scripts/dev/import-circles.py            every circle, one line each, and the count
    scripts/dev/import-circles.py -e         with the edges inside each circle
    scripts/dev/import-circles.py --max 3    exit 1 when there are more than 3
"""
import os
import re
import sys

USE = re.compile(r"use\s+((?:crate|super|self)::[^;]+);", re.S)
PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src (src/bin left out)."""
    found = {}
    for d, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            parts = os.path.relpath(os.path.join(d, f), src)[:-3].split(os.sep)
            if parts[0] == "bin":
                continue
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            found[tuple(parts)] = os.path.join(d, f)
    # Modules declared under #[cfg(test)] (and what is inside them) are tests, not the code.
    tests = set()
    for m, f in found.items():
        text = open(f, encoding="utf-8").read()
        for t in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            tests.add(m + (t.group(1),))
    return {m: f for m, f in found.items() if not any(m[: len(t)] == t for t in tests)}


def expand(path):
    """`a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e."""
    m = re.match(r"^(.*?)\{(.*)\}$", path)
    if not m:
        return [path]
    head, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    return [p for it in items if it for p in expand(head + it)]


def target(mods, module, is_dir_module, path, reexports=None):
    """The module file a path from `module` lands in, or None. An item a module re-exports
    (`pub use x::Item`) lands in the module that defines it."""
    segs = [s for s in path.split("::") if s]
    if segs[0] == "crate":
        full = segs[1:]
    else:
        full = list(module)
        while segs and segs[0] in ("super", "self"):
            if segs.pop(0) == "super":
                full = full[:-1]
        full += segs
    for n in range(len(full), -1, -1):
        if tuple(full[:n]) in mods:
            found = tuple(full[:n])
            item = full[n] if n < len(full) else None
            seen = set()
            while reexports and (found, item) in reexports and (found, item) not in seen:
                seen.add((found, item))
                found = reexports[(found, item)]
            return found
    return None


def reexports_of(mods):
    """(module, item) -> module the item comes from, for every `pub use` of a named item."""
    out = {}
    for m, f in mods.items():
        text = open(f, encoding="utf-8").read()
        is_dir_module = os.path.basename(f) in ("mod.rs", "lib.rs", "main.rs")
        for u in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text, re.S):
            for p in expand(re.sub(r"\s+", "", u.group(1))):
                segs = p.split("::")
                if segs[-1] == "*" or " as " in p:
                    continue
                head = segs[0]
                if head not in ("crate", "super", "self"):
                    p = "self::" + p
                t = target(mods, m, is_dir_module, "::".join(p.split("::")[:-1]) + "::_")
                if t is not None and t != m:
                    out[(m, segs[-1])] = t
    return out


def related(a, b):
    """One module contains the other (a folder's `mod.rs` and its files are one concept)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def graph(mods):
    edges = {m: set() for m in mods}
    reexports = reexports_of(mods)
    for m, f in mods.items():
        text = open(f, encoding="utf-8").read()
        cut = text.find("#[cfg(test)]")
        text = text if cut < 0 else text[:cut]
        is_dir_module = os.path.basename(f) in ("mod.rs", "lib.rs", "main.rs")
        paths = [p for u in USE.finditer(text) for p in expand(re.sub(r"\s+", "", u.group(1)))]
        paths += [p.group(1) for p in PATH.finditer(USE.sub("", text))]
        for p in paths:
            t = target(mods, m, is_dir_module, p, reexports)
            if t is not None and not related(m, t):
                edges[m].add(t)
        # A folder holds its files: whoever depends on the folder depends on them.
        for child in (k for k in mods if len(k) == len(m) + 1 and k[:-1] == m):
            edges[m].add(child)
    return edges


def circles(edges):
    """Tarjan's strongly connected components of two or more nodes."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in edges:
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "crates")
    show_edges = "-e" in sys.argv
    limit = int(sys.argv[sys.argv.index("--max") + 1]) if "--max" in sys.argv else None
    total = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = graph(modules(src))
        for comp in circles(edges):
            total += 1
            name = lambda m: "::".join(m) or "(crate root)"
            print(f"{crate}: {len(comp)} files: {', '.join(sorted(map(name, comp)))}")
            if show_edges:
                inside = set(comp)
                for v in sorted(comp):
                    print(f"    {name(v)} -> {', '.join(sorted(name(w) for w in edges[v] if w in inside))}")
    print(f"import circles: {total}")
    if limit is not None and total > limit:
        sys.exit(1)


if __name__ == "__main__":
    main()
