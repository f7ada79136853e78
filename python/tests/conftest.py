"""Paths for the tests of the nhens package (CTest sets them to its build; by hand they default to ../build):
the nhens program, libnhens and the plugin fixtures. The package is imported from this source tree."""
import os
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(PYTHON_DIR)
BUILD = os.path.join(ROOT, "build")
sys.path.insert(0, PYTHON_DIR)
os.environ.setdefault("NHENS_LIBRARY", os.path.join(BUILD, "libnhens.so"))


def program():
    return os.environ.get("NHENS_PROGRAM", os.path.join(BUILD, "nhens"))


def plugin(variable, name):
    return os.environ.get(variable, os.path.join(BUILD, name))


def run_program(args, **kwargs):
    """The nhens program with args; the finished process (text output)."""
    return subprocess.run([program(), *args], capture_output=True, text=True, **kwargs)


@pytest.fixture
def nhens_program():
    return program()
