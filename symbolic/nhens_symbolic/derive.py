"""Everything a system descriptor needs, derived from a validated description (description.System).

Derivatives are exact (SymPy); structural properties (flags, the basis pattern, coordinate kinds) are
claimed only when SymPy proves them, so a flag is never set on a system that does not have the property
(a property SymPy cannot prove is left unclaimed, which costs speed, never correctness). Numerical checks
at the default parameters (presets on the constraint, M positive definite, the basis in ker A) refuse a
description that is wrong in a way `nhens check` would find later.
"""
import itertools
import math
import random
import signal

import sympy as sp

from .description import DescriptionError, PRESET_CONSTRAINT_TOL

PIVOT_COMBINATIONS = 2000     # column sets tried for a basis by elimination
SYMPY_MINIMUM_SECONDS = 10    # time SymPy gets to find a term's minimum before the numeric fallback
NUMERIC_CHECK_POINTS = 8      # random configurations of the numeric checks


class Derived:
    """The callbacks' expressions and the descriptor's properties."""


def _is_zero(e):
    """True only when SymPy proves e == 0."""
    if e == 0:
        return True
    return sp.simplify(e) == 0


def derive(system, notes):
    """A Derived for `system`; `notes` (a list) receives one line per decision the user should know."""
    d = Derived()
    q, n, m = system.q, system.n, system.m
    A, V = system.constraints, system.potential
    d.potential = V
    d.gradient = [sp.diff(V, x) for x in q]
    d.hessian = sp.Matrix(n, n, lambda i, j: sp.diff(d.gradient[i], q[j]))
    d.constraint = A
    u = sp.symbols(f"u0:{n}", real=True)
    lam = sp.symbols(f"lam0:{m}", real=True)
    d.u, d.lam = u, lam
    Au = A * sp.Matrix(u)
    d.jac_velocity = sp.Matrix(m, n, lambda i, j: sp.expand(sp.diff(Au[i], q[j])))
    Atl = A.T * sp.Matrix(lam)
    d.jac_multiplier = sp.Matrix(n, n, lambda k, j: sp.expand(sp.diff(Atl[k], q[j])))
    _mass(d, system)
    _basis(d, system, notes)
    _flags(d, system, notes)
    _kinds(d, system, notes)
    _numeric_checks(d, system)
    _minimum_energy(d, system, notes)
    return d


def _mass(d, system):
    M, q, n = system.mass, system.q, system.n
    reads_q = any(e.free_symbols & set(q) for e in M)
    diagonal = all(M[i, j] == 0 for i in range(n) for j in range(n) if i != j)
    if M == sp.eye(n):
        d.mass_kind = "identity"
    elif diagonal and not reads_q:
        d.mass_kind = "diagonal"
    else:
        d.mass_kind = "matrix"
        d.mass_derivative = [sp.diff(M[i, j], q[k]) for i in range(n) for j in range(n) for k in range(n)]
    d.mass = M


def _pivot_basis(A, q, notes):
    """X = [-A_P^-1 A_F; I] for the first column set P whose determinant is a nonzero constant: a basis of
    ker A at every q (the free coordinates' velocities are its coordinates)."""
    m, n = A.shape
    for tried, cols in enumerate(itertools.combinations(range(n), m)):
        if tried == PIVOT_COMBINATIONS:
            break
        block = A.extract(list(range(m)), list(cols))
        det = sp.simplify(block.det())
        if det.free_symbols & set(q) or det.is_zero is not False:
            continue
        free = [j for j in range(n) if j not in cols]
        solved = block.LUsolve(A.extract(list(range(m)), free))
        X = sp.zeros(n, len(free))
        for a, f in enumerate(free):
            X[f, a] = 1
            for r, c in enumerate(cols):
                X[c, a] = sp.simplify(-solved[r, a])
        names = ", ".join(str(q[f]) for f in free)
        notes.append(f"adapted basis: by elimination, the velocities of {names} as coordinates "
                     f"(pivot determinant {det})")
        return X
    return None


def _basis(d, system, notes):
    q, n, m = system.q, system.n, system.m
    X = system.basis
    if isinstance(X, str):
        X = _pivot_basis(system.constraints, q, notes)
        if X is None:
            notes.append("adapted basis: none (no m columns of A have a constant nonzero determinant); "
                         "give `basis` for the D* methods (avf, gonzalez, itoh-abe)")
    elif X is None:
        notes.append("adapted basis: none (basis = None); the D* methods (avf, gonzalez, itoh-abe) refuse it")
    d.basis = X
    if X is None:
        return
    r = n - m
    d.basis_derivative = [sp.diff(X[i, a], q[j]) for i in range(n) for a in range(r) for j in range(n)]
    d.basis_mask = [0 if X[i, a] == 0 else 1 for i in range(n) for a in range(r)]
    d.basis_derivative_mask = [0 if e == 0 else 1 for e in d.basis_derivative]


def _flags(d, system, notes):
    q, A = system.q, system.constraints
    n = system.n
    second = [sp.diff(A[i, k], q[j], q[l]) for i in range(A.rows) for k in range(n) for j in range(n)
              for l in range(j, n)]
    d.affine = all(_is_zero(e) for e in second)
    reads = {j for j in range(n) if any(q[j] in e.free_symbols for e in A)}
    force = system.mass.LUsolve(A.T) if d.mass_kind == "matrix" else \
        sp.Matrix(n, A.rows, lambda j, i: A[i, j] / system.mass[j, j])
    moves = {j for j in range(n) if any(not _is_zero(force[j, i]) for i in range(A.rows))}
    d.cvt_type = not (reads & moves)
    flags = [f for f, on in (("NH_SYS_CVT_TYPE", d.cvt_type), ("NH_SYS_AFFINE_CONSTRAINT", d.affine)) if on]
    d.flags = flags
    why = ", ".join(str(q[j]) for j in sorted(reads & moves))
    notes.append("flags: " + (" | ".join(flags) if flags else "none") +
                 ("" if d.cvt_type else f" (not CVT-type: A reads {why}, which the constraint force moves)"))


def _kinds(d, system, notes):
    exprs = [system.potential] + list(system.constraints) + list(system.mass)
    if d.basis is not None:
        exprs += list(d.basis)
    for c in system.coords:
        x = c.symbol
        reads = [e for e in exprs if x in e.free_symbols]
        if c.kind == "ignorable" and reads:
            raise DescriptionError(f"coordinates: '{c.name}' is declared ignorable, but {_which(system, d, x)} "
                                   "reads it")
        if c.kind == "angle":
            for e in reads:
                if not _is_zero(e.subs(x, x + 2 * sp.pi) - e):
                    raise DescriptionError(f"coordinates: '{c.name}' is declared an angle, but {e} is not "
                                           f"2 pi-periodic in it")
        if c.kind == "plain" and not reads:
            notes.append(f"coordinates: nothing reads '{c.name}'; kinds={{\"{c.name}\": \"ignorable\"}} lets a "
                         "long run keep its digits")
    d.kinds = [{"plain": 0, "angle": 1, "ignorable": 2}[c.kind] for c in system.coords]


def _which(system, d, x):
    if x in system.potential.free_symbols:
        return "the potential"
    if any(x in e.free_symbols for e in system.constraints):
        return "the constraints"
    if any(x in e.free_symbols for e in system.mass):
        return "the mass"
    return "the basis"


def _lambdify(system, matrix):
    """A function (q, parameter values) -> the matrix as nested lists of floats."""
    f = sp.lambdify([system.q, [p.symbol for p in system.params]], matrix.tolist(), modules="math")
    return lambda qv, pv: [[float(e) for e in row] for row in f(qv, pv)]


def _param_values(system, overrides):
    return [overrides.get(p.name, p.default) for p in system.params]


def _numeric_checks(d, system):
    """At the defaults: the sampler's spreads, M SPD and X in ker A with full rank at random q, and every
    preset state on the constraint (what `nhens run --initial` demands)."""
    n, m = system.n, system.m
    defaults = _param_values(system, {})
    for c, dist in zip(system.coords, system.sampler):
        a = float(dist.a.subs(system.defaults()))
        b = float(dist.b.subs(system.defaults())) if dist.b is not None else None
        if dist.kind == "normal" and not b > 0:
            raise DescriptionError(f"sampler: '{c.name}': the standard deviation is {b} at the defaults; it must "
                                   "be > 0")
        if dist.kind == "uniform" and not a < b:
            raise DescriptionError(f"sampler: '{c.name}': uniform({a}, {b}) needs lo < hi")
    A = _lambdify(system, system.constraints)
    M = _lambdify(system, system.mass)
    X = _lambdify(system, d.basis) if d.basis is not None else None
    rng = random.Random(52)
    for _ in range(NUMERIC_CHECK_POINTS):
        qv = [rng.uniform(-2, 2) for _ in range(n)]
        if not _cholesky_ok(M(qv, defaults)):
            raise DescriptionError(f"mass: not positive definite at q = {_fmt(qv)} (default parameters)")
        if X is not None:
            a = sp.Matrix(A(qv, defaults))
            x = sp.Matrix(X(qv, defaults))
            scale = max(1.0, max(abs(float(e)) for e in a) * max(abs(float(e)) for e in x))
            worst = max(abs(float(e)) for e in a * x)
            if worst > 1e-12 * scale:
                raise DescriptionError(f"basis: A X = {worst:.3g} != 0 at q = {_fmt(qv)}: X is not in ker A")
            if x.rank(iszerofunc=lambda e: abs(float(e)) < 1e-12) < n - m:
                raise DescriptionError(f"basis: its {n - m} columns are not independent at q = {_fmt(qv)}")
    for p in system.presets:
        if p.is_shell:
            continue
        vals = _param_values(system, p.params)
        av = sp.Matrix(A(p.q, vals)) * sp.Matrix(p.v)
        res = math.sqrt(sum(float(e) ** 2 for e in av))
        if res > PRESET_CONSTRAINT_TOL:
            raise DescriptionError(f"preset '{p.name}': |A(q) v| = {res:.3g} > {PRESET_CONSTRAINT_TOL:g}: v is "
                                   "off the constraint")


def _fmt(qv):
    return "(" + ", ".join(f"{x:.3g}" for x in qv) + ")"


def _cholesky_ok(a):
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if not s > 0:
                    return False
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return True


class _Timeout(Exception):
    pass


def _sympy_minimum(expr, x, domain):
    """SymPy's minimum of expr over domain, or None when it cannot find it in time."""
    from sympy.calculus.util import minimum

    def alarm(signum, frame):
        raise _Timeout()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(SYMPY_MINIMUM_SECONDS)
    try:
        value = minimum(expr, x, domain)
    except Exception:  # NotImplementedError, ValueError, the timeout: SymPy cannot
        value = None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if value is None or value.free_symbols & {x} or value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        return None
    if isinstance(value, (sp.Min, sp.Max)) or value.has(sp.Piecewise):
        return None
    return value


def _minimum_energy(d, system, notes):
    """The infimum of V over the sampler's support: given, or the sum of the infima of V's additive terms
    grouped by the coordinates they read, each by SymPy or, on a bounded interval, by a grid and golden
    section at run time (d.minimum_numeric: (term, coordinate index, lo, hi))."""
    d.minimum_numeric = []
    if system.minimum_energy is not None:
        d.minimum_constant = system.minimum_energy
        return
    V = system.potential
    for c, dist in zip(system.coords, system.sampler):
        if dist.kind == "fixed":
            V = V.subs(c.symbol, dist.a)
    groups = {}
    for term in sp.Add.make_args(sp.expand(V, deep=False)):
        key = frozenset(term.free_symbols & set(system.q))
        groups[key] = groups.get(key, 0) + term
    keys = list(groups)
    for a, b in itertools.combinations(keys, 2):
        if a & b:
            raise DescriptionError("minimum_energy: cannot be derived (V couples coordinates across its terms); "
                                   "give minimum_energy = ...")
    constant = sp.Integer(0)
    for key, term in groups.items():
        if not key:
            constant += term
            continue
        if len(key) > 1:
            names = ", ".join(sorted(str(s) for s in key))
            raise DescriptionError(f"minimum_energy: cannot be derived (the term {term} couples {names}); "
                                   "give minimum_energy = ...")
        (x,) = key
        i = system.q.index(x)
        dist = system.sampler[i]
        domain = sp.S.Reals if dist.kind == "normal" else sp.Interval(dist.a, dist.b)
        value = _sympy_minimum(term, x, domain)
        if value is not None:
            constant += value
        elif dist.kind == "uniform":
            d.minimum_numeric.append((term, i, dist.a, dist.b))
            notes.append(f"minimum_energy: min of {term} over [{dist.a}, {dist.b}] by a grid and golden section "
                         "at run time")
        else:
            raise DescriptionError(f"minimum_energy: cannot be derived (no minimum of {term} over the reals "
                                   "found); give minimum_energy = ...")
    d.minimum_constant = constant
