"""Run folders on disk: the CSV tables and summary.json that `nhens run`, `nhens merge`, a run of `nhens report`
and nhens.run(out=...) write (docs/guide/outputs.md), loaded into numpy arrays."""
import json
import os
import re

import numpy as np

_PATH_COLUMN = re.compile(r"^(?P<observer>.+)_(?P<index>\d+)$")


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


def paths_by_observer(columns):
    """The columns of paths.csv (t, O_0, O_1, ... per observer O) as {O: 2-D array (trajectories x times)}."""
    grouped = {}
    for name, values in columns.items():
        match = _PATH_COLUMN.match(name)
        if match:
            grouped.setdefault(match["observer"], {})[int(match["index"])] = values
    return {o: np.vstack([by_index[i] for i in sorted(by_index)]) for o, by_index in grouped.items()}


class Run:
    """The outputs of one run: summary (the dict of summary.json), timeseries and quantiles ({column: 1-D array}),
    paths ({observer: 2-D array, one row per sample path, one column per output time t}), trajectories (the
    per-trajectory table, None where the run has none), complete (False for an interrupted run).
    Quantiles and paths are {} when the run has none."""

    def __init__(self, summary, timeseries, quantiles, path_columns, folder=None, trajectories=None):
        self.summary = summary
        self.timeseries = timeseries
        self.quantiles = quantiles
        self.path_columns = path_columns
        self.paths = paths_by_observer(path_columns)
        self.trajectories = trajectories
        self.folder = folder

    @property
    def t(self):
        """The output times (of timeseries and of the sample paths)."""
        return self.timeseries["t"]

    @property
    def complete(self):
        """Whether every trajectory is in the statistics (False after an interruption)."""
        return bool(self.summary.get("complete", True))

    def column(self, name):
        """A column of the time series, the quantiles or the sample paths ("dH_0": path 0 of dH) by name."""
        for table in (self.timeseries, self.quantiles, self.path_columns):
            if name in table:
                return table[name]
        known = sorted(set(self.timeseries) | set(self.quantiles) | set(self.path_columns))
        raise KeyError(f"no column {name!r} in this run; columns: {', '.join(known)}")

    def plot(self, name, ax=None, **style):
        """Draws a column against its times on a matplotlib axis (matplotlib is needed only here); the axis."""
        import matplotlib.pyplot as plt

        ax = ax if ax is not None else plt.gca()
        times = self.quantiles["t"] if name in self.quantiles and name not in self.timeseries else self.t
        ax.plot(times, self.column(name), label=style.pop("label", name), **style)
        ax.set_xlabel("t")
        ax.set_ylabel(name)
        return ax

    def __repr__(self):
        s = self.summary
        where = f"{self.folder!r}: " if self.folder else ""
        return (f"Run({where}{s['system']['name']} / {s['method']['name']}, h={s['h']}, T={s['T']}, "
                f"{s['trajectories_done']} of {s['ensemble']} trajectories{'' if self.complete else ', incomplete'})")


def load_run(folder):
    """The run written to `folder` by nhens run, nhens merge, a run of nhens report or nhens.run(out=folder)."""
    folder = os.fspath(folder)

    def optional(name):
        path = os.path.join(folder, name)
        return read_csv(path) if os.path.exists(path) else {}

    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    trajectories = optional("trajectories.csv") or None
    return Run(summary, read_csv(os.path.join(folder, "timeseries.csv")), optional("quantiles.csv"),
               optional("paths.csv"), folder=folder, trajectories=trajectories)
