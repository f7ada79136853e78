"""Install-time steps of the nhens package (the metadata is in pyproject.toml): record the source tree the
package comes from (its build/ folder is one place nhens looks for libnhens), and with NHENS_BUILD_LIBRARY=1
build libnhens with CMake and copy it into the package (nhens/_lib/libnhens.so)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        package = os.path.join(self.build_lib, "nhens")
        source = SOURCE if os.path.exists(os.path.join(SOURCE, "CMakeLists.txt")) else None
        with open(os.path.join(package, "_install_info.py"), "w") as f:
            f.write('"""Written by setup.py: the nhens source tree this package was installed from."""\n')
            f.write(f"SOURCE_DIR = {source!r}\n" if source else "SOURCE_DIR = ''\n")
        if os.environ.get("NHENS_BUILD_LIBRARY", "") not in ("", "0"):
            import importlib.util

            spec = importlib.util.spec_from_file_location("nhens_library", os.path.join(HERE, "nhens", "_library.py"))
            library = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(library)
            built = library.build_library(source, os.environ.get("NHENS_BUILD_DIR") or None)
            os.makedirs(os.path.join(package, "_lib"), exist_ok=True)
            shutil.copyfile(os.path.realpath(built), os.path.join(package, "_lib", "libnhens.so"))


setup(cmdclass={"build_py": BuildWithLibrary})
