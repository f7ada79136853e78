"""Tests of python/nhens.py (run by CTest): it loads a run written by the nhens program into numpy arrays
that match the CSV text, plots a column into a PNG, runs the same ensemble in-process through ctypes with
the same bytes as the program, refuses bad input with libnhens' message, and summary.json and a partial
result validate against docs/schema/ (python3-jsonschema)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import nhens  # noqa: E402

NHENS = os.environ.get("NHENS_PROGRAM", os.path.join(ROOT, "build", "nhens"))
ARGS = ["--system", "quartic", "--param", "n=2", "--method", "dla01", "--h", "0.1", "--T", "20", "--energy",
        "3.2575", "--ensemble", "40", "--seed", "9", "--threads", "2", "--paths", "2", "--quiet"]


class Outputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = os.path.join(cls.tmp.name, "run")
        subprocess.run([NHENS, "run", *ARGS, "--out", cls.dir], check=True, stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_load_gives_the_csv_values(self):
        run = nhens.load_run(self.dir)
        self.assertEqual(run.summary["ensemble"], 40)
        self.assertEqual(len(run.t), 201)  # T/h = 200 steps, every step an output
        # the last row of timeseries.csv, parsed independently of numpy
        with open(os.path.join(self.dir, "timeseries.csv")) as f:
            lines = f.read().splitlines()
        header, last = lines[0].split(","), [float(x) for x in lines[-1].split(",")]
        for name, value in zip(header, last):
            self.assertTrue(np.isnan(value) and np.isnan(run.column(name)[-1]) or run.column(name)[-1] == value, name)
        self.assertEqual(run.column("dH_var")[-1], float(lines[-1].split(",")[header.index("dH_var")]))
        self.assertIn("dH_q50", run.quantiles)
        self.assertIn("dH_1", run.paths)
        with self.assertRaises(KeyError):
            run.column("no_such_column")

    def test_plot_a_column(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        run = nhens.load_run(self.dir)
        fig, ax = plt.subplots()
        run.plot("dH_var", ax=ax)
        self.assertEqual(len(ax.lines), 1)
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), run.timeseries["dH_var"])
        png = os.path.join(self.tmp.name, "dH_var.png")
        fig.savefig(png)
        plt.close(fig)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_in_process_run_is_the_programs_run(self):
        lib = nhens.Library(os.environ.get("NHENS_LIBRARY"))
        out = os.path.join(self.tmp.name, "inprocess")
        run = lib.run("quartic", "dla01", h=0.1, T=20, energy=3.2575, ensemble=40, seed=9, threads=1, every=1,
                      params={"n": 2}, paths=2, out=out)
        for name in ("timeseries.csv", "quantiles.csv", "paths.csv"):
            with open(os.path.join(self.dir, name), "rb") as a, open(os.path.join(out, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)
        self.assertEqual(run.summary["variance_fit"]["C"], nhens.load_run(self.dir).summary["variance_fit"]["C"])

    def test_bad_input_raises_the_librarys_message(self):
        lib = nhens.Library(os.environ.get("NHENS_LIBRARY"))
        with self.assertRaisesRegex(nhens.NhensError, "step size h=-0.1"):
            lib.run("quartic", "dla01", h=-0.1, T=1, energy=3.0, ensemble=2, out=os.path.join(self.tmp.name, "bad"))
        with self.assertRaisesRegex(nhens.NhensError, "unknown system 'nosuch'"):
            lib.run("nosuch", "dla01", h=0.1, T=1, energy=3.0, out=os.path.join(self.tmp.name, "bad"))

    def test_summary_and_partial_follow_their_schemas(self):
        import jsonschema
        schema_dir = os.path.join(ROOT, "docs", "schema")
        with open(os.path.join(schema_dir, "summary.schema.json")) as f:
            summary_schema = json.load(f)
        with open(os.path.join(schema_dir, "partial.schema.json")) as f:
            partial_schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(summary_schema)
        jsonschema.Draft202012Validator.check_schema(partial_schema)
        jsonschema.validate(nhens.load_run(self.dir).summary, summary_schema,
                            cls=jsonschema.Draft202012Validator)
        parts = os.path.join(self.tmp.name, "parts")
        subprocess.run([NHENS, "run", *ARGS, "--blocks", "2/2", "--out", parts], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(parts, "part-2-of-2.json")) as f:
            part = json.load(f)
        jsonschema.validate(part, partial_schema, cls=jsonschema.Draft202012Validator)
        # the schemas can fail: a damaged field is caught
        part["chunk_stats"][0]["accumulators"] = "xyz"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(part, partial_schema, cls=jsonschema.Draft202012Validator)
        bad = dict(nhens.load_run(self.dir).summary, solver="fortran")
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(bad, summary_schema, cls=jsonschema.Draft202012Validator)


if __name__ == "__main__":
    unittest.main(verbosity=2)
