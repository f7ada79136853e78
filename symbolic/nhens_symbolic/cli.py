"""nhens-symbolic: a description (Python) -> derived callbacks -> the C of a plugin -> built -> `nhens check`.

Exit status: 0 the plugin is built (and passes `nhens check` unless --no-check); 1 the compiler or the
check failed; 2 bad input (the description or the options), with a message naming the field. Files are
whole or absent: the C source and the shared object are written under temporary names in the output
folder and renamed into place only once the compiler has succeeded; nothing is written for bad input.
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

from . import description, derive, emit

COMPILE_FLAGS = ["-std=c17", "-O3", "-ffp-contract=off", "-fPIC", "-shared",
                 "-Wall", "-Wextra", "-Wpedantic", "-Wshadow"]


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse(argv):
    p = Parser(prog="nhens-symbolic", description="Derive a nhens system plugin from a Python description, "
               "build it and run `nhens check` on it.")
    p.add_argument("description", help="the description, a Python file (examples/symbolic/*.py)")
    p.add_argument("--out", required=True, help="folder for NAME.c and NAME.so (created if missing)")
    p.add_argument("--no-check", action="store_true", help="build, but do not run `nhens check`")
    p.add_argument("--no-build", action="store_true", help="write NAME.c only")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"), help="the C compiler (default: $CC or cc)")
    p.add_argument("--quiet", action="store_true", help="print only errors and the check's verdict")
    return p.parse_args(argv)


def write_whole(path, text):
    fd, tmp = tempfile.mkstemp(prefix=".", suffix="-" + os.path.basename(path), dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0o22)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)   # as open() would create it (mkstemp's file is 0600)
        return tmp
    except BaseException:
        os.unlink(tmp)
        raise


def compile_plugin(cc, c_path, so_path, paths):
    cmd = shlex.split(cc) + COMPILE_FLAGS + [f"-I{paths['include']}", c_path, "-o", so_path,
                                             f"-L{paths['lib']}", "-lnhens", "-lm"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        return False, f"cannot run the compiler '{cc}': {e.strerror}"
    out = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        return False, f"the compiler failed ({' '.join(cmd)}):\n{out}"
    if out:
        return False, f"the compiler warned ({' '.join(cmd)}):\n{out}"
    return True, ""


def main(argv, paths):
    """paths: include (nhens headers), lib (libnhens), nhens (the program)."""
    try:
        args = parse(argv)
    except UsageError as e:
        print(f"nhens-symbolic: {e}", file=sys.stderr)
        return 2
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    started = time.monotonic()
    try:
        system = description.load(args.description)
        notes = []
        derived = derive.derive(system, notes)
    except description.DescriptionError as e:
        print(f"nhens-symbolic: {args.description}: {e}", file=sys.stderr)
        return 2
    source = emit.emit(system, derived, os.path.basename(args.description))
    log(f"nhens-symbolic: {system.name}: n = {system.n}, m = {system.m}, {len(system.params)} parameters, "
        f"{len(system.presets)} presets, {len(system.observers)} observers; derived in {time.monotonic() - started:.1f} s")
    for note in notes:
        log(f"  {note}")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        print(f"nhens-symbolic: --out '{args.out}' is not a folder", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print(f"nhens-symbolic: cannot create --out '{args.out}': {e.strerror}", file=sys.stderr)
        return 2
    c_path = os.path.join(args.out, system.name + ".c")
    so_path = os.path.join(args.out, system.name + ".so")
    try:
        c_tmp = write_whole(c_path, source)
    except OSError as e:
        print(f"nhens-symbolic: cannot write in --out '{args.out}': {e.strerror}", file=sys.stderr)
        return 2
    if args.no_build:
        os.replace(c_tmp, c_path)
        log(f"  wrote {c_path}")
        return 0
    so_tmp = so_path + f".tmp{os.getpid()}"
    try:
        ok, message = compile_plugin(args.cc, c_tmp, so_tmp, paths)
        if not ok:
            print(f"nhens-symbolic: {system.name}: {message}", file=sys.stderr)
            return 1
        os.replace(c_tmp, c_path)
        os.replace(so_tmp, so_path)
    finally:
        for tmp in (c_tmp, so_tmp):
            if os.path.exists(tmp):
                os.unlink(tmp)
    log(f"  wrote {c_path} and {so_path}")
    if args.no_check:
        return 0
    cmd = [paths["nhens"], "--plugin", so_path, "check", "--system", system.name]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        print(f"nhens-symbolic: cannot run '{paths['nhens']}' for the check: {e.strerror}", file=sys.stderr)
        return 1
    if not args.quiet or proc.returncode != 0:
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
    verdict = "passed" if proc.returncode == 0 else "FAILED"
    print(f"nhens-symbolic: {system.name}: nhens check {verdict} ({' '.join(shlex.quote(c) for c in cmd)})")
    return 0 if proc.returncode == 0 else 1
