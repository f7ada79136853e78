"""pip installs the package offline (Debian 12: a venv with --system-site-packages for numpy, setuptools from
python3-setuptools, --no-build-isolation --no-index), and the installed package finds libnhens in the build/
folder of the source tree it was installed from, or at $NHENS_LIBRARY, and says where it looked otherwise."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, PYTHON_DIR, ROOT

PROBE = ("import nhens, sys\n"
         "try:\n    path = nhens.find_library()\n"
         "except nhens.LibraryNotFound as e:\n    print('not found:', e); sys.exit(3)\n"
         "run = nhens.run('quartic', 'dla01', h=0.1, T=2, energy=3.0, ensemble=8, progress=False)\n"
         "print(path, run.summary['trajectories_done'], nhens.__file__)\n")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A copy of the source tree's python/ beside links to its CMakeLists.txt and build/, installed into a venv."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(PYTHON_DIR, source / "python", ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    os.symlink(os.path.join(ROOT, "CMakeLists.txt"), source / "CMakeLists.txt")
    os.symlink(BUILD if os.path.isdir(BUILD) else os.path.dirname(os.environ["NHENS_LIBRARY"]), source / "build")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = dict(os.environ, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-index",
                    str(source / "python")], check=True, env=env, cwd=base)
    return python, source, base


def probe(python, cwd, **env):
    environment = {k: v for k, v in os.environ.items() if k not in ("NHENS_LIBRARY", "PYTHONPATH")}
    environment.update(env)
    return subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=cwd, env=environment)


def test_installed_package_finds_its_source_trees_build(installed):
    python, source, base = installed
    done = probe(python, base)
    assert done.returncode == 0, done.stdout + done.stderr
    path, trajectories, module = done.stdout.split()
    assert path == str(source / "build" / "libnhens.so") and trajectories == "8"
    assert "site-packages" in module  # the installed copy, not the source tree's


def test_installed_package_takes_nhens_library_and_says_where_it_looked(installed, tmp_path):
    python, source, base = installed
    library = os.path.realpath(source / "build" / "libnhens.so")
    done = probe(python, base, NHENS_LIBRARY=library)
    assert done.returncode == 0 and done.stdout.split()[0] == library, done.stderr
    (source / "build").unlink()  # the source tree's build gone (last test of the module)
    (source / "build").mkdir()
    done = probe(python, base)
    if done.returncode == 0:  # an installed libnhens (ldconfig or pkg-config) found instead
        assert "libnhens" in done.stdout.split()[0]
    else:
        assert done.returncode == 3 and "not found: libnhens.so not found (looked at" in done.stdout
        assert "the source tree it was installed from: " + str(source / "build" / "libnhens.so") in done.stdout
