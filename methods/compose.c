/* Methods built from methods: compositions Phi = Phi^{(k)}_{c_k h} o ... o Phi^{(1)}_{c_1 h} of
 * registered methods (never their code), and the adjoint Phi*_h = (Phi_{-h})^-1.
 *   newmark-psi   Psi_h = F^{0,0,1}_{h/2} o F^{0,0,0}_{h/2}   (Anahory Simoes et al. 2022, Prop. 3.8, eq. 19;
 *                 order 2, symmetric)
 *   triple-jump   Phi_{g1 h} o Phi_{g2 h} o Phi_{g1 h}, g1 = 1/(2 - 2^{1/3}), g2 = 1 - 2 g1, of a symmetric
 *                 method of order 2k: order 2k + 2 (Yoshida 1990; Anahory Simoes et al. 2022, Remark 3.12)
 *   compose       a symmetric composition with user coefficients c_1..c_s (palindromic, sum 1)
 *   adjoint       solves Phi_{-h}(x1) = x0 for x1 by Newton with a finite-difference Jacobian
 * The inner method is a text parameter written NAME/k=v/k=v (the '/' stand for the ':' and ',' of a
 * method spec, which the outer spec already uses). Inner methods that carry state are refused. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STAGES = 16, P_INNER = 0, P_COEFFS = 1 };

typedef struct composition {
    nh_stepper *inner[2];   /* owned by the outer stepper (nh_stepper_create_inner) */
    int n_stages;
    int which[MAX_STAGES];
    double fraction[MAX_STAGES];
    int inner_keeps_constraint;   /* adjoint only */
    nh_step_history stage[MAX_STAGES];   /* each stage's solutions over the outer steps (implicit inner methods) */
    int stage_histories;                 /* whether any stage keeps one (else the outer record is not kept) */
} composition;

/* Descriptor data: how the stage fractions are chosen. */
typedef struct composition_kind {
    int triple_jump;        /* 1: Yoshida's fractions; 0: the coeffs parameter */
} composition_kind;

/* "newmark/beta=0.1/beta2=0.1" -> spec of "newmark:beta=0.1,beta2=0.1" (nh_method_spec_parse_inner), a one-step
 * method */
static int parse_inner(const nh_method_spec *self, const char *text, nh_method_spec *spec, nh_error *err)
{
    int rc = nh_method_spec_parse_inner(self, text, spec, err);
    if (rc)
        return rc;
    if (spec->type->carried_dim || spec->type->create)
        return nh_fail(err, NH_ERR_INPUT,
                       "inner method '%s' carries state between steps or is itself composite; compositions and "
                       "adjoints take one-step methods on (q, v) only",
                       spec->type->name);
    return NH_OK;
}

/* "0.5/0.5" -> coefficients; palindromic and summing to 1. */
static int parse_coefficients(const char *text, double *c, int *count, nh_error *err)
{
    char buf[NH_PARAM_TEXT_MAX], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    double sum = 0;
    *count = 0;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (*count == MAX_STAGES || nh_parse_double(tok, &c[*count]))
            return nh_fail(err, NH_ERR_INPUT, "compose: coefficient '%s' is not a number (at most %d, '/'-separated)",
                           tok, MAX_STAGES);
        sum += c[(*count)++];
    }
    if (*count == 0 || fabs(sum - 1.0) > 1e-13)
        return nh_fail(err, NH_ERR_INPUT, "compose: coefficients '%s' sum to %.17g; they must sum to 1", text, sum);
    for (int i = 0; i < *count; ++i)
        if (fabs(c[i] - c[*count - 1 - i]) > 1e-15)
            return nh_fail(err, NH_ERR_INPUT, "compose: coefficients '%s' are not palindromic (symmetric)", text);
    return NH_OK;
}

static double sum_of_cubes(const double *c, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i)
        s += c[i] * c[i] * c[i];
    return s;
}

static int triple_jump_coefficients(double *c)
{
    const double g1 = 1.0 / (2.0 - cbrt(2.0));
    c[0] = c[2] = g1;
    c[1] = 1.0 - 2.0 * g1;   /* = -2^{1/3} / (2 - 2^{1/3}) */
    return 3;
}

/* Stage k with its own history swapped into the inner stepper (when it has one). The stage's solve may
 * start from it when the outer step continues the previous one: then stage k's starts are equally
 * spaced in time, while the inner stepper alternates step sizes. */
static int stage_step(const nh_stepper *st, composition *c, int k, int continues, double h, double *q, double *v)
{
    nh_stepper *inner = c->inner[c->which[k]];
    nh_step_history *stage = &c->stage[k];
    if (!stage->solution)
        return nh_stepper_step(inner, c->fraction[k] * h, q, v, NULL);
    if (continues)
        nh_step_history_resume(stage, st->sys->n, q, v);
    else
        stage->count = 0;
    nh_step_history_swap(inner, stage);
    int rc = nh_stepper_step(inner, c->fraction[k] * h, q, v, NULL);
    nh_step_history_swap(inner, stage);
    return rc;
}

static int composition_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    composition *c = st->impl;
    const double *no_solutions;
    int continues = c->stage_histories && nh_stepper_history(st, h, q, v, &no_solutions) > 0;
    for (int k = 0; k < c->n_stages; ++k) {
        int rc = stage_step(st, c, k, continues, h, q, v);
        if (rc) {
            st->history.count = 0;   /* the earlier stages recorded a step that did not happen */
            return rc;
        }
    }
    if (c->stage_histories)
        nh_stepper_remember(st, NULL, q, v);
    return NH_OK;
}

/* Whether every stage is a step of the same inner stepper with the same fraction: then each inner step
 * continues the one before it with the same size, and the inner stepper's own history, spaced c h, is
 * closer than a stage's history across outer steps, spaced h. */
static int stages_are_uniform(const composition *c)
{
    for (int k = 1; k < c->n_stages; ++k)
        if (c->which[k] != c->which[0] || c->fraction[k] != c->fraction[0])
            return 0;
    return 1;
}

/* The outer stepper's history records only the (q, v) it returned (dim 0), and only for stages with
 * histories: each stage of an implicit inner method gets one like the inner stepper's own, unless the
 * stages are uniform. */
static int composition_histories(nh_stepper *st, composition *c, nh_error *err)
{
    const int n = st->sys->n;
    if (nh_step_history_init(&st->history, 0, n, err))
        return NH_ERR_NOMEM;
    for (int k = 0; k < c->n_stages && !stages_are_uniform(c); ++k) {
        int dim = c->inner[c->which[k]]->history.dim;
        if (dim > 0 && nh_step_history_init(&c->stage[k], dim, n, err))
            return NH_ERR_NOMEM;
        c->stage_histories |= dim > 0;
    }
    return NH_OK;
}

static void composition_destroy(nh_stepper *st)
{
    composition *c = st->impl;
    for (int k = 0; c && k < MAX_STAGES; ++k)
        nh_step_history_free(&c->stage[k]);
    free(c);
    st->impl = NULL;
}

static composition *composition_alloc(nh_stepper *st, nh_error *err)
{
    composition *c = calloc(1, sizeof *c);
    if (!c)
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating a composition");
    st->impl = c;
    return c;
}

static int add_inner(nh_stepper *st, composition *c, int slot, const nh_method_spec *spec, nh_error *err)
{
    c->inner[slot] = nh_stepper_create_inner(st, spec, err);
    return c->inner[slot] ? NH_OK : NH_ERR_INPUT;
}

/* ---- newmark-psi ---------------------------------------------------------------------------- */

static int psi_create(nh_stepper *st, nh_error *err)
{
    composition *c = composition_alloc(st, err);
    nh_method_spec f000, f001;
    const nh_registry *reg = st->method.registry;
    if (!c || nh_method_spec_parse(reg, &f000, "newmark:beta=0,beta2=0,alpha=0", err) ||
        nh_method_spec_parse(reg, &f001, "newmark:beta=0,beta2=0,alpha=1", err))
        return NH_ERR_INPUT;
    c->n_stages = 2;
    c->which[0] = 0;
    c->which[1] = 1;
    c->fraction[0] = c->fraction[1] = 0.5;
    if (add_inner(st, c, 0, &f000, err) || add_inner(st, c, 1, &f001, err))
        return NH_ERR_INPUT;
    return composition_histories(st, c, err);
}

const nh_method_type nh_method_newmark_psi = {
    .name = "newmark-psi",
    .summary = "Psi_h = F^{0,0,1}_{h/2} o F^{0,0,0}_{h/2}, the symmetric Newmark composition "
               "(Anahory Simoes et al. 2022, eq. 19)",
    .reference = "Anahory Simoes et al. 2022 Prop. 3.8; docs/METHODS.md Sect. 6",
    .fixed_flags = NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_REVERSIBLE,
    .fixed_order = 2,
    .step = composition_step,
    .create = psi_create,
    .destroy = composition_destroy,
};

/* ---- triple-jump and compose ---------------------------------------------------------------- */

static const nh_param_def triple_jump_params[] = {
    {"inner", 0, 0, 0, 0, "symmetric inner method, NAME/k=v/...", "newmark"},
};

static const nh_param_def compose_params[] = {
    {"inner", 0, 0, 0, 0, "symmetric inner method, NAME/k=v/...", "newmark"},
    {"coeffs", 0, 0, 0, 0, "palindromic step fractions c1/c2/.../cs summing to 1", "0.5/0.5"},
};

static int stage_coefficients(const nh_method_spec *self, double *c, int *count, nh_error *err)
{
    const composition_kind *kind = self->type->data;
    if (kind->triple_jump) {
        *count = triple_jump_coefficients(c);
        return NH_OK;
    }
    return parse_coefficients(self->params.text[P_COEFFS], c, count, err);
}

/* Order of a symmetric composition of a symmetric method of even order r: r + 2 when the order
 * condition sum c_i^{r+1} = 0 holds (sum c_i^3 = 0 for r = 2), else r. */
static int composed_order(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    double c[MAX_STAGES];
    int count;
    if (parse_inner(self, self->params.text[P_INNER], &inner, &err) || stage_coefficients(self, c, &count, &err))
        return 0;
    int r = nh_method_spec_order(&inner);
    return r == 2 && fabs(sum_of_cubes(c, count)) < 1e-14 ? 4 : r;
}

static unsigned composed_flags(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    if (parse_inner(self, self->params.text[P_INNER], &inner, &err))
        return 0;
    return nh_method_spec_flags(&inner) & ~NH_METHOD_CARRIES_STATE;
}

static int composed_accepts(const nh_method_spec *self, const nh_system *sys, nh_error *err)
{
    nh_method_spec inner;
    double c[MAX_STAGES];
    int count;
    int rc = parse_inner(self, self->params.text[P_INNER], &inner, err);
    if (!rc)
        rc = stage_coefficients(self, c, &count, err);
    if (!rc && !(nh_method_spec_flags(&inner) & NH_METHOD_REVERSIBLE))
        rc = nh_fail(err, NH_ERR_INPUT,
                     "%s: inner method '%s' is not symmetric; a symmetric composition raises the order only of a "
                     "symmetric method (use e.g. inner=dla01, inner=newmark or inner=dla)",
                     self->type->name, self->params.text[P_INNER]);
    return rc ? rc : nh_method_spec_check(&inner, sys, err);
}

static int composed_create(nh_stepper *st, nh_error *err)
{
    composition *c = composition_alloc(st, err);
    nh_method_spec inner;
    if (!c || parse_inner(&st->method, st->params.text[P_INNER], &inner, err) ||
        stage_coefficients(&st->method, c->fraction, &c->n_stages, err) || add_inner(st, c, 0, &inner, err))
        return NH_ERR_INPUT;
    return composition_histories(st, c, err);
}

static const composition_kind TRIPLE_JUMP = {1}, USER_COEFFICIENTS = {0};

const nh_method_type nh_method_triple_jump = {
    .name = "triple-jump",
    .summary = "triple jump of a symmetric method (order 2k -> 2k + 2); inner=NAME/k=v/...",
    .reference = "Yoshida 1990; Anahory Simoes et al. 2022 Remark 3.12",
    .n_params = 1,
    .params = triple_jump_params,
    .data = &TRIPLE_JUMP,
    .flags = composed_flags,
    .order = composed_order,
    .accepts = composed_accepts,
    .step = composition_step,
    .create = composed_create,
    .destroy = composition_destroy,
};

const nh_method_type nh_method_compose = {
    .name = "compose",
    .summary = "symmetric composition with coefficients coeffs=c1/.../cs of a symmetric inner method",
    .reference = "Hairer-Lubich-Wanner, Geometric Numerical Integration, Sect. V.3",
    .n_params = 2,
    .params = compose_params,
    .data = &USER_COEFFICIENTS,
    .flags = composed_flags,
    .order = composed_order,
    .accepts = composed_accepts,
    .step = composition_step,
    .create = composed_create,
    .destroy = composition_destroy,
};

/* ---- adjoint -------------------------------------------------------------------------------- */

static const nh_param_def adjoint_params[] = {
    {"inner", 0, 0, 0, 0, "one-step method whose adjoint is taken, NAME/k=v/...", "dla/alpha=0.4"},
};

typedef struct adjoint_step {
    nh_stepper *inner;
    double h;
    const double *q0, *v0;
    int on_d;   /* the inner method maps D to D */
    double *work;   /* nh_fd_jacobian's 2 dim doubles (the stepper's workspace) */
} adjoint_step;

/* F(x1) = Phi_{-h}(x1) - x0. A method that keeps the constraint is a map of D: it ignores the
 * component of its input velocity normal to D_q (the multiplier absorbs it), so Phi_{-h} has a
 * rank-m defect off D. Its adjoint is then solved on D: the normal part (at q0) of the velocity
 * residual, which vanishes at the solution, is replaced by the constraint A(q1) v1 = 0. */
static int adjoint_residual(const double *x, double *r, void *ctx)
{
    const adjoint_step *a = ctx;
    const nh_system *s = a->inner->sys;
    const int n = s->n, m = s->m;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], dv[NH_MAX_DIM];
    memcpy(q, x, (size_t)n * sizeof *q);
    memcpy(v, x + n, (size_t)n * sizeof *v);
    if (nh_stepper_step(a->inner, -a->h, q, v, NULL))
        return 1;
    for (int i = 0; i < n; ++i) {
        r[i] = q[i] - a->q0[i];
        dv[i] = v[i] - a->v0[i];
    }
    if (!a->on_d) {
        memcpy(r + n, dv, (size_t)n * sizeof *dv);
        return 0;
    }
    double a0[NH_MAX_CON * NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM], c0[NH_MAX_CON * NH_MAX_CON], y[NH_MAX_CON];
    double normal[NH_MAX_DIM];
    if (nh_project_velocity(s, a->q0, dv, r + n))
        return 1;
    s->type->constraint(s, a->q0, a0);
    s->type->constraint(s, x, a1);
    nh_constraint_gram(s, a->q0, a0, c0);
    nh_matvec(m, n, a1, x + n, y);
    if (nh_spd_solve(m, c0, y))
        return 1;
    nh_matvec_t(m, n, a0, y, normal);
    for (int i = 0; i < n; ++i)
        r[n + i] += s->inv_mass[i] * normal[i];
    return 0;
}

static int adjoint_jacobian(const double *x, double *jac, void *ctx)
{
    const adjoint_step *a = ctx;
    return nh_fd_jacobian(2 * a->inner->sys->n, adjoint_residual, ctx, x, jac, a->work);
}

static int adjoint_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    composition *c = st->impl;
    const int n = st->sys->n;
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM], x[NH_MAX_UNKNOWNS];
    memcpy(q0, q, (size_t)n * sizeof *q);
    memcpy(v0, v, (size_t)n * sizeof *v);
    int rc = nh_stepper_step(c->inner[0], h, q, v, NULL); /* Phi_h: an O(h^{p+1}) guess for Phi*_h */
    if (rc)
        return rc;
    memcpy(x, q, (size_t)n * sizeof *q);
    memcpy(x + n, v, (size_t)n * sizeof *v);
    adjoint_step a = {c->inner[0], h, q0, v0, c->inner_keeps_constraint, st->workspace};
    double scale = fmax(nh_norm_inf(n, q0), nh_norm_inf(n, v0));
    nh_nonlinear_problem pb = {2 * n, adjoint_residual, adjoint_jacobian, &a, scale > 0 ? scale : 1.0, NH_JACOBIAN_EACH_SOLVE, 0, NULL};
    rc = nh_solver_solve(st->solver, &pb, x);
    if (rc)
        return rc;
    memcpy(q, x, (size_t)n * sizeof *q);
    memcpy(v, x + n, (size_t)n * sizeof *v);
    return NH_OK;
}

static int adjoint_create(nh_stepper *st, nh_error *err)
{
    composition *c = composition_alloc(st, err);
    nh_method_spec inner;
    if (!c || parse_inner(&st->method, st->params.text[P_INNER], &inner, err) || add_inner(st, c, 0, &inner, err))
        return NH_ERR_INPUT;
    c->inner_keeps_constraint = (nh_method_spec_flags(&inner) & NH_METHOD_PRESERVES_CONSTRAINT) != 0;
    return NH_OK;
}

static unsigned adjoint_flags(const nh_method_spec *self)
{
    return composed_flags(self) | NH_METHOD_IMPLICIT;
}

static int adjoint_order(const nh_method_spec *self)
{
    nh_method_spec inner;
    nh_error err;
    return parse_inner(self, self->params.text[P_INNER], &inner, &err) ? 0 : nh_method_spec_order(&inner);
}

static int adjoint_accepts(const nh_method_spec *self, const nh_system *sys, nh_error *err)
{
    nh_method_spec inner;
    int rc = parse_inner(self, self->params.text[P_INNER], &inner, err);
    return rc ? rc : nh_method_spec_check(&inner, sys, err);
}

/* the solve is for (q1, v1); nh_fd_jacobian needs 2 dim doubles of scratch */
static int adjoint_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 2 * sys->n;
}

static long adjoint_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    return NH_FD_WORK(adjoint_solver_dim(self, sys));
}

const nh_method_type nh_method_adjoint = {
    .name = "adjoint",
    .summary = "adjoint Phi*_h = (Phi_{-h})^-1 of a one-step method; inner=NAME/k=v/...",
    .reference = "Hairer-Lubich-Wanner, Geometric Numerical Integration, Sect. II.3",
    .n_params = 1,
    .params = adjoint_params,
    .flags = adjoint_flags,
    .order = adjoint_order,
    .accepts = adjoint_accepts,
    .solver_dim = adjoint_solver_dim,
    .workspace_size = adjoint_workspace_size,
    .step = adjoint_step_fn,
    .create = adjoint_create,
    .destroy = composition_destroy,
};
