"""nhens from Python: load a run folder into numpy arrays, and run ensembles in-process through libnhens.

Standard library and numpy only; no installation: put this folder on sys.path (or PYTHONPATH).

    import nhens
    run = nhens.load_run("nhens-out")          # a folder written by nhens run / merge / report
    t, var = run.timeseries["t"], run.timeseries["dH_var"]
    run.summary["variance_fit"]["C_over_h4"], run.quantiles["dH_q50"], run.paths["dH_0"]

    lib = nhens.Library()                      # finds libnhens.so (NHENS_LIBRARY, ../build, the system)
    run = lib.run("quartic", "dla01", h=0.1, T=50, energy=3.06, ensemble=100, out="/tmp/q")

Columns are numpy float arrays (nan where the CSV says nan); the CSV files are the documented outputs of
`nhens run` (docs/guide/outputs.md), summary.json follows docs/schema/summary.schema.json.
"""
import ctypes
import ctypes.util
import json
import os
import tempfile

import numpy as np

__all__ = ["Run", "load_run", "read_csv", "Library", "NhensError"]


class NhensError(RuntimeError):
    """A run that libnhens refused or could not complete; the message names the bad value."""


def read_csv(path):
    """A CSV file of nhens (a header row, then numbers) as {column name: numpy array}, in column order."""
    with open(path, newline="") as f:
        header = f.readline().strip().split(",")
        data = np.loadtxt(f, delimiter=",", ndmin=2) if os.path.getsize(path) > 0 else np.empty((0, len(header)))
    if data.size == 0:
        data = np.empty((0, len(header)))
    if data.shape[1] != len(header):
        raise ValueError(f"{path}: {data.shape[1]} values a row, {len(header)} names in the header")
    return {name: data[:, j].copy() for j, name in enumerate(header)}


class Run:
    """The outputs of one run folder: summary (dict), timeseries, quantiles, paths (dicts of arrays; paths and
    quantiles are {} when the run has none)."""

    def __init__(self, folder):
        self.folder = os.fspath(folder)
        with open(os.path.join(self.folder, "summary.json")) as f:
            self.summary = json.load(f)
        self.timeseries = read_csv(os.path.join(self.folder, "timeseries.csv"))
        self.quantiles = self._optional("quantiles.csv")
        self.paths = self._optional("paths.csv")

    def _optional(self, name):
        path = os.path.join(self.folder, name)
        return read_csv(path) if os.path.exists(path) else {}

    @property
    def t(self):
        return self.timeseries["t"]

    def column(self, name):
        """A column of timeseries.csv, quantiles.csv or paths.csv by name."""
        for table in (self.timeseries, self.quantiles, self.paths):
            if name in table:
                return table[name]
        known = sorted(set(self.timeseries) | set(self.quantiles) | set(self.paths))
        raise KeyError(f"no column {name!r} in {self.folder}; columns: {', '.join(known)}")

    def plot(self, name, ax=None, **style):
        """Draws a column against t on a matplotlib axis (matplotlib is needed only here); returns the axis."""
        import matplotlib.pyplot as plt

        ax = ax if ax is not None else plt.gca()
        ax.plot(self.column("t") if name not in self.paths else self.paths["t"], self.column(name),
                label=style.pop("label", name), **style)
        ax.set_xlabel("t")
        ax.set_ylabel(name)
        return ax

    def __repr__(self):
        s = self.summary
        return (f"Run({self.folder!r}: {s['system']['name']} / {s['method']['name']}, h={s['h']}, T={s['T']}, "
                f"{s['trajectories_done']} of {s['ensemble']} trajectories)")


def load_run(folder):
    """The run written to `folder` by nhens run, nhens merge or a run of nhens report."""
    return Run(folder)


def _find_library():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("NHENS_LIBRARY", ""),
                  os.path.join(here, "..", "build", "libnhens.so"),
                  ctypes.util.find_library("nhens") or ""]
    for c in candidates:
        if c and (os.path.exists(c) or not os.path.dirname(c)):
            return c
    raise NhensError("libnhens.so not found: build it (bash scripts/setup.sh) or set NHENS_LIBRARY")


class Library:
    """libnhens through ctypes: runs an ensemble in this process and loads its outputs."""

    def __init__(self, path=None):
        self.path = path or _find_library()
        self._lib = ctypes.CDLL(self.path)
        f = self._lib.nh_simple_run
        f.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double,
                      ctypes.c_double, ctypes.c_long, ctypes.c_long, ctypes.c_uint64, ctypes.c_int, ctypes.c_double,
                      ctypes.c_char_p, ctypes.c_long, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        f.restype = ctypes.c_int

    def run(self, system, method, h, T, energy=None, preset=None, ensemble=0, seed=1, threads=None, every=0,
            params=None, solver="kinsol", paths=0, out=None):
        """One ensemble study, as `nhens run` does it; returns the loaded Run. params: {"n": 2, ...};
        ensemble 0: the shell preset's, or 1 for a state; out: a folder (default: a new temporary one)."""
        if (energy is None) == (preset is None):
            raise ValueError("give exactly one of energy= (an energy shell) or preset=")
        out = out or tempfile.mkdtemp(prefix="nhens-")
        text = ",".join(f"{k}={v}" for k, v in (params or {}).items())
        message = ctypes.create_string_buffer(1024)
        rc = self._lib.nh_simple_run(system.encode(), text.encode(), method.encode(), solver.encode(), float(h),
                                     float(T), int(every), int(ensemble), int(seed), int(threads or os.cpu_count()),
                                     float(energy if energy is not None else 0.0),
                                     preset.encode() if preset else None, int(paths), os.fsencode(out), message,
                                     len(message))
        if rc != 0:
            raise NhensError(message.value.decode(errors="replace"))
        return load_run(out)
