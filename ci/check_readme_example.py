#!/usr/bin/env python3
"""mrtr-rmcp's README shows examples/two_tools.rs whole: the code block after `## A complete
server` must be that file, byte for byte (the example is what tests/adoption.rs runs in both
eras; the README's copy is compiled as a doctest). Exit status 1, with the first difference,
if they part."""
import difflib
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
readme = open(os.path.join(root, "rmcp-adapter", "README.md"), encoding="utf-8").read()
example = open(os.path.join(root, "rmcp-adapter", "examples", "two_tools.rs"), encoding="utf-8").read()
section = readme.split("## A complete server", 1)
if len(section) != 2:
    sys.exit("rmcp-adapter/README.md has no '## A complete server' section")
block = re.search(r"```rust[^\n]*\n(.*?)```", section[1], re.S)
if not block:
    sys.exit("the '## A complete server' section has no rust code block")
if block.group(1) != example:
    diff = difflib.unified_diff(example.splitlines(), block.group(1).splitlines(),
                                "examples/two_tools.rs", "README.md", lineterm="", n=1)
    print("\n".join(list(diff)[:40]))
    sys.exit("rmcp-adapter/README.md's complete server differs from examples/two_tools.rs")
print(f"README's complete server is examples/two_tools.rs ({example.count(chr(10))} lines)")
