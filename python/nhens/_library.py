"""Finding, building and loading libnhens (ctypes), and the prototypes of the C functions the package calls
(include/nhens/job.h, output.h, plugin.h, registry.h)."""
import ctypes
import ctypes.util
import os
import shutil
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = "libnhens.so"
ERROR_SIZE = 512  # sizeof(nh_error): char msg[512]
NH_ERR_INPUT, NH_ERR_NOMEM, NH_ERR_IO = -1, -2, -3


class LibraryNotFound(OSError):
    """No libnhens.so where the package looks (the message lists the places and how to provide one)."""


def _recorded_source_build():
    """The build folder of the source tree this package was installed from (recorded at install), or None."""
    try:
        from nhens import _install_info  # written by setup.py
    except ImportError:
        return None
    return os.path.join(_install_info.SOURCE_DIR, "build", _NAME) if _install_info.SOURCE_DIR else None


def _pkg_config_library():
    if not shutil.which("pkg-config"):
        return None
    done = subprocess.run(["pkg-config", "--variable=libdir", "nhens"], capture_output=True, text=True, check=False)
    return os.path.join(done.stdout.strip(), _NAME) if done.returncode == 0 and done.stdout.strip() else None


def candidates():
    """Where the package looks for libnhens, in order (a generator: the slower look-ups run only when the earlier
    places have none): $NHENS_LIBRARY, a copy built into the package at install (NHENS_BUILD_LIBRARY=1 pip install
    ./python), the build/ folder of the source tree (beside python/, or the one the package was installed
    from), the installed library (pkg-config nhens, then ldconfig's cache)."""
    looks = [("NHENS_LIBRARY", lambda: os.environ.get("NHENS_LIBRARY") or None),
             ("the package", lambda: os.path.join(_HERE, "_lib", _NAME)),
             ("the source tree", lambda: os.path.normpath(os.path.join(_HERE, "..", "..", "build", _NAME))),
             ("the source tree it was installed from", _recorded_source_build),
             ("pkg-config nhens", _pkg_config_library),
             ("ldconfig", lambda: ctypes.util.find_library("nhens"))]
    for where, look in looks:
        path = look()
        if path:
            yield where, path


def find_library():
    """The path of the first libnhens of candidates() that exists."""
    tried = []
    for where, path in candidates():
        if os.path.exists(path) or (where == "ldconfig" and not os.path.dirname(path)):
            return path
        tried.append(f"{where}: {path}")
    raise LibraryNotFound(f"libnhens.so not found (looked at {'; '.join(tried) or 'nothing'}); build it (bash "
                          "scripts/setup.sh, or nhens.build_library()), set NHENS_LIBRARY to its path, or install nhens "
                          "(cmake --install)")


def build_library(source=None, build_dir=None, jobs=2):
    """Configures and builds libnhens with CMake (Release) from the source tree `source` (default: the one beside
    this package) into build_dir (default: SOURCE/build); returns the library's path."""
    source = os.path.abspath(source or os.path.join(_HERE, "..", ".."))
    if not os.path.exists(os.path.join(source, "CMakeLists.txt")):
        raise LibraryNotFound(f"{source} is not the nhens source tree (no CMakeLists.txt): give source=")
    build_dir = os.path.abspath(build_dir or os.path.join(source, "build"))
    cmake = shutil.which("cmake")
    if not cmake:
        raise LibraryNotFound("cmake is not installed (apt-get install cmake), so libnhens cannot be built")
    subprocess.run([cmake, "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"], check=True)
    subprocess.run([cmake, "--build", build_dir, "--target", "nhens", "-j", str(jobs)], check=True)
    return os.path.join(build_dir, _NAME)


_c_long_p = ctypes.POINTER(ctypes.c_long)
_PROTOTYPES = {
    "nh_version": ([], ctypes.c_char_p),
    "nh_registry_create": ([ctypes.c_char_p], ctypes.c_void_p),
    "nh_registry_free": ([ctypes.c_void_p], None),
    "nh_registry_load_plugin": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int),
    "nh_registry_system_count": ([ctypes.c_void_p], ctypes.c_int),
    "nh_registry_system_at": ([ctypes.c_void_p, ctypes.c_int], ctypes.POINTER(ctypes.c_char_p)),
    "nh_job_create": ([ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p],
                      ctypes.c_void_p),
    "nh_job_free": ([ctypes.c_void_p], None),
    "nh_job_run": ([ctypes.c_void_p, ctypes.c_char_p], ctypes.c_int),
    "nh_job_interrupt": ([ctypes.c_void_p], None),
    "nh_job_progress": ([ctypes.c_void_p, _c_long_p, _c_long_p], None),
    "nh_job_result": ([ctypes.c_void_p], ctypes.c_void_p),
    "nh_job_summary": ([ctypes.c_void_p, ctypes.c_char_p], ctypes.c_void_p),
    "nh_job_text_free": ([ctypes.c_void_p], None),
    "nh_job_write": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int),
    "nh_run_table_columns": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_int),
    "nh_run_table_rows": ([ctypes.c_void_p, ctypes.c_int], ctypes.c_long),
    "nh_run_table_column_name": ([ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t],
                                 ctypes.c_int),
    "nh_run_table_column_values": ([ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double)],
                                   ctypes.c_int),
}


def load(path=None):
    """libnhens (path, else find_library()) with the package's prototypes declared."""
    path = os.fspath(path) if path else find_library()
    lib = ctypes.CDLL(path)
    missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
    if missing:
        raise LibraryNotFound(f"{path} is a libnhens without {', '.join(missing)}: it is older than this package; "
                              "rebuild it from the same source tree")
    for name, (argtypes, restype) in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = argtypes, restype
    lib.path = path
    return lib
