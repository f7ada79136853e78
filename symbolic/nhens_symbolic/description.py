"""A system description: what a user's Python file says, read and validated.

A description is a Python file run with SymPy's names and the helpers below in scope (it is code, run
with the user's rights, like a build script). It sets module-level names:

    name, summary, reference          text
    coordinates(...)                  the configuration coordinates q and their kinds
    parameter(...)                    named parameters with default, range and help
    mass                              list of n diagonal entries, or an n x n Matrix (may read q)
    potential                         V(q)
    constraints                       m rows of n entries: A(q) v = 0
    basis                             optional: n x (n - m) Matrix X(q) with A X = 0, "derive", or None
    presets                           list of state(...) and shell(...)
    sampler                           {coordinate: normal(mean, sd) | uniform(lo, hi) | fixed(value)}
    minimum_energy                    optional: the infimum of V over the sampler's support
    observers                         optional: list of observer(name, value, help) of q, velocity(x)
                                      and the parameters, recorded like the built-in observers

Everything is checked before anything is written; a bad field raises DescriptionError naming it.
"""
import math
import re

import sympy as sp

NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,48}$")
PARAM_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
COORD_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,30}$")
OBSERVER_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,23}$")   # nh_observer_name_ok (include/nhens/observer.h)
MAX_OBSERVER_DIM, MAX_OBSERVERS = 16, 16
KINDS = ("plain", "angle", "ignorable")
MAX_DIM, MAX_CON, MAX_PARAMS, MAX_VARIABLE_MASS_DIM = 32, 4, 8, 12
PRESET_CONSTRAINT_TOL = 1e-10   # what `nhens run --initial` accepts of |A(q) v|


class DescriptionError(Exception):
    """A bad description: the message names the field and what is allowed."""


class Coordinate:
    def __init__(self, name, kind, index):
        self.name, self.kind, self.index = name, kind, index
        self.symbol = sp.Symbol(name, real=True)
        self.velocity = sp.Symbol(name + "'", real=True)   # no parameter or coordinate name has a quote


class Parameter:
    def __init__(self, name, default, lo, hi, help_text, integer, index):
        self.name, self.default, self.lo, self.hi = name, default, lo, hi
        self.help, self.integer, self.index = help_text, integer, index
        assumptions = {"real": True}
        if lo > 0:
            assumptions["positive"] = True
        elif lo >= 0:
            assumptions["nonnegative"] = True
        if integer:
            assumptions["integer"] = True
        self.symbol = sp.Symbol(name, **assumptions)


class Distribution:
    def __init__(self, kind, a, b=None):
        self.kind, self.a, self.b = kind, a, b


class Preset:
    def __init__(self, name, description, q=None, v=None, energy=None, ensemble=None, params=None):
        self.name, self.description = name, description
        self.q, self.v, self.energy, self.ensemble = q, v, energy, ensemble
        self.params = params or {}

    @property
    def is_shell(self):
        return self.q is None


class Observer:
    def __init__(self, name, value, help_text):
        self.name, self.value, self.help = name, value, help_text
        self.exprs = []     # its components, checked by validate()


class Builder:
    """The helpers a description calls; they record coordinates and parameters in order."""

    def __init__(self):
        self.coords = []
        self.params = []

    def coordinates(self, names, kinds=None):
        """coordinates("x y theta", kinds={"theta": "angle"}) -> the symbols, in order"""
        if self.coords:
            raise DescriptionError("coordinates: declared twice")
        if not isinstance(names, str) or not names.split():
            raise DescriptionError("coordinates: give the names as one string, e.g. \"x y theta\"")
        kinds = kinds or {}
        if not isinstance(kinds, dict):
            raise DescriptionError("coordinates: kinds is a dict {name: 'plain' | 'angle' | 'ignorable'}")
        for i, nm in enumerate(names.split()):
            if not COORD_NAME_RE.match(nm):
                raise DescriptionError(f"coordinates: '{nm}' is not a name (a letter, then letters, digits, _)")
            if any(c.name == nm for c in self.coords):
                raise DescriptionError(f"coordinates: '{nm}' appears twice")
            self.coords.append(Coordinate(nm, kinds.get(nm, "plain"), i))
        for nm, kind in kinds.items():
            if not any(c.name == nm for c in self.coords):
                raise DescriptionError(f"coordinates: kinds names '{nm}', which is not a coordinate")
            if kind not in KINDS:
                raise DescriptionError(f"coordinates: kind of '{nm}' is '{kind}'; allowed: {', '.join(KINDS)}")
        syms = [c.symbol for c in self.coords]
        return syms[0] if len(syms) == 1 else tuple(syms)

    def velocity(self, coordinate):
        """velocity(x) -> the symbol of x' (for observers)"""
        c = next((c for c in self.coords if c.symbol == coordinate), None)
        if c is None:
            raise DescriptionError(f"velocity: '{coordinate}' is not a coordinate (declare it with coordinates())")
        return c.velocity

    def parameter(self, name, default, range=(-math.inf, math.inf), help=None, integer=False):
        field = f"parameter '{name}'"
        if not isinstance(name, str) or not PARAM_NAME_RE.match(name):
            raise DescriptionError(f"parameter: '{name}' is not a name (a letter, then letters, digits, _; "
                                   "at most 31 characters)")
        if any(p.name == name for p in self.params) or any(c.name == name for c in self.coords):
            raise DescriptionError(f"{field}: the name is already used")
        if not isinstance(help, str) or not help.strip():
            raise DescriptionError(f"{field}: give a help text (help=\"...\")")
        try:
            lo, hi = (float(range[0]), float(range[1]))
            default = float(default)
        except (TypeError, ValueError, IndexError):
            raise DescriptionError(f"{field}: default and range=(min, max) must be numbers") from None
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise DescriptionError(f"{field}: range ({lo}, {hi}) needs min <= max")
        if not math.isfinite(default) or not lo <= default <= hi:
            raise DescriptionError(f"{field}: default {default} is not a finite number in [{lo}, {hi}]")
        if integer and default != int(default):
            raise DescriptionError(f"{field}: default {default} of an integer parameter is not whole")
        if len(self.params) == MAX_PARAMS:
            raise DescriptionError(f"{field}: at most {MAX_PARAMS} parameters")
        p = Parameter(name, default, lo, hi, help.strip(), bool(integer), len(self.params))
        self.params.append(p)
        return p.symbol


def state(name, description, q, v, params=None):
    """A preset: one initial state (q, v), optionally with parameter overrides {name: value}."""
    return Preset(name, description, q=q, v=v, params=params)


def shell(name, description, energy, ensemble, params=None):
    """A preset: random states on the energy shell H = energy, `ensemble` of them by default."""
    return Preset(name, description, energy=energy, ensemble=ensemble, params=params)


def observer(name, value, help):
    """An observer: a quantity of q, the velocities and the parameters (a list for several components)."""
    return Observer(name, value, help)


def normal(mean, sd):
    return Distribution("normal", sp.sympify(mean), sp.sympify(sd))


def uniform(lo, hi):
    return Distribution("uniform", sp.sympify(lo), sp.sympify(hi))


def fixed(value):
    return Distribution("fixed", sp.sympify(value))


class System:
    """A validated description: every field a SymPy object of the declared coordinates and parameters."""

    def __init__(self, name, summary, reference, coords, params, mass, potential, constraints, basis,
                 presets, sampler, minimum_energy, observers):
        self.name, self.summary, self.reference = name, summary, reference
        self.observers = observers
        self.coords, self.params = coords, params
        self.mass, self.potential, self.constraints = mass, potential, constraints
        self.basis, self.presets, self.sampler = basis, presets, sampler
        self.minimum_energy = minimum_energy

    @property
    def n(self):
        return len(self.coords)

    @property
    def m(self):
        return self.constraints.rows

    @property
    def q(self):
        return [c.symbol for c in self.coords]

    def defaults(self):
        return {p.symbol: p.default for p in self.params}


def load(path):
    """Run the description at `path` and return a validated System (DescriptionError otherwise)."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        raise DescriptionError(f"cannot read the description: {e.strerror}") from None
    builder = Builder()
    scope = {}
    exec("from sympy import *", scope)  # noqa: S102 - SymPy's names, as a description expects them
    scope.update(coordinates=builder.coordinates, parameter=builder.parameter, state=state, shell=shell,
                 normal=normal, uniform=uniform, fixed=fixed, observer=observer,
                 velocity=builder.velocity, __file__=path, __name__="description")
    try:
        code = compile(source, path, "exec")
        exec(code, scope)  # noqa: S102 - the description is the user's own Python code
    except DescriptionError:
        raise
    except SyntaxError as e:
        raise DescriptionError(f"line {e.lineno}: syntax error: {e.msg}") from None
    except Exception as e:  # the description's own error, with its line
        tb = e.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == path:
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"line {line}: " if line else ""
        hint = " (declare symbols with coordinates() or parameter())" if isinstance(e, NameError) else ""
        raise DescriptionError(f"{where}{type(e).__name__}: {e}{hint}") from None
    return validate(scope, builder)


def _text(scope, field, required=True):
    value = scope.get(field)
    if value is None:
        if required:
            raise DescriptionError(f"{field}: missing (set {field} = \"...\")")
        return ""
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise DescriptionError(f"{field}: must be one line of text")
    return value.strip()


def _expr(value, field, allowed):
    """value as a SymPy expression whose symbols are all in `allowed` (coordinates and parameters)."""
    try:
        e = sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError):
        raise DescriptionError(f"{field}: '{value}' is not an expression") from None
    if not isinstance(e, sp.Expr):
        raise DescriptionError(f"{field}: '{value}' is not a scalar expression")
    unknown = sorted(str(s) for s in e.free_symbols if s not in allowed)
    if unknown:
        raise DescriptionError(f"{field}: unknown symbol '{unknown[0]}' (declare it with coordinates() "
                               "or parameter())")
    if e.has(sp.I) or e.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise DescriptionError(f"{field}: '{e}' is not a finite real expression")
    bad = [f for f in e.atoms(sp.Function) if isinstance(f, sp.core.function.AppliedUndef)]
    if bad:
        raise DescriptionError(f"{field}: '{bad[0]}' is an undefined function")
    return e


def _matrix(value, field, rows, cols, allowed):
    try:
        mat = sp.Matrix(value)
    except (TypeError, ValueError, sp.SympifyError):
        raise DescriptionError(f"{field}: not a matrix (give a list of rows or a Matrix)") from None
    if rows is not None and mat.rows != rows or cols is not None and mat.cols != cols:
        want = f"{rows if rows is not None else 'm'} x {cols}"
        raise DescriptionError(f"{field}: has shape {mat.rows} x {mat.cols}; it must be {want}")
    return mat.applyfunc(lambda e: _expr(e, field, allowed))


def _numbers(values, field, count):
    try:
        out = [float(x) for x in values]
    except (TypeError, ValueError):
        raise DescriptionError(f"{field}: must be {count} numbers") from None
    if len(out) != count or not all(math.isfinite(x) for x in out):
        raise DescriptionError(f"{field}: must be {count} finite numbers (got {len(out)})")
    return out


def validate(scope, builder):
    name = _text(scope, "name")
    if not NAME_RE.match(name):
        raise DescriptionError(f"name: '{name}' must be 1-48 characters [A-Za-z0-9._-]")
    summary, reference = _text(scope, "summary"), _text(scope, "reference")
    coords, params = builder.coords, builder.params
    if not coords:
        raise DescriptionError("coordinates: missing (x, y = coordinates(\"x y\"))")
    n = len(coords)
    if n > MAX_DIM:
        raise DescriptionError(f"coordinates: {n} of them; at most {MAX_DIM}")
    allowed_q = {c.symbol for c in coords}
    allowed_p = {p.symbol for p in params}
    allowed = allowed_q | allowed_p

    if "potential" not in scope or scope["potential"] is None:
        raise DescriptionError("potential: missing (set potential = V(q), e.g. potential = 0)")
    potential = _expr(scope["potential"], "potential", allowed)

    if "constraints" not in scope or scope["constraints"] is None:
        raise DescriptionError("constraints: missing (a list of m rows of n entries)")
    constraints = _matrix(scope["constraints"], "constraints", None, n, allowed)
    m = constraints.rows
    if not 1 <= m <= MAX_CON or m >= n:
        raise DescriptionError(f"constraints: {m} rows; nhens needs 1 <= m <= {MAX_CON} and m < n = {n}")

    mass = _mass(scope.get("mass"), n, allowed, allowed_q)
    basis = _basis(scope.get("basis", "derive"), n, m, allowed)
    presets = _presets(scope.get("presets", []), n, params)
    sampler = _sampler(scope.get("sampler"), coords, allowed_p)
    minimum = scope.get("minimum_energy")
    if minimum is not None:
        minimum = _expr(minimum, "minimum_energy", allowed_p)
    observers = _observers(scope.get("observers", []), allowed | {c.velocity for c in coords})
    return System(name, summary, reference, coords, params, mass, potential, constraints, basis, presets,
                  sampler, minimum, observers)


def _mass(value, n, allowed, allowed_q):
    if value is None:
        return sp.eye(n)
    if isinstance(value, (list, tuple)) and all(not isinstance(x, (list, tuple)) for x in value):
        if len(value) != n:
            raise DescriptionError(f"mass: a diagonal needs n = {n} entries (got {len(value)})")
        mat = sp.diag(*[_expr(x, "mass", allowed) for x in value])
    else:
        mat = _matrix(value, "mass", n, n, allowed)
    diff = (mat - mat.T).applyfunc(sp.simplify)
    if diff != sp.zeros(n, n):
        i, j = next((i, j) for i in range(n) for j in range(n) if diff[i, j] != 0)
        raise DescriptionError(f"mass: not symmetric (M[{i}][{j}] = {mat[i, j]} but M[{j}][{i}] = {mat[j, i]})")
    variable = any(e.free_symbols & allowed_q for e in mat)
    if variable and n > MAX_VARIABLE_MASS_DIM:
        raise DescriptionError(f"mass: a configuration-dependent M needs n <= {MAX_VARIABLE_MASS_DIM}")
    return mat


def _basis(value, n, m, allowed):
    if value is None or (isinstance(value, str) and value == "derive"):
        return value
    if isinstance(value, str):
        raise DescriptionError(f"basis: '{value}' is not allowed; give a Matrix, \"derive\" or None")
    return _matrix(value, "basis", n, n - m, allowed)


def _presets(values, n, params):
    if not isinstance(values, (list, tuple)):
        raise DescriptionError("presets: must be a list of state(...) and shell(...)")
    seen = set()
    out = []
    for p in values:
        if not isinstance(p, Preset):
            raise DescriptionError("presets: every entry is a state(...) or a shell(...)")
        field = f"preset '{p.name}'"
        if not isinstance(p.name, str) or not NAME_RE.match(p.name):
            raise DescriptionError(f"presets: '{p.name}' is not a name (1-48 characters [A-Za-z0-9._-])")
        if p.name in seen:
            raise DescriptionError(f"{field}: the name appears twice")
        seen.add(p.name)
        if not isinstance(p.description, str) or not p.description.strip():
            raise DescriptionError(f"{field}: give a description")
        if not isinstance(p.params, dict):
            raise DescriptionError(f"{field}: params is a dict {{name: value}}")
        for k, v in p.params.items():
            par = next((x for x in params if x.name == k), None)
            if par is None:
                raise DescriptionError(f"{field}: params names '{k}', which is not a parameter")
            if not isinstance(v, (int, float)) or not par.lo <= v <= par.hi:
                raise DescriptionError(f"{field}: {k} = {v} is not a number in [{par.lo}, {par.hi}]")
        if p.is_shell:
            if not isinstance(p.energy, (int, float)) or not math.isfinite(p.energy):
                raise DescriptionError(f"{field}: energy must be a finite number")
            if not isinstance(p.ensemble, int) or isinstance(p.ensemble, bool) or not 1 <= p.ensemble <= 10**8:
                raise DescriptionError(f"{field}: ensemble must be a whole number in [1, 100000000]")
        else:
            p.q = _numbers(p.q, f"{field}: q", n)
            p.v = _numbers(p.v, f"{field}: v", n)
        out.append(p)
    return out


def _sampler(value, coords, allowed_p):
    if not isinstance(value, dict):
        raise DescriptionError("sampler: missing (a dict {coordinate: normal(mean, sd) | uniform(lo, hi) | "
                               "fixed(value)})")
    by_symbol = {c.symbol: c for c in coords}
    for key in value:
        if key not in by_symbol:
            raise DescriptionError(f"sampler: '{key}' is not a coordinate")
    out = []
    for c in coords:
        d = value.get(c.symbol)
        if d is None:
            raise DescriptionError(f"sampler: no distribution for coordinate '{c.name}'")
        if not isinstance(d, Distribution):
            raise DescriptionError(f"sampler: '{c.name}' needs normal(mean, sd), uniform(lo, hi) or fixed(value)")
        field = f"sampler: '{c.name}'"
        d.a = _expr(d.a, field, allowed_p)
        if d.b is not None:
            d.b = _expr(d.b, field, allowed_p)
        out.append(d)
    return out


def _observers(values, allowed):
    if not isinstance(values, (list, tuple)):
        raise DescriptionError("observers: must be a list of observer(name, value, help)")
    if len(values) > MAX_OBSERVERS:
        raise DescriptionError(f"observers: {len(values)} of them; at most {MAX_OBSERVERS}")
    seen = set()
    for o in values:
        if not isinstance(o, Observer):
            raise DescriptionError("observers: every entry is an observer(name, value, help)")
        if not isinstance(o.name, str) or not OBSERVER_NAME_RE.match(o.name):
            raise DescriptionError(f"observers: '{o.name}' is not an observer name (a letter, then letters, "
                                   "digits or _; at most 24 characters)")
        field = f"observer '{o.name}'"
        if o.name in seen:
            raise DescriptionError(f"{field}: the name appears twice")
        seen.add(o.name)
        if not isinstance(o.help, str) or not o.help.strip() or "\n" in o.help:
            raise DescriptionError(f"{field}: give a one-line help text")
        o.help = o.help.strip()
        components = list(o.value) if isinstance(o.value, (list, tuple, sp.MatrixBase)) else [o.value]
        if not 1 <= len(components) <= MAX_OBSERVER_DIM:
            raise DescriptionError(f"{field}: {len(components)} components; allowed 1 to {MAX_OBSERVER_DIM}")
        o.exprs = [_expr(e, field, allowed) for e in components]
    return list(values)
