"""nhens.load_run (run by CTest through pytest): a folder written by the nhens program loads into numpy arrays
that match the CSV text, its sample paths as one 2-D array per observer, a column plots into a PNG, and
summary.json and a partial result validate against docs/schema/ (python3-jsonschema)."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import nhens
from conftest import ROOT, program

NHENS = program()
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
        self.assertEqual(run.paths["dH"].shape, (2, 201))  # 2 sample paths x 201 output times
        np.testing.assert_array_equal(run.paths["dH"][1], run.column("dH_1"))
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
