"""The C17 source of a plugin from a description and its derivation: one static function per callback,
common subexpressions eliminated per callback, every output entry written (zeros included), the
descriptor and the plugin entry point (include/nhens/plugin.h)."""
import math

import sympy as sp
from sympy.printing.c import C99CodePrinter

SMALL_POWER = 4          # x**k for 2 <= k <= SMALL_POWER is printed as products (exact, unlike pow)
MINIMUM_GRID = 720       # grid of the numeric minimum, then golden section (as systems/cvt.c does)
MINIMUM_GOLDEN_STEPS = 80


class Printer(C99CodePrinter):
    """C99 printing with the generated names and products for small integer powers."""

    def __init__(self, names):
        super().__init__()
        self.names = names

    def _print_Symbol(self, expr):
        return self.names.get(expr, super()._print_Symbol(expr))

    def _print_Pow(self, expr):
        base, exp = expr.base, expr.exp
        if exp.is_Integer and 2 <= exp <= SMALL_POWER:
            b = self.parenthesize(base, sp.printing.precedence.PRECEDENCE["Mul"])
            return "(" + "*".join([b] * int(exp)) + ")"
        if exp.is_Integer and -SMALL_POWER <= exp <= -1:
            return "(1.0/" + self._print(sp.Pow(base, -exp, evaluate=False)) + ")"
        return super()._print_Pow(expr)

    def _print_Integer(self, expr):
        return f"{int(expr)}.0"

    def _print_Pi(self, expr):
        return "NH_SYM_PI"


def _c_string(text):
    """A C string literal of text: quotes, backslashes and control characters escaped (octal)."""
    out = []
    for ch in text:
        if ch in '"\\?':  # ? too: "??=" would be a trigraph in strict C17
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _c_double(x):
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    r = repr(float(x))
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


class Emitter:
    def __init__(self, system, derived, source_name):
        self.s, self.d, self.source_name = system, derived, source_name
        self.prefix = "sym_" + "".join(ch if ch.isalnum() else "_" for ch in system.name)
        names = {c.symbol: "q_" + c.name for c in system.coords}
        names.update({c.velocity: f"v[{c.index}]" for c in system.coords})
        names.update({p.symbol: "p_" + p.name for p in system.params})
        names.update({u: f"u[{i}]" for i, u in enumerate(derived.u)})
        names.update({lam: f"lam[{i}]" for i, lam in enumerate(derived.lam)})
        self.printer = Printer(names)
        self.lines = []

    def w(self, line=""):
        self.lines.append(line)

    def code(self, e):
        return self.printer.doprint(e)

    # --- one callback body: locals for what it reads, CSE temporaries, the outputs -------------------
    def body(self, outputs, target, write_zeros=True, reads_q=True):
        """outputs: [(index, expr)]; writes target[index] = expr for each, after the CSE temporaries."""
        exprs = [e for _, e in outputs]
        temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t_"), optimizations="basic")
        used = set()
        for _, e in temps:
            used |= e.free_symbols
        for e in reduced:
            used |= e.free_symbols
        self.locals(used, reads_q)
        for sym, e in temps:
            self.printer.names[sym] = str(sym)
            self.w(f"    const double {sym} = {self.code(e)};")
        nonzero = [(i, e) for (i, _), e in zip(outputs, reduced) if e != 0]
        zeros = [i for (i, _), e in zip(outputs, reduced) if e == 0]
        if write_zeros and len(zeros) > len(nonzero) and len(zeros) > 4:
            self.w(f"    memset({target}, 0, {len(outputs)} * sizeof *{target});")
            zeros = []
        writes = [(i, "0.0") for i in (zeros if write_zeros else [])] + [(i, self.code(e)) for i, e in nonzero]
        for i, text in sorted(writes):
            self.w(f"    {target}[{i}] = {text};")

    def locals(self, used, reads_q=True):
        for p in self.s.params:
            if p.symbol in used:
                self.w(f"    const double p_{p.name} = s->params.value[{p.index}];")
        for c in self.s.coords:
            if reads_q and c.symbol in used:
                self.w(f"    const double q_{c.name} = q[{c.index}];")

    def unused(self, *names):
        for nm in names:
            self.w(f"    (void){nm};")

    def function(self, signature, outputs, target, used_args, write_zeros=True):
        self.w(f"static void {self.prefix}_{signature}")
        self.w("{")
        free = set()
        for _, e in outputs:
            free |= e.free_symbols
        self.unused(*[a for a, syms in used_args if not (free & syms)])
        self.body(outputs, target, write_zeros)
        self.w("}")
        self.w()

    # --- the file ------------------------------------------------------------------------------------
    def emit(self):
        s, d = self.s, self.d
        n, m = s.n, s.m
        qset = set(s.q)
        pset = {p.symbol for p in s.params}
        self.header()
        self.params_table()
        self.presets_table()
        self.w(f"static void {self.prefix}_dimensions(const double *par, int *n, int *m)")
        self.w("{")
        self.w("    (void)par;")
        self.w(f"    *n = {n};")
        self.w(f"    *m = {m};")
        self.w("}")
        self.w()
        self.scalar_function("potential(const nh_system *s, const double *restrict q)", d.potential,
                             [("s", pset), ("q", qset)])
        args = [("s", pset), ("q", qset)]
        self.function("gradient(const nh_system *s, const double *restrict q, double *restrict g)",
                      list(enumerate(d.gradient)), "g", args)
        self.function("hessian(const nh_system *s, const double *restrict q, double *restrict h)",
                      list(enumerate(d.hessian)), "h", args)
        self.function("constraint(const nh_system *s, const double *restrict q, double *restrict a)",
                      list(enumerate(d.constraint)), "a", args)
        self.function("constraint_jacobian_velocity(const nh_system *s, const double *restrict q, "
                      "const double *restrict u, double *restrict out)",
                      list(enumerate(d.jac_velocity)), "out", args + [("u", set(d.u))])
        self.function("constraint_jacobian_multiplier(const nh_system *s, const double *restrict q, "
                      "const double *restrict lam, double *restrict out)",
                      list(enumerate(d.jac_multiplier)), "out", args + [("lam", set(d.lam))])
        self.mass_functions(args)
        self.basis_functions(args)
        self.sampler()
        self.minimum_energy()
        self.kinds()
        self.descriptor()
        self.observers()
        self.plugin_entry()
        return "\n".join(self.lines) + "\n"

    def header(self):
        s = self.s
        self.w(f"/* Plugin for the system '{s.name}', generated by nhens-symbolic from {self.source_name}: edit")
        self.w(" * the description and generate again rather than this file.")
        self.w(f" *   q = ({', '.join(c.name for c in s.coords)}), n = {s.n}, m = {s.m}")
        self.w(f" *   V = {_comment(sp.sstr(s.potential))}")
        for i in range(s.m):
            self.w(f" *   A[{i}] = {_comment(sp.sstr(list(s.constraints.row(i))))}")
        self.w(" * Every derivative is SymPy's, printed after common-subexpression elimination. */")
        self.w("#include <nhens/nhens.h>")
        self.w()
        self.w("#include <math.h>")
        self.w("#include <string.h>")
        self.w()
        self.w("#define NH_SYM_PI 3.14159265358979323846")
        self.w()

    def params_table(self):
        s = self.s
        if not s.params:
            return
        self.w(f"static const nh_param_def {self.prefix}_params[] = {{")
        for p in s.params:
            self.w(f"    {{{_c_string(p.name)}, {_c_double(p.default)}, {_c_double(p.lo)}, {_c_double(p.hi)}, "
                   f"{int(p.integer)}, {_c_string(p.help)}, NULL}},")
        self.w("};")
        self.w()

    def presets_table(self):
        s = self.s
        if not s.presets:
            return
        self.w(f"static const nh_preset {self.prefix}_presets[] = {{")
        for p in s.presets:
            overrides = ",".join(f"{k}={_c_double(v)}" for k, v in p.params.items())
            head = f"    {{{_c_string(p.name)}, {_c_string(p.description)}, {_c_string(overrides)}"
            if p.is_shell:
                self.w(f"{head}, 0, {{0}}, {{0}}, {_c_double(p.energy)}, {p.ensemble}}},")
            else:
                qs = ", ".join(_c_double(x) for x in p.q)
                vs = ", ".join(_c_double(x) for x in p.v)
                self.w(f"{head}, {s.n},\n     {{{qs}}},\n     {{{vs}}}, 0, 0}},")
        self.w("};")
        self.w()

    def scalar_function(self, signature, expr, args, reads_q=True):
        """static double PREFIX_signature { return expr; } with CSE; args: [(name, symbols it carries)]."""
        self.w(f"static double {self.prefix}_{signature}")
        self.w("{")
        self.unused(*[a for a, syms in args if not (expr.free_symbols & syms)])
        temps, (reduced,) = sp.cse([expr], symbols=sp.numbered_symbols("t_"), optimizations="basic")
        used = set(reduced.free_symbols)
        for _, e in temps:
            used |= e.free_symbols
        self.locals(used, reads_q)
        for sym, e in temps:
            self.printer.names[sym] = str(sym)
            self.w(f"    const double {sym} = {self.code(e)};")
        self.w(f"    return {self.code(reduced)};")
        self.w("}")
        self.w()

    def mass_functions(self, args):
        s, d, n = self.s, self.d, self.s.n
        if d.mass_kind == "diagonal":
            self.w(f"static void {self.prefix}_mass(const nh_system *s, double *restrict diag)")
            self.w("{")
            diag = [s.mass[i, i] for i in range(n)]
            free = set().union(*[e.free_symbols for e in diag])
            if not free:
                self.w("    (void)s;")
            self.body(list(enumerate(diag)), "diag")
            self.w("}")
            self.w()
        elif d.mass_kind == "matrix":
            self.function("mass_matrix(const nh_system *s, const double *restrict q, double *restrict m)",
                          list(enumerate(s.mass)), "m", args)
            self.function("mass_matrix_derivative(const nh_system *s, const double *restrict q, "
                          "double *restrict dm)", list(enumerate(d.mass_derivative)), "dm", args)

    def basis_functions(self, args):
        d = self.d
        if d.basis is None:
            return
        x_out = [(i, e) for i, (e, on) in enumerate(zip(d.basis, d.basis_mask)) if on]
        dx_out = [(i, e) for i, (e, on) in enumerate(zip(d.basis_derivative, d.basis_derivative_mask)) if on]
        self.w("/* Writes exactly the entries of the declared pattern (zeros included); the caller keeps the rest zero. */")
        self.w(f"static void {self.prefix}_adapted_basis(const nh_system *s, const double *restrict q, "
               "double *restrict x, double *restrict dx)")
        self.w("{")
        free = set().union(set(), *[e.free_symbols for _, e in x_out + dx_out])
        self.unused(*[a for a, syms in args if not (free & syms)])
        if not dx_out:
            self.w("    (void)dx;")
        self.pair_body(x_out, dx_out)
        self.w("}")
        self.w()
        self.w(f"static void {self.prefix}_adapted_basis_pattern(const nh_system *s, unsigned char *x_mask, "
               "unsigned char *dx_mask)")
        self.w("{")
        self.w("    (void)s;")
        if not dx_out:
            self.w("    (void)dx_mask;")
        for i, _ in x_out:
            self.w(f"    x_mask[{i}] = 1;")
        for i, _ in dx_out:
            self.w(f"    dx_mask[{i}] = 1;")
        self.w("}")
        self.w()

    def pair_body(self, x_out, dx_out):
        """x and dx from one CSE (they share their trigonometric subexpressions)."""
        exprs = [e for _, e in x_out] + [e for _, e in dx_out]
        temps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("t_"), optimizations="basic")
        used = set()
        for _, e in temps:
            used |= e.free_symbols
        for e in reduced:
            used |= e.free_symbols
        self.locals(used)
        for sym, e in temps:
            self.printer.names[sym] = str(sym)
            self.w(f"    const double {sym} = {self.code(e)};")
        for (i, _), e in zip(x_out, reduced[:len(x_out)]):
            self.w(f"    x[{i}] = {self.code(e)};")
        for (i, _), e in zip(dx_out, reduced[len(x_out):]):
            self.w(f"    dx[{i}] = {self.code(e)};")

    def sampler(self):
        s = self.s
        self.w("/* One draw per random coordinate, in coordinate order. */")
        self.w(f"static void {self.prefix}_sample(const nh_system *s, nh_pcg32 *rng, double *q)")
        self.w("{")
        used = set()
        for dist in s.sampler:
            used |= dist.a.free_symbols | (dist.b.free_symbols if dist.b is not None else set())
        if not used:
            self.w("    (void)s;")
        if all(dist.kind == "fixed" for dist in s.sampler):
            self.w("    (void)rng;")
        self.locals(used, reads_q=False)
        for c, dist in zip(s.coords, s.sampler):
            self.w(f"    q[{c.index}] = {self.draw(dist)};")
        self.w("}")
        self.w()

    def draw(self, dist):
        if dist.kind == "fixed":
            return self.code(sp.Float(dist.a) if dist.a.is_number else dist.a)
        if dist.kind == "normal":
            g = "nh_pcg32_gaussian(rng)"
            scaled = g if dist.b == 1 else f"{self.code(dist.b)} * {g}"
            return scaled if dist.a == 0 else f"{self.code(dist.a)} + {scaled}"
        lo, hi = dist.a, dist.b
        u = "nh_pcg32_uniform(rng)"
        if lo == 0:
            return f"{self.code(hi)} * {u}"
        centre, half = sp.simplify((lo + hi) / 2), sp.simplify((hi - lo) / 2)
        unit = f"(2.0 * {u} - 1.0)"
        scaled = unit if half == 1 else f"{self.code(half)} * {unit}"
        return scaled if centre == 0 else f"{self.code(centre)} + {scaled}"

    def minimum_energy(self):
        d = self.d
        for k, (term, i, lo, hi) in enumerate(d.minimum_numeric):
            self.scalar_function(f"min_term{k}_at(const nh_system *s, double q_{self.s.coords[i].name})",
                                 term, [("s", {p.symbol for p in self.s.params})], reads_q=False)
            self.w(f"/* min of the term over [lo, hi]: a grid of {MINIMUM_GRID} intervals, then golden section */")
            self.w(f"static double {self.prefix}_min_term{k}(const nh_system *s)")
            self.w("{")
            used = lo.free_symbols | hi.free_symbols
            self.locals(used, reads_q=False)
            name = f"{self.prefix}_min_term{k}_at"
            self.w(f"    const double lo = {self.code(lo)}, hi = {self.code(hi)};")
            self.w(f"    double best_x = lo, best = {name}(s, lo);")
            self.w(f"    for (int i = 1; i <= {MINIMUM_GRID}; ++i) {{")
            self.w(f"        const double x = lo + (hi - lo) * i / {MINIMUM_GRID}, value = {name}(s, x);")
            self.w("        if (value < best) {")
            self.w("            best = value;")
            self.w("            best_x = x;")
            self.w("        }")
            self.w("    }")
            self.w(f"    double a = fmax(lo, best_x - (hi - lo) / {MINIMUM_GRID}), "
                   f"b = fmin(hi, best_x + (hi - lo) / {MINIMUM_GRID});")
            self.w("    const double g = 0.5 * (sqrt(5.0) - 1.0);")
            self.w(f"    for (int it = 0; it < {MINIMUM_GOLDEN_STEPS}; ++it) {{")
            self.w("        const double c = b - g * (b - a), e = a + g * (b - a);")
            self.w(f"        if ({name}(s, c) < {name}(s, e))")
            self.w("            b = e;")
            self.w("        else")
            self.w("            a = c;")
            self.w("    }")
            self.w(f"    const double value = {name}(s, 0.5 * (a + b));")
            self.w("    return value < best ? value : best;")
            self.w("}")
            self.w()
        self.w("/* The infimum of V over the sampler's support. */")
        self.w(f"static double {self.prefix}_minimum_energy(const nh_system *s)")
        self.w("{")
        const = d.minimum_constant
        if not (const.free_symbols or d.minimum_numeric):
            self.w("    (void)s;")
        self.locals(const.free_symbols, reads_q=False)
        terms = [f"{self.prefix}_min_term{k}(s)" for k in range(len(d.minimum_numeric))]
        if const != 0 or not terms:
            terms.insert(0, self.code(sp.Float(const) if const.is_number else const))
        self.w(f"    return {' + '.join(terms)};")
        self.w("}")
        self.w()

    def kinds(self):
        d = self.d
        if not any(d.kinds):
            return
        names = {1: "NH_COORDINATE_ANGLE", 2: "NH_COORDINATE_IGNORABLE"}
        self.w(f"static void {self.prefix}_coordinate_kinds(const nh_system *s, unsigned char *kind)")
        self.w("{")
        self.w("    (void)s;")
        for i, k in enumerate(d.kinds):
            if k:
                self.w(f"    kind[{i}] = {names[k]};")
        self.w("}")
        self.w()

    def descriptor(self):
        s, d, p = self.s, self.d, self.prefix
        fields = [
            f".name = {_c_string(s.name)}",
            f".summary = {_c_string(s.summary)}",
            f".reference = {_c_string(s.reference)}",
            f".n_params = {len(s.params)}",
            f".params = {p + '_params' if s.params else 'NULL'}",
            f".flags = {' | '.join(d.flags) if d.flags else '0'}",
            f".n_presets = {len(s.presets)}",
            f".presets = {p + '_presets' if s.presets else 'NULL'}",
            f".dimensions = {p}_dimensions",
            f".potential = {p}_potential",
            f".potential_gradient = {p}_gradient",
            f".potential_hessian = {p}_hessian",
            f".constraint = {p}_constraint",
            f".constraint_jacobian_velocity = {p}_constraint_jacobian_velocity",
            f".constraint_jacobian_multiplier = {p}_constraint_jacobian_multiplier",
            f".sample_configuration = {p}_sample",
            f".minimum_energy = {p}_minimum_energy",
        ]
        if d.mass_kind == "diagonal":
            fields.append(f".mass = {p}_mass")
        elif d.mass_kind == "matrix":
            fields += [f".mass_matrix = {p}_mass_matrix", f".mass_matrix_derivative = {p}_mass_matrix_derivative"]
        if d.basis is not None:
            fields += [f".adapted_basis = {p}_adapted_basis", f".adapted_basis_pattern = {p}_adapted_basis_pattern"]
        if any(d.kinds):
            fields.append(f".coordinate_kinds = {p}_coordinate_kinds")
        self.w(f"static const nh_system_type {p}_system = {{")
        for f in fields:
            self.w(f"    {f},")
        self.w("};")
        self.w()

    def observers(self):
        """One value function per observer, the table, and `applies`: the observers serve this system only."""
        s, p = self.s, self.prefix
        if not s.observers:
            return
        args = [("self", set()), ("init", set()), ("s", {x.symbol for x in s.params}),
                ("q", {c.symbol for c in s.coords}), ("v", {c.velocity for c in s.coords})]
        for o in s.observers:
            self.w(f"/* {_comment(o.name)} = {_comment(sp.sstr(o.exprs if len(o.exprs) > 1 else o.exprs[0]))} */")
            self.function(f"observe_{o.name}(const nh_observer_type *self, const nh_system *s, const double *restrict q,\n"
                          "    const double *restrict v, const nh_initial_values *init, double *restrict out)",
                          list(enumerate(o.exprs)), "out", args)
        self.w(f"static int {p}_observes(const nh_observer_type *self, const nh_system *s)")
        self.w("{")
        self.w("    (void)self;")
        self.w(f"    return s->type == &{p}_system;")
        self.w("}")
        self.w()
        self.w(f"static const nh_observer_type {p}_observers[] = {{")
        for o in s.observers:
            self.w(f"    {{{_c_string(o.name)}, {_c_string(o.help)}, {len(o.exprs)}, {p}_observe_{o.name}, "
                   f"{p}_observes, NULL}},")
        self.w("};")
        self.w()

    def plugin_entry(self):
        s, p = self.s, self.prefix
        self.w("static int register_all(nh_registry *reg, nh_error *err)")
        self.w("{")
        if not s.observers:
            self.w(f"    return nh_registry_add_system(reg, &{p}_system, err);")
        else:
            self.w(f"    int status = nh_registry_add_system(reg, &{p}_system, err);")
            self.w(f"    for (size_t i = 0; status == 0 && i < sizeof {p}_observers / sizeof {p}_observers[0]; ++i)")
            self.w(f"        status = nh_registry_add_observer(reg, &{p}_observers[i], err);")
            self.w("    return status;")
        self.w("}")
        self.w()
        self.w("NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION, "
               f"{_c_string(s.name)}, {_c_string('symbolic system: ' + s.summary)}, register_all}};")


def _comment(text):
    return text.replace("*/", "* /")


def emit(system, derived, source_name):
    return Emitter(system, derived, source_name).emit()
