"""nhens from Python: ensemble studies of nonholonomic integrators run in this process through libnhens, their
results as numpy arrays in memory, and run folders written by the nhens program loaded the same way.

    import nhens
    run = nhens.run("quartic", "dla01", h=0.1, T=50, energy=3.06, ensemble=100, seed=1, paths=4)
    run.t, run.timeseries["dH_var"]          # output times, the ensemble variance of the energy error
    run.paths["dH"]                          # 4 x len(run.t): the energy error of the first 4 trajectories
    run.summary["variance_fit"]["C_over_h4"] # summary.json as a dict
    nhens.run("contact-eps", "gonzalez", h=0.1, T=10, preset="shell", plugins=["./libcontact.so"])
    folder = nhens.load_run("nhens-out")     # a folder written by nhens run / merge / report

Bad input raises NhensError (a ValueError) with the nhens program's own message; Ctrl-C returns the finished
part (run.complete is False); nothing is written unless out= names a folder. docs/guide/python.md has more.
"""
from nhens._files import Run, load_run, read_csv
from nhens._library import LibraryNotFound, build_library, candidates, find_library
from nhens._library import load as load_library
from nhens._run import NhensError, default_library, run

__version__ = "0.9.0"
__all__ = ["run", "Run", "load_run", "read_csv", "NhensError", "LibraryNotFound", "find_library", "build_library",
           "load_library", "candidates", "default_library", "Library"]


class Library:
    """One libnhens (path, else find_library()): Library(path).run(...) is nhens.run(..., library=that one)."""

    def __init__(self, path=None):
        self._lib = load_library(path)
        self.path = self._lib.path

    def run(self, system, method, **options):
        return run(system, method, library=self._lib, **options)

    @property
    def version(self):
        return self._lib.nh_version().decode()
