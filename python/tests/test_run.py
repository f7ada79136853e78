"""nhens.run (run by CTest through pytest): the arrays are the nhens program's CSV values bit for bit for the same
options and seed (any thread count), out= writes the program's bytes, bad input raises NhensError with the
program's own message, Ctrl-C returns the finished part, progress reaches a callback, plugins and a plugin given
as the system run as with --plugin, and a run writes no file at all unless asked."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import nhens
from conftest import PYTHON_DIR, plugin, run_program

CONTACT = plugin("NHENS_SYSTEM_PLUGIN_PATH", "examples/contact_eps.so")
WRONG_ABI = plugin("NHENS_WRONG_ABI_PLUGIN_PATH", "tests/wrong_abi.so")
MOMENTUM = plugin("NHENS_OBSERVER_PLUGIN_PATH", "examples/momentum.so")
QUARTIC = dict(params={"n": 2}, h=0.1, T=20, energy=3.2575, ensemble=40, seed=9, every=2, paths=3)
QUARTIC_ARGS = ["--system", "quartic", "--param", "n=2", "--method", "dla01", "--h", "0.1", "--T", "20", "--energy",
                "3.2575", "--ensemble", "40", "--seed", "9", "--every", "2", "--paths", "3", "--quiet"]


def csv_columns(path):
    """The CSV file's columns parsed by float() (exact for %.17g), independently of the package."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [[float(x) for x in line.split(",")] for line in f.read().splitlines()]
    return {name: np.array([r[j] for r in rows]) for j, name in enumerate(header)}


def assert_bitwise(expected, actual, what):
    assert list(expected) == list(actual), what
    for name in expected:
        a, b = expected[name], actual[name]
        assert a.shape == b.shape, f"{what} {name}"
        same = (a.view(np.uint64) == b.view(np.uint64)) | (np.isnan(a) & np.isnan(b))
        assert same.all(), f"{what} {name}: first difference at row {np.argmin(same)}: {a[~same][:1]} vs {b[~same][:1]}"


@pytest.fixture(scope="module")
def program_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("program") / "run"
    subprocess.run([*_program(), "run", *QUARTIC_ARGS, "--threads", "2", "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def _program():
    from conftest import program
    return [program()]


@pytest.mark.parametrize("threads", [1, 2])
def test_arrays_are_the_programs_csv_values_bit_for_bit(program_run, threads):
    run = nhens.run("quartic", "dla01", threads=threads, progress=False, **QUARTIC)
    assert run.complete and run.summary["trajectories_done"] == 40
    assert_bitwise(csv_columns(program_run / "timeseries.csv"), run.timeseries, "timeseries")
    assert_bitwise(csv_columns(program_run / "quantiles.csv"), run.quantiles, "quantiles")
    assert_bitwise(csv_columns(program_run / "paths.csv"), run.path_columns, "paths")
    assert len(run.t) == 101  # 200 steps, every 2nd an output row, and t = 0
    assert run.paths["dH"].shape == (3, 101)  # 3 sample paths x the output times
    np.testing.assert_array_equal(run.paths["dH"][2], run.path_columns["dH_2"])
    assert run.trajectories is None  # the slot of the per-trajectory table
    program = nhens.load_run(program_run)
    assert run.summary["variance_fit"] == program.summary["variance_fit"]
    assert run.summary["extremes"] == program.summary["extremes"]


def test_out_writes_the_programs_files(program_run, tmp_path):
    out = tmp_path / "from-python"
    run = nhens.run("quartic", "dla01", threads=1, progress=False, out=out, **QUARTIC)
    for name in ("timeseries.csv", "quantiles.csv", "paths.csv"):
        assert (out / name).read_bytes() == (program_run / name).read_bytes(), name
    assert sorted(os.listdir(out)) == sorted(os.listdir(program_run))
    loaded = nhens.load_run(out)
    assert loaded.summary["command"] == run.summary["command"]
    # the recorded command reruns the study with the program, to the same bytes
    rerun = tmp_path / "rerun"
    words = loaded.summary["command"].split()
    words[words.index("--out") + 1] = str(rerun)
    subprocess.run([*_program(), *words[1:]], check=True, stdout=subprocess.DEVNULL)
    assert (rerun / "timeseries.csv").read_bytes() == (out / "timeseries.csv").read_bytes()


GOOD = dict(h=0.1, T=1, energy=3.0, ensemble=8)
GOOD_ARGS = {"--h": "0.1", "--T": "1", "--energy": "3.0", "--ensemble": "8"}
BAD = [  # (keyword arguments, the same input to the program, a part of the message)
    (dict(ensemble=2.7), ["--ensemble", "2.7"], "--ensemble '2.7' must be a decimal integer in [1, 100000000]"),
    (dict(ensemble=True), ["--ensemble", "True"], "--ensemble 'True'"),
    (dict(ensemble=-3), ["--ensemble", "-3"], "--ensemble '-3'"),
    (dict(ensemble=10**8 + 1), ["--ensemble", "100000001"], "in [1, 100000000]"),
    (dict(seed=-1), ["--seed", "-1"], "--seed '-1' must be a decimal integer in [0, 18446744073709551615]"),
    (dict(seed=2**64 + 8), ["--seed", str(2**64 + 8)], "--seed '18446744073709551624'"),
    (dict(seed=np.int64(-5)), ["--seed", "-5"], "--seed '-5'"),
    (dict(threads=0), ["--threads", "0"], "--threads '0' must be a decimal integer in [1, 1024]"),
    (dict(paths=65), ["--paths", "65"], "--paths '65'"),
    (dict(paths=9), ["--paths", "9"], "sample paths=9 must be in [0, 64] and at most the ensemble size 8"),
    (dict(every=0), ["--every", "0"], "--every '0'"),
    (dict(h=-0.1), ["--h", "-0.1"], "--h '-0.1' must be a finite number"),
    (dict(h=float("nan")), ["--h", "nan"], "--h 'nan'"),
    (dict(T=1.05), ["--T", "1.05"], "horizon T=1.05 is not a whole number of steps h=0.1"),
    (dict(energy=-5.0), ["--energy", "-5.0"], "energy"),
    (dict(solver="fortran"), ["--solver", "fortran"], "unknown solver 'fortran'; allowed: kinsol, newton"),
    (dict(observers=["nosuch"]), ["--observe", "nosuch"], "nosuch"),
    (dict(params={"n": 2.5}), ["--param", "n=2.5"], "n=2.5"),
    (dict(preset="nosuch"), ["--preset", "nosuch"], "give exactly one of --energy E"),
]


@pytest.mark.parametrize("options,program_args,message", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_input_raises_the_programs_message(options, program_args, message):
    words = dict(GOOD_ARGS, **dict(zip(program_args[::2], program_args[1::2])))
    done = run_program(["run", "--system", "quartic", "--method", "dla01", *(w for kv in words.items() for w in kv),
                        "--dry-run"])
    assert done.returncode == 2, done.stderr
    with pytest.raises(nhens.NhensError) as caught:
        kwargs = dict(GOOD, **options)  # with preset=, energy= is given too: the program's "exactly one" refusal
        nhens.run("quartic", "dla01", progress=False, **kwargs)
    text = str(caught.value)
    assert message in text
    # the program prints the message itself ("nhens run: " before the messages of the run's configuration)
    assert done.stderr.strip() in (text, f"nhens run: {text}")
    assert isinstance(caught.value, ValueError)


def test_unknown_names_and_plugins_raise_the_programs_message():
    for system, method, words in (("nosuch", "dla01", ["--system", "nosuch", "--method", "dla01"]),
                                  ("quartic", "nosuch", ["--system", "quartic", "--method", "nosuch"])):
        done = run_program(["run", *words, "--h", "0.1", "--T", "1", "--energy", "3", "--dry-run"])
        with pytest.raises(nhens.NhensError) as caught:
            nhens.run(system, method, h=0.1, T=1, energy=3)
        # the program adds a hint at its --plugin option (plugins= here)
        assert done.stderr.strip().startswith(f"nhens run: {caught.value}")
    done = run_program(["--plugin", WRONG_ABI, "list"])
    with pytest.raises(nhens.NhensError, match="rebuild the plugin against these headers") as caught:
        nhens.run("quartic", "dla01", h=0.1, T=1, energy=3, plugins=[WRONG_ABI])
    assert str(caught.value) in done.stderr
    with pytest.raises(nhens.NhensError, match="must be a path to a shared object"):
        nhens.run("quartic", "dla01", h=0.1, T=1, energy=3, plugins=["wrong_abi.so"])


def test_ctrl_c_returns_the_finished_part():
    """SIGINT from a timer thread 1 s into a run of several seconds (80000 trajectories x 2000 steps): run()
    returns the merged prefix, marked incomplete, within a few seconds."""
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        run = nhens.run("quartic", "dla01", h=0.1, T=200, energy=3.0, ensemble=80000, threads=2, progress=False)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert run.interrupted and not run.complete and run.summary["complete"] is False
    done = run.summary["trajectories_done"]
    assert 0 <= done < 80000 and done % 8 == 0  # whole blocks of 8 trajectories
    assert run.timeseries["n_live"][0] == done  # the statistics are over the finished trajectories only
    assert elapsed < 6.0, f"{elapsed:.1f} s: the run did not stop soon after Ctrl-C"


def test_progress_reaches_a_callback():
    seen = []
    nhens.run("quartic", "dla01", h=0.1, T=100, energy=3.0, ensemble=400, threads=2,
              progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (400, 400)
    assert all(total == 400 for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_plugin_run_is_the_programs(tmp_path):
    out = tmp_path / "contact"
    done = run_program(["--plugin", CONTACT, "run", "--system", "contact-eps", "--param", "eps=2", "--method", "gonzalez",
                        "--preset", "shell", "--ensemble", "24", "--h", "0.1", "--T", "10", "--paths", "1", "--quiet",
                        "--out", str(out)])
    assert done.returncode == 0, done.stderr
    run = nhens.run("contact-eps", "gonzalez", preset="shell", ensemble=24, h=0.1, T=10, paths=1, params={"eps": 2},
                    plugins=[CONTACT], progress=False)
    assert_bitwise(csv_columns(out / "timeseries.csv"), run.timeseries, "contact timeseries")
    assert run.summary["system"]["name"] == "contact-eps" and run.summary["system"]["params"]["eps"] == 2
    assert run.summary["command"].startswith(f"nhens --plugin {CONTACT} run ")
    # a plugin given as the system (what the symbolic generator builds) runs its one system
    as_system = nhens.run(CONTACT, "gonzalez", preset="shell", ensemble=24, h=0.1, T=10, paths=1,
                          params={"eps": 2}, progress=False)
    assert_bitwise(run.timeseries, as_system.timeseries, "plugin as the system")


def test_a_run_writes_no_file(tmp_path):
    """Under strace, a run and a refused run from an empty folder create, open for writing, rename or remove no
    file anywhere (only /dev/null), and the folder stays empty."""
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("strace is not installed")
    cwd, log = tmp_path / "cwd", tmp_path / "strace.log"
    cwd.mkdir()
    script = ("import nhens\n"
              "nhens.run('quartic', 'dla01', h=0.1, T=5, energy=3.0, ensemble=16, paths=2, progress=True)\n"
              "try:\n    nhens.run('quartic', 'dla01', h=0.1, T=5, energy=3.0, ensemble=2.7)\n"
              "except nhens.NhensError:\n    pass\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([strace, "-f", "-qq", "-o", str(log), "-e",
                           "trace=open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,link,symlink",
                           sys.executable, "-B", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0 and "ptrace" in done.stderr:
        pytest.skip(f"strace cannot trace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    writes = [line for line in log.read_text().splitlines()
              if any(w in line for w in ("O_WRONLY", "O_RDWR", "O_CREAT", "mkdir", "rename", "unlink", "link("))
              and '"/dev/null"' not in line and "= -1" not in line]
    assert writes == []
    assert os.listdir(cwd) == []
    assert "trajectories 16/16" in done.stderr  # progress=True: a line on stderr


def test_reductions_are_the_programs_trajectories_csv(tmp_path):
    """reduce= gives trajectories.csv's columns as arrays, one entry per trajectory, bit for bit the program's;
    a plugin observer (examples/momentum_observer.c) reduces like a built-in one; no reduce, no table."""
    reduce = "final,max:|p|,min:dH,first:|dH|>1e-4"
    out = tmp_path / "knife"
    done = run_program(["--plugin", MOMENTUM, "run", "--system", "knife", "--preset", "modin2020-fig4", "--perturb",
                        "0.05", "--ensemble", "19", "--method", "dla01", "--h", "0.05", "--T", "5", "--reduce", reduce,
                        "--quiet", "--out", str(out)])
    assert done.returncode == 0, done.stderr
    run = nhens.run("knife", "dla01", preset="modin2020-fig4", perturb=0.05, ensemble=19, h=0.05, T=5,
                    reduce=reduce.split(","), plugins=[MOMENTUM], progress=False)
    table = run.trajectories
    assert list(table)[:4] == ["trajectory", "failed", "failure_time", "failure_status"]
    assert {"q_3", "v_1", "max:|p_2|", "min:dH", "first:|dH|>1e-4"} <= set(table)
    assert_bitwise(csv_columns(out / "trajectories.csv"), table, "trajectories")
    assert np.array_equal(table["trajectory"], np.arange(19)) and not table["failed"].any()
    # the knife's mass is the unit: p = v, so |final v_i| is at most max |p_i| over the rows
    for i in (1, 2, 3):
        assert np.all(np.abs(table[f"v_{i}"]) <= table[f"max:|p_{i}|"])
    assert run.summary["reduce"] == reduce
    assert nhens.run("knife", "dla01", preset="modin2020-fig4", h=0.05, T=1, progress=False).trajectories is None
    with pytest.raises(nhens.NhensError, match="--reduce term 'max:nothing': 'nothing' is no observer"):
        nhens.run("knife", "dla01", preset="modin2020-fig4", h=0.05, T=1, reduce="max:nothing", progress=False)
