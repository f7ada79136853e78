"""nhens.run: one ensemble study in this process through libnhens' in-memory jobs (include/nhens/job.h), its
tables handed over as numpy arrays. The options reach the library as the text of `nhens run`'s options, so
the library checks them with the program's own table: the same limits and the same messages."""
import ctypes
import json
import numbers
import os
import shlex
import sys
import threading
import time

import numpy as np

from nhens import _library
from nhens._files import Run

NH_RUN_TABLE_TIMESERIES, NH_RUN_TABLE_QUANTILES, NH_RUN_TABLE_PATHS, NH_RUN_TABLE_TRAJECTORIES = 0, 1, 2, 3
_POLL_SECONDS = 0.1
_LOG_PROGRESS_SECONDS = 5.0


class NhensError(ValueError):
    """Input libnhens refused (a value, a name, a plugin); the message is the nhens program's own."""


def _raise(code, message):
    text = message.value.decode(errors="replace") if hasattr(message, "value") else str(message)
    if code == _library.NH_ERR_INPUT:
        raise NhensError(text)
    if code == _library.NH_ERR_IO:
        raise OSError(text)
    raise RuntimeError(text)


def _text(value):
    """An option's value as the command line would spell it; a value the program would refuse (True, 2.7 for an
    integer, 2**64 + 8) keeps a spelling it refuses, so the refusal is the program's."""
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        return value.decode() if isinstance(value, bytes) else str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # the shortest text that reads back as the same double
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _arguments(system, method, options, params, observers, reduce=None):
    args = [f"--system={_text(system)}", f"--method={_text(method)}"]
    for name, value in (params or {}).items():
        args.append(f"--param={_text(name)}={_text(value)}")
    for name, value in options.items():
        if value is not None:
            args.append(f"--{name}={_text(value)}")
    if observers is not None:
        names = observers if isinstance(observers, str) else ",".join(_text(o) for o in observers)
        args.append(f"--observe={names}")
    if reduce is not None:
        terms = reduce if isinstance(reduce, str) else ",".join(_text(r) for r in reduce)
        args.append(f"--reduce={terms}")
    return args


def _encode(text, what):
    if "\0" in text:
        raise NhensError(f"{what} {text!r} holds a NUL character")
    return os.fsencode(text)


class _Registry:
    """The built-in systems and methods plus the plugins' (freed with the run; a plugin stays loaded)."""

    def __init__(self, lib, plugins):
        self.lib = lib
        err = ctypes.create_string_buffer(_library.ERROR_SIZE)
        self.handle = lib.nh_registry_create(err)
        if not self.handle:
            _raise(_library.NH_ERR_NOMEM, err)
        self.plugins = [os.fspath(p) for p in plugins]
        for path in self.plugins:
            self.load(path)

    def load(self, path):
        """Loads the plugin at path; the names of the systems it adds."""
        err = ctypes.create_string_buffer(_library.ERROR_SIZE)
        before = self.lib.nh_registry_system_count(self.handle)
        rc = self.lib.nh_registry_load_plugin(self.handle, _encode(path, "plugin"), err)
        if rc:
            _raise(rc, err)
        after = self.lib.nh_registry_system_count(self.handle)
        return [self.lib.nh_registry_system_at(self.handle, i)[0].decode() for i in range(before, after)]

    def close(self):
        self.lib.nh_registry_free(self.handle)


def _system_from_plugin(registry, system):
    """A path to a plugin (a symbolic system the generator built, or any .so) names the one system it adds."""
    text = os.fspath(system) if isinstance(system, os.PathLike) else system
    if not (isinstance(text, str) and text.endswith(".so") and os.sep in text):
        return system
    added = registry.load(text)
    registry.plugins.append(text)
    if len(added) != 1:
        raise NhensError(f"plugin '{text}' adds {len(added)} systems ({', '.join(added) or 'none'}); name one of "
                         "them as the system and give the plugin in plugins=")
    return added[0]


class _Progress:
    """Progress on stderr: on a terminal one line rewritten in place, else a line every 5 s and at the end; or a
    callable(done, total) called from the calling thread."""

    def __init__(self, setting):
        self.tty = sys.stderr.isatty()
        self.callback = setting if callable(setting) else None
        self.show = bool(self.callback) or (self.tty if setting is None else bool(setting))
        self.start = self.last_line = time.monotonic()
        self.last = None

    def report(self, done, total, final=False):
        if not self.show or (done, total) == self.last:
            return
        self.last = (done, total)
        if self.callback:
            self.callback(done, total)
            return
        now = time.monotonic()
        if not self.tty and not final and now - self.last_line < _LOG_PROGRESS_SECONDS:
            return
        self.last_line = now
        elapsed = now - self.start
        left = elapsed * (total - done) / done if done else 0.0
        end = "\n" if final or not self.tty else "   "
        sys.stderr.write(f"{chr(13) if self.tty else ''}nhens: trajectories {done}/{total}, {elapsed:.1f} s elapsed, "
                         f"about {left:.0f} s left{end}")
        sys.stderr.flush()


def _progress_of(lib, job):
    done, total = ctypes.c_long(), ctypes.c_long()
    lib.nh_job_progress(job, ctypes.byref(done), ctypes.byref(total))
    return done.value, total.value


def _execute(lib, job, progress):
    """nh_job_run on a worker thread while this thread reports progress and takes Ctrl-C: a KeyboardInterrupt
    raises the job's interrupt flag and waits for the merged prefix (the engine polls the flag every
    NH_INTERRUPT_POLL_STEPS steps). Returns whether the run was interrupted."""
    err = ctypes.create_string_buffer(_library.ERROR_SIZE)
    outcome = {}
    finished = threading.Event()  # not Thread.is_alive: a join interrupted by Ctrl-C may leave it False early

    def work():
        try:
            outcome["rc"] = lib.nh_job_run(job, err)
        finally:
            finished.set()

    threading.Thread(target=work, name="nhens-run", daemon=True).start()
    interrupted = False
    try:
        while not finished.wait(_POLL_SECONDS):
            progress.report(*_progress_of(lib, job))
    except BaseException as stop:  # Ctrl-C, or a progress callback that raised: the job stops before it is freed
        lib.nh_job_interrupt(job)
        while True:
            try:
                if finished.wait(_POLL_SECONDS):
                    break
            except KeyboardInterrupt:  # another Ctrl-C: the run is already stopping
                pass
        if not isinstance(stop, KeyboardInterrupt):
            raise
        interrupted = True
    if outcome.get("rc", _library.NH_ERR_NOMEM):
        _raise(outcome.get("rc", _library.NH_ERR_NOMEM), err)
    progress.report(*_progress_of(lib, job), final=True)
    return interrupted


def _table(lib, result, table):
    """{column name: 1-D float array} of one of the run's tables, in the CSV file's column order."""
    rows = lib.nh_run_table_rows(result, table)
    name = ctypes.create_string_buffer(128)
    columns = {}
    for j in range(lib.nh_run_table_columns(result, table)):
        values = np.empty(rows, dtype=np.float64)
        lib.nh_run_table_column_name(result, table, j, name, len(name))
        lib.nh_run_table_column_values(result, table, j, values.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        columns[name.value.decode()] = values
    return columns


def _command(plugins, args, out):
    """The command line that reruns this study with the nhens program (recorded in summary.json)."""
    words = ["nhens"] + [w for p in plugins for w in ("--plugin", p)] + ["run"] + args
    return shlex.join(words + (["--out", os.fspath(out)] if out is not None else []))


def run(system, method, *, h, T, energy=None, preset=None, ensemble=None, seed=None, threads=None, every=None,
        paths=None, params=None, observers=None, solver=None, fit_start=None, section=None, perturb=None,
        burn_in=None, reduce=None, plugins=(), out=None, progress=None, library=None):
    """One ensemble study, as `nhens run` computes it, in this process; returns a Run whose tables are numpy
    arrays (timeseries and quantiles: {column: 1-D array}; paths: {observer: trajectories x times}; summary: the
    dict of summary.json; trajectories: with reduce=, the per-trajectory table {column: 1-D array, one entry per
    trajectory}: trajectory, failed, failure_time, failure_status and a column per reduction, else None).

    Every option is `nhens run`'s, with its defaults when None (ensemble: the shell preset's, 1 for a state,
    else 100; seed 1; threads: the cores; every: about 1000 output rows). system: a name, or the path of a
    plugin that adds one system (a generated symbolic system); plugins: paths of plugins whose systems and
    methods the names may use; params: {"n": 2}; observers: names or "all,error"; method: "dla:alpha=0.4";
    reduce: terms or a list of them, as --reduce takes them: "final", "max:dH", "min:|p|", "first:dH>1e-3".
    Bad input raises NhensError with the program's message. Ctrl-C stops the run and returns the finished
    trajectories' statistics (run.complete is False). progress: None (a line on stderr when it is a
    terminal), True, False, or a callable(done, total). Nothing is written unless out= names a folder, which
    then receives the program's files (timeseries.csv, summary.json, quantiles.csv, paths.csv, trajectories.csv)."""
    lib = library if library is not None else default_library()
    registry = _Registry(lib, plugins)
    job = None
    try:
        system = _system_from_plugin(registry, system)
        options = {"h": h, "T": T, "energy": energy, "preset": preset, "ensemble": ensemble, "seed": seed,
                   "threads": threads, "every": every, "paths": paths, "solver": solver, "fit-start": fit_start,
                   "section": section, "perturb": perturb, "burn-in": burn_in}
        args = _arguments(system, method, options, params, observers, reduce)
        argv = (ctypes.c_char_p * (len(args) + 1))(b"run", *(_encode(a, "option") for a in args))
        err = ctypes.create_string_buffer(_library.ERROR_SIZE)
        job = lib.nh_job_create(registry.handle, len(args) + 1, argv, err)
        if not job:
            _raise(_library.NH_ERR_INPUT if err.value else _library.NH_ERR_NOMEM, err)
        interrupted = _execute(lib, job, _Progress(progress))
        command = _command(registry.plugins, args, out)
        if out is not None:
            rc = lib.nh_job_write(job, _encode(os.fspath(out), "out"), command.encode(), err)
            if rc:
                _raise(rc, err)
        result = lib.nh_job_result(job)
        text = lib.nh_job_summary(job, command.encode())
        try:
            summary = json.loads(ctypes.string_at(text).decode())
        finally:
            lib.nh_job_text_free(text)
        run_result = Run(summary, _table(lib, result, NH_RUN_TABLE_TIMESERIES),
                         _table(lib, result, NH_RUN_TABLE_QUANTILES), _table(lib, result, NH_RUN_TABLE_PATHS),
                         folder=os.fspath(out) if out is not None else None,
                         trajectories=_table(lib, result, NH_RUN_TABLE_TRAJECTORIES) if reduce else None)
        run_result.interrupted = interrupted
        return run_result
    finally:
        if job:
            lib.nh_job_free(job)
        registry.close()


_default = {}


def default_library():
    """The libnhens found by nhens.find_library(), loaded once."""
    if "lib" not in _default:
        _default["lib"] = _library.load()
    return _default["lib"]
