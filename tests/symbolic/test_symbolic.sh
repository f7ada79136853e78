#!/usr/bin/env bash
# nhens-symbolic end to end: the differential-drive robot and the descriptions of three built-ins
# (examples/symbolic/) are generated, built without a warning and pass `nhens check`; the built-ins'
# generated plugins agree with the hand-written cvt, knife and sleigh (M(q)) on every callback
# (compare_builtin, whose tolerance says why); on the robot DLA^{0,1} and Gonzalez converge at order 2 and Gonzalez keeps H to
# round-off over an ensemble; every bad description of bad_descriptions.tsv exits 2 naming its field
# and writes nothing; a failing compiler exits 1 and leaves no file.
# The robot's own observers (distance, wheel_speed) are its description's formulas as the program records
# and reduces them, the summary's command reruns to the same files, and Python (given LIBRARY) gets the
# program's values bit for bit.
# Usage: test_symbolic.sh NHENS_SYMBOLIC NHENS COMPARE_BUILTIN SOURCE_DIR PYTHON [LIBRARY]
set -u
gen="$1"; nhens="$2"; compare="$3"; src="$4"; python="$5"; library="${6:-}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/nhens-symbolic-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
passed=0; failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAILED: $*"; failed=$((failed + 1)); }

out="$scratch/plugins"
for d in diff_drive cvt knife sleigh; do
  if "$gen" "$src/examples/symbolic/$d.py" --out "$out" >"$scratch/$d.log" 2>&1 &&
     grep -q "nhens check passed" "$scratch/$d.log"; then ok; else bad "$d: generation or check"; cat "$scratch/$d.log"; fi
done

# generated vs built-in, at the defaults and at other parameter values
while read -r so name builtin params; do
  # shellcheck disable=SC2086  # the parameters are separate words
  if "$compare" "$out/$so" "$name" "$builtin" $params; then ok; else bad "$name differs from $builtin ($params)"; fi
done <<'CASES'
cvt-symbolic.so cvt-symbolic cvt
cvt-symbolic.so cvt-symbolic cvt eps=0.37 spread=2.5
knife-symbolic.so knife-symbolic knife
knife-symbolic.so knife-symbolic knife eps=-0.3
sleigh-symbolic.so sleigh-symbolic sleigh
sleigh-symbolic.so sleigh-symbolic sleigh J=2 a=0.3 m=1.7
CASES

# the robot: order 2 between h = 0.05 and 0.025 (the error constant moves the third digit at most:
# the observed orders are 2.000 and 2.000), and Gonzalez's H over 16 trajectories of 200 steps stays
# within 1e-13 of H(0) = 1 (round-off: each step's solve ends at ~1e-16, 200 steps of a random walk)
P="$out/diff-drive.so"
for method in dla01 gonzalez; do
  order=$("$nhens" --plugin "$P" order --system diff-drive --preset forward --method $method --T 2 \
          --h 0.1,0.05,0.025 | awk '$1 == "0.025" { print $4 }')
  if awk -v p="$order" 'BEGIN { exit !(p > 1.98 && p < 2.02) }'; then ok; else bad "$method order on diff-drive is '$order', not 2"; fi
done
"$nhens" --plugin "$P" run --system diff-drive --preset shell --ensemble 16 --method gonzalez --h 0.1 --T 20 \
  --out "$scratch/run" >"$scratch/run.log" 2>&1
dh=$(sed -n 's/.*max |dH| = \([^,]*\),.*/\1/p' "$scratch/run.log")
if awk -v d="$dh" 'BEGIN { exit !(d != "" && d + 0 < 1e-13) }'; then ok; else bad "gonzalez max |dH| on diff-drive is '$dh'"; cat "$scratch/run.log"; fi

# the robot's observers: distance = sqrt(x^2 + y^2) and wheel_speed = (phi_L', phi_R') at T (paths.csv's
# last row) are those of the final state (trajectories.csv) bit for bit, and each trajectory's final
# distance lies in [min:distance, max:distance]
obs_args=(run --system diff-drive --preset shell --ensemble 24 --method dla01 --h 0.05 --T 5 --paths 3 --quiet
          --observe dH,distance,wheel_speed --reduce "final,max:distance,min:distance,first:distance>1.2")
"$nhens" --plugin "$P" "${obs_args[@]}" --out "$scratch/obs" >"$scratch/obs.log" 2>&1 || cat "$scratch/obs.log"
if "$python" - "$scratch/obs" <<'PY'; then ok; else bad "the robot's observers differ from their formulas"; fi
import csv, math, sys
folder = sys.argv[1]
rows = list(csv.DictReader(open(folder + "/trajectories.csv")))
last = list(csv.DictReader(open(folder + "/paths.csv")))[-1]
wrong = 0
for r in rows:
    i = int(r["trajectory"])
    x, y = float(r["q_1"]), float(r["q_2"])
    d = math.sqrt(x * x + y * y)
    wrong += not float(r["min:distance"]) <= d <= float(r["max:distance"])
    if i < 3:
        wrong += float(last[f"distance_{i}"]) != d
        wrong += float(last[f"wheel_speed_1_{i}"]) != float(r["v_4"])
        wrong += float(last[f"wheel_speed_2_{i}"]) != float(r["v_5"])
sys.exit(1 if wrong or len(rows) != 24 else 0)
PY
# rerun from summary.json: the recorded command (with --plugin) writes the same CSV files again
mkdir "$scratch/first" && cp "$scratch/obs"/*.csv "$scratch/first/"
command=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["command"])' "$scratch/obs/summary.json")
(cd "$scratch" && eval "$command") >"$scratch/rerun.log" 2>&1
same=1
for f in "$scratch/first"/*.csv; do cmp -s "$f" "$scratch/obs/$(basename "$f")" || same=0; done
if [ "$same" = 1 ] && [[ "$command" == *"--plugin $P "* ]]; then ok; else bad "the rerun of '$command' differs"; cat "$scratch/rerun.log"; fi
# the same ensemble from Python: the observer's statistics, paths and reductions are the program's values
if [ -n "$library" ]; then
  if PYTHONPATH="$src/python" NHENS_LIBRARY="$library" "$python" - "$scratch/first" "$P" <<'PY'; then ok; else bad "Python's robot run differs from the program's"; fi
import csv, sys
import numpy as np
import nhens
folder, plugin = sys.argv[1:3]
run = nhens.run(plugin, "dla01", preset="shell", ensemble=24, h=0.05, T=5, paths=3,
                observers=["dH", "distance", "wheel_speed"],
                reduce=["final", "max:distance", "min:distance", "first:distance>1.2"])
def column(name, file):
    return np.array([float(r[name]) for r in csv.DictReader(open(f"{folder}/{file}"))])
same = [np.array_equal(run.timeseries[c], column(c, "timeseries.csv"), equal_nan=True)
        for c in ("distance_mean", "distance_var", "wheel_speed_2_absmax")]
same.append(np.array_equal(run.paths["distance"][1], column("distance_1", "paths.csv")))
same += [np.array_equal(run.trajectories[c], column(c, "trajectories.csv"), equal_nan=True)
         for c in ("max:distance", "min:distance", "first:distance>1.2", "v_4")]
sys.exit(0 if all(same) else 1)
PY
fi

# bad descriptions: exit 2, the message names the field, nothing written (in one interpreter)
mkdir "$scratch/bad"
if "$python" "$src/tests/symbolic/bad_descriptions.py" "$src/symbolic" "$src" "$scratch/bad"; then ok; else bad "bad descriptions"; fi
# and once through the program
sed 's/^potential = .*$/potential = None/' "$src/tests/symbolic/base.py" >"$scratch/no-potential.py"
"$gen" "$scratch/no-potential.py" --out "$scratch/no-potential" >"$scratch/no-potential.log" 2>&1
status=$?
if [ "$status" -eq 2 ] && grep -q "potential: missing" "$scratch/no-potential.log" && [ ! -e "$scratch/no-potential" ]; then ok
else bad "no potential through the program: exit $status"; cat "$scratch/no-potential.log"; fi

# bad options exit 2; a compiler that fails exits 1 and leaves neither file nor temporary
"$gen" "$src/tests/symbolic/base.py" >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "a missing --out is not exit 2"
"$gen" "$scratch/absent.py" --out "$scratch/absent" >"$scratch/absent.log" 2>&1
{ [ $? -eq 2 ] && grep -q "cannot read the description" "$scratch/absent.log"; } && ok || bad "an absent description"
"$gen" "$src/tests/symbolic/base.py" --out "$scratch/cc-fails" --cc false >/dev/null 2>&1
status=$?
if [ "$status" -eq 1 ] && [ -z "$(ls -A "$scratch/cc-fails")" ]; then ok; else bad "--cc false: exit $status, files: $(ls -A "$scratch/cc-fails")"; fi

echo "nhens-symbolic: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
