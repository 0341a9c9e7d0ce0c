#!/usr/bin/env python3
"""Import circles between sibling modules, in every crate of the repository.

For every crate root (src/lib.rs, src/main.rs, src/bin/*.rs; benches/*.rs and tests/*.rs
that declare modules), the script maps each file to its module path, reads every path that
starts with `crate::`, `super::` or `self::` (in `use` trees and in expressions), and records an
edge between the two siblings under the modules' nearest common ancestor: a file in
`subscription/admission.rs` naming `crate::subscription::authorizer::X` gives the edge
`admission -> authorizer` inside `subscription`; naming `crate::engine::Y` gives
`subscription -> engine` at the root. A module using its own ancestors (`super::Error`) is no
edge. A circle is a strongly connected component of two or more siblings.

    ci/module-cycles.py [ROOT]        prints every circle; exit status 1 if there is one
    ci/module-cycles.py --graph DIR   prints the sibling edges of the crate in DIR
    ci/module-cycles.py --self-test   checks the script on crates written for the purpose
"""
import os
import re
import sys
from collections import defaultdict

SKIP_DIRS = {"target", ".git", "node_modules", ".venv", "venv", "fuzz/target"}
PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
MOD_RE = re.compile(
    r"^\s*(?:#\[path\s*=\s*\"([^\"]+)\"\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;",
    re.M,
)


def strip(source):
    """Source text without comments, string and char literals (replaced by spaces)."""
    out = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if source.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif source.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', source[i:i + 8]) and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] == "_")):
            m = re.match(r'r(#*)"', source[i:])
            close = '"' + m.group(1)
            j = source.find(close, i + len(m.group(0)))
            i = n if j < 0 else j + len(close)
            out.append(" ")
        elif c == '"':
            i += 1
            while i < n and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
            i += 1
            out.append(" ")
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", source[i:i + 4] + "  "):
            m = re.match(r"'(\\[^']*|[^\\'])'", source[i:])
            i += len(m.group(0)) if m else 1
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def use_paths(text):
    """Every `use` tree of the text, expanded into full paths (lists of segments)."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths.extend(expand(m.group(1)))
    return paths


def expand(tree):
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, s):
        # s: one tree, e.g. a::b::{c,d::e}; a renaming (`as`) does not change the path.
        if "{" not in s:
            out.append(prefix + [p for p in re.sub(r"as\w+$", "", s).split("::") if p])
            return
        head, rest = s.split("{", 1)
        inner = rest[: rest.rfind("}")]
        head_segs = [p for p in head.split("::") if p]
        for part in split_top(inner):
            if part:
                walk(prefix + head_segs, part)

    walk([], tree)
    return out


def split_top(s):
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


class Crate:
    def __init__(self, name, root_file):
        self.name = name
        self.files = {}  # module path tuple -> file
        self.inline = set()  # module paths declared inline (`mod x { ... }`)
        self.load((), root_file)

    def load(self, path, file):
        if path in self.files:
            return
        self.files[path] = file
        try:
            with open(file, encoding="utf-8") as f:
                raw = f.read()
        except OSError:
            return
        text = strip(raw)
        base = os.path.dirname(file)
        stem = os.path.basename(file)[:-3]
        is_dir_owner = stem in ("mod", "lib", "main") or not path
        child_dir = base if is_dir_owner else os.path.join(base, stem)
        for m in MOD_RE.finditer(raw):  # raw: a #[path] is a string
            explicit, name = m.group(1), m.group(2)
            if explicit:
                child = os.path.normpath(os.path.join(base, explicit))
            else:
                a = os.path.join(child_dir, name + ".rs")
                b = os.path.join(child_dir, name, "mod.rs")
                child = a if os.path.exists(a) else b
            if os.path.exists(child):
                self.load(path + (name,), child)
        for m in re.finditer(r"\bmod\s+([A-Za-z_]\w*)\s*\{", text):
            self.inline.add(path + (m.group(1),))

    def modules(self):
        return set(self.files) | self.inline

    def resolve(self, here, segs):
        """The module a path names, as a tuple, or None."""
        if not segs:
            return None
        head, rest = segs[0], segs[1:]
        if head == "crate":
            base = ()
        elif head == "self":
            base = here
        elif head == "super":
            base = here[:-1] if here else ()
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        else:
            return None
        mods = self.modules()
        target = base
        for seg in rest:
            if target + (seg,) in mods:
                target = target + (seg,)
            else:
                break
        return target

    def edges(self):
        edges = defaultdict(set)  # parent -> {(a, b)}
        for here, file in self.files.items():
            try:
                with open(file, encoding="utf-8") as f:
                    text = strip(f.read())
            except OSError:
                continue
            found = use_paths(text)
            for m in PATH_RE.finditer(text):
                segs = [m.group(1)] + [s.strip() for s in m.group(2).split("::") if s.strip()]
                found.append(segs)
            for segs in found:
                target = self.resolve(here, segs)
                if target is None:
                    continue
                k = 0
                while k < len(here) and k < len(target) and here[k] == target[k]:
                    k += 1
                if k == len(here) or k == len(target):
                    continue  # an ancestor or a descendant: no sibling edge
                edges[here[:k]].add((here[k], target[k]))
        return edges


def sccs(nodes, adj):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
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
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def crate_roots(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [
            d for d in dirnames
            if d not in SKIP_DIRS and not d.startswith(".") and os.path.join(rel, d) not in SKIP_DIRS
        ]
        if "Cargo.toml" not in filenames:
            continue
        src = os.path.join(dirpath, "src")
        for name in ("lib.rs", "main.rs"):
            if os.path.exists(os.path.join(src, name)):
                yield f"{rel}/src/{name}", os.path.join(src, name)
        for extra in ("src/bin", "benches", "tests", "examples"):
            d = os.path.join(dirpath, extra)
            if os.path.isdir(d):
                for f in sorted(os.listdir(d)):
                    p = os.path.join(d, f)
                    if f.endswith(".rs"):
                        yield f"{rel}/{extra}/{f}", p
                    elif os.path.exists(os.path.join(p, "main.rs")):
                        yield f"{rel}/{extra}/{f}/main.rs", os.path.join(p, "main.rs")


def self_test():
    """Small crates with and without circles: each must be judged as written."""
    import tempfile

    def crate(files):
        d = tempfile.mkdtemp()
        open(os.path.join(d, "Cargo.toml"), "w").write("[package]\nname = \"t\"\n")
        for path, text in files.items():
            full = os.path.join(d, "src", path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            open(full, "w").write(text)
        return Crate("t", os.path.join(d, "src", "lib.rs"))

    def circles(c):
        found = []
        for parent, es in c.edges().items():
            adj = defaultdict(set)
            for a, b in es:
                adj[a].add(b)
            found += [(parent, tuple(x)) for x in sccs({n for e in es for n in e}, adj)]
        return sorted(found)

    cases = [
        # A grouped `use` one way, an expression path the other: a circle at the root.
        ({"lib.rs": "mod a;\nmod b;\n", "a.rs": "use crate::{b::{X, Y as Z}};\n",
          "b.rs": "fn f() { crate::a::g(); }\n"}, [((), ("a", "b"))]),
        # `super::` between siblings inside a directory module, and a doc comment and a
        # string that name the other way (neither counts).
        ({"lib.rs": "pub mod s;\n", "s/mod.rs": "mod x;\nmod y;\n",
          "s/x.rs": "use super::y::T;\n", "s/y.rs": "/// crate::s::x::U\nconst N: &str = \"super::x\";\n"},
         []),
        ({"lib.rs": "pub mod s;\n", "s/mod.rs": "mod x;\nmod y;\n",
          "s/x.rs": "use super::y::T;\n", "s/y.rs": "use super::super::s::x::U;\n"},
         [(("s",), ("x", "y"))]),
        # A child using its parent, and the parent its child: no circle.
        ({"lib.rs": "mod p;\n", "p/mod.rs": "mod c;\npub use c::T;\npub struct E;\n",
          "p/c.rs": "use super::E;\npub struct T;\n"}, []),
        # Three modules in a ring.
        ({"lib.rs": "mod a;\nmod b;\nmod c;\n", "a.rs": "use crate::b::B;\n",
          "b.rs": "use crate::c::C;\n", "c.rs": "use crate::a::A;\n"}, [((), ("a", "b", "c"))]),
    ]
    for i, (files, want) in enumerate(cases):
        got = circles(crate(files))
        if got != want:
            print(f"module-cycles self-test {i}: found {got}, expected {want}")
            return 1
    print(f"module-cycles self-test: {len(cases)} cases judged as written")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    if len(argv) > 1 and argv[1] == "--graph":
        d = argv[2]
        for label, file in crate_roots(d):
            if os.path.dirname(os.path.relpath(file, d)) not in ("src",):
                continue
            for parent, es in sorted(Crate(label, file).edges().items()):
                for a, b in sorted(es):
                    print(f"{label} {'::'.join(parent) or '(root)'}: {a} -> {b}")
        return 0
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    circles = 0
    crates = 0
    for label, file in crate_roots(root):
        crates += 1
        for parent, es in sorted(Crate(label, file).edges().items()):
            adj = defaultdict(set)
            nodes = set()
            for a, b in es:
                adj[a].add(b)
                nodes |= {a, b}
            for comp in sccs(nodes, adj):
                circles += 1
                where = "::".join(parent) or "crate root"
                print(f"circle in {label} ({where}): {' <-> '.join(comp)}")
                for a, b in sorted(es):
                    if a in comp and b in comp:
                        print(f"    {a} -> {b}")
    print(f"module-cycles: {crates} crate roots, {circles} import circles")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
