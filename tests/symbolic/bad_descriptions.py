"""Every bad description of bad_descriptions.tsv, in one interpreter (SymPy imported once): each case is
tests/symbolic/base.py with one sed-like substitution; nhens-symbolic's main must return 2, print a
message containing the case's fragment, and create no output folder.
Usage: bad_descriptions.py SYMBOLIC_PACKAGE_DIR SOURCE_DIR SCRATCH   (prints "N passed, N failed")"""
import contextlib
import io
import os
import re
import sys

package, src, scratch = sys.argv[1:4]
sys.path.insert(0, package)
from nhens_symbolic.cli import main  # noqa: E402

base = open(os.path.join(src, "tests/symbolic/base.py"), encoding="utf-8").read()
passed = failed = 0


def sed(expr, text):
    """s/PATTERN/REPLACEMENT/ with sed's basic regular expressions as the cases use them."""
    m = re.fullmatch(r"s/((?:[^/\\]|\\.)*)/((?:[^/\\]|\\.)*)/", expr)
    pattern = m.group(1).replace(r"\[", "\x00").replace(r"\]", "\x01")
    pattern = re.escape(pattern).replace(r"\^", "^").replace(r"\$", "$").replace(r"\.\*", ".*")
    pattern = pattern.replace("\x00", r"\[").replace("\x01", r"\]")
    return re.sub(pattern, lambda _: m.group(2).replace(r"\[", "[").replace(r"\]", "]"), text, flags=re.M)


for line in open(os.path.join(src, "tests/symbolic/bad_descriptions.tsv"), encoding="utf-8"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    case, expr, fragment = line.split("\t")
    text = sed(expr, base)
    problem = None
    if text == base:
        problem = "the substitution changes nothing"
    else:
        path = os.path.join(scratch, case + ".py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        out = os.path.join(scratch, "out-" + case)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            status = main([path, "--out", out], {"include": "/nonexistent", "lib": "/nonexistent",
                                                  "nhens": "/nonexistent"})
        message = stderr.getvalue()
        if status != 2:
            problem = f"exit {status}, not 2: {message}"
        elif fragment not in message:
            problem = f"the message lacks '{fragment}': {message}"
        elif os.path.exists(out):
            problem = f"wrote {out}"
    if problem:
        print(f"FAILED: {case}: {problem}")
        failed += 1
    else:
        passed += 1
print(f"bad descriptions: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
