#!/usr/bin/env python3
"""One import path per public type: flags a `pub use` that gives a type a second public path.

For every library crate of the workspace, builds the tree of modules from `mod` declarations
and reads each `pub use` in a publicly reachable module. A re-export is a second path when
* it re-exports a type (a CamelCase name) from a module of the same crate that is itself
  public (the type already has the path through that module); or
* it re-exports a single type from another crate (the type's path is that crate's).
Whole crates may be re-exported (`pub use mrtr_core as core;`): that adds a crate, not a type.
Exits 1 naming each second path.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = [
    "core", "json", "backends/aes-gcm", "backends/chacha20poly1305", "backends/aes-gcm-siv",
    "backends/aws-lc", "std-adapter", "std-adapter/replay", "std-adapter/subscriptions",
    "rmcp-adapter",
]
MOD = re.compile(r"^\s*(pub\s+)?(?:\(\s*[a-z:]+\s*\)\s*)?mod\s+([a-z_0-9]+)\s*;", re.M)
PUB_MOD = re.compile(r"^\s*pub\s+mod\s+([a-z_0-9]+)\s*;", re.M)
PUB_USE = re.compile(r"^\s*pub\s+use\s+([^;]+);", re.M)
TYPE = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", text)


def child_file(path, name):
    base = os.path.dirname(path)
    stem = os.path.basename(path)
    if stem not in ("lib.rs", "mod.rs"):
        base = os.path.join(base, stem[:-3])
    for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
        if os.path.exists(cand):
            return cand
    return None


def walk(path, modpath, public, out):
    """Records (module path, file, public?, child modules {name: public?}) for each module."""
    text = strip_comments(open(path, encoding="utf-8").read())
    children = {}
    for m in MOD.finditer(text):
        is_pub = m.group(1) is not None and "pub(" not in m.group(0).replace(" ", "")
        children[m.group(2)] = is_pub
    out[modpath] = (path, public, children, text)
    for name, is_pub in children.items():
        f = child_file(path, name)
        if f:
            walk(f, modpath + (name,), public and is_pub, out)


def items(spec):
    """`a::b::{C, D as E}` -> ("a::b", ["C", "D"]); `a::B` -> ("a", ["B"])."""
    spec = " ".join(spec.split())
    if "{" in spec:
        prefix, rest = spec.split("{", 1)
        names = [n.strip() for n in rest.rstrip("}").split(",") if n.strip()]
        return prefix.rstrip(":").strip(), [n.split(" as ")[0].strip() for n in names]
    head, _, last = spec.rpartition("::")
    return head, [last.split(" as ")[0].strip()]


def second_paths(root, crates):
    """Every second public path to a type in `crates` (folders under `root`)."""
    problems = []
    for crate in crates:
        lib = os.path.join(root, crate, "src", "lib.rs")
        if not os.path.exists(lib):
            continue
        mods = {}
        walk(lib, (), True, mods)
        for modpath, (path, public, children, text) in mods.items():
            if not public:
                continue
            for m in PUB_USE.finditer(text):
                prefix, names = items(m.group(1))
                if not prefix:
                    continue  # `pub use some_crate;`: a whole crate
                segs = prefix.split("::")
                if segs[0] == "crate":
                    target, local = tuple(segs[1:]), True
                elif segs[0] == "self":
                    target, local = modpath + tuple(segs[1:]), True
                elif segs[0] == "super":
                    target, local = modpath[:-1] + tuple(segs[1:]), True
                elif segs[0] in children:
                    target, local = modpath + tuple(segs), True
                else:
                    target, local = None, False
                for name in names:
                    if not TYPE.match(name):
                        continue
                    rel = os.path.relpath(path, root)
                    where = "::".join(("crate",) + modpath)
                    if local:
                        if target in mods and mods[target][1]:
                            problems.append(f"{rel}: {where} re-exports {name}, already public "
                                            f"as crate::{'::'.join(target)}::{name}")
                    else:
                        problems.append(f"{rel}: {where} re-exports {name} from {prefix}")
    return problems


def self_test():
    """The check finds what it must and nothing else, on a crate written for the purpose."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        src = os.path.join(root, "demo", "src")
        os.makedirs(os.path.join(src, "open"))
        files = {
            "lib.rs": "pub mod open;\nmod hidden;\npub use open::Thing;\n"
                      "pub use hidden::Other;\npub use other_crate::Foreign;\n"
                      "pub use other_crate as whole;\npub use open::CONST_NAME;\n",
            "open/mod.rs": "pub struct Thing;\npub const CONST_NAME: u8 = 1;\n",
            "hidden.rs": "pub struct Other;\n",
        }
        for name, text in files.items():
            with open(os.path.join(src, name), "w", encoding="utf-8") as f:
                f.write(text)
        found = second_paths(root, ["demo"])
    want = ["re-exports Thing, already public", "re-exports Foreign from other_crate"]
    assert len(found) == len(want), found
    for w, f in zip(want, found):
        assert w in f, (w, f)
    print("import-paths self-test: passed")


def main():
    if "--self-test" in sys.argv[1:]:
        self_test()
        return 0
    problems = second_paths(ROOT, CRATES)
    for p in problems:
        print(p)
    print(f"import-paths: {len(CRATES)} crates, {len(problems)} second paths to a type")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
