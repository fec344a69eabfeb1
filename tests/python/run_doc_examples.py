#!/usr/bin/env python3
"""Run the ```python blocks of a Markdown page in order, as one program (usage:
run_doc_examples.py PAGE.md). Exit 77 (skipped) without numpy or pyscf."""
import re
import sys

try:
    import numpy  # noqa: F401
    import pyscf  # noqa: F401
except ImportError as e:
    print("SKIPPED: the examples need numpy and pyscf (%s)" % e)
    sys.exit(77)

text = open(sys.argv[1]).read()
blocks = re.findall(r"```python\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("no ```python block in %s" % sys.argv[1])
code = "\n".join(blocks)
exec(compile(code, sys.argv[1], "exec"), {"__name__": "__main__"})
print("ran %d example block(s) of %s" % (len(blocks), sys.argv[1]))
