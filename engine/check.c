/* System checks (include/nhens/check.h). Derivatives are compared with central differences of step
 * FD_STEP: truncation ~1e-12 f''' and rounding ~1e-16 |f| / 1e-6 = 1e-10 |f|, so FD_TOL = 1e-7 of
 * (1 + |value|) leaves three orders of margin and still catches a wrong sign or a missing term. The
 * closed-form identities (A X = 0, D* field = full field, Pi skew) and the declared coordinate kinds
 * (what the system's functions read is unchanged by a turn of an angle or a move of an ignorable
 * coordinate) hold to round-off. */
#include "nhens/check.h"

#include "dstar_field.h"
#include "nhens/ensemble.h"
#include "nhens/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double FD_STEP = 1e-6, FD_TOL = 1e-7, ROUNDOFF_TOL = 1e-12;

enum { ROW_GRAD, ROW_HESS, ROW_DAU, ROW_DATL, ROW_AFFINE, ROW_MASS, ROW_KERNEL, ROW_DX, ROW_PATTERN,
       ROW_DSTAR_FIELD, ROW_DSTAR_GRAD, ROW_PI_SKEW, ROW_INDEX1, ROW_KINDS, ROW_CVT, ROW_PRESETS, ROW_COUNT };
_Static_assert((int)ROW_COUNT <= (int)NH_CHECK_MAX_ROWS, "the report holds every row");

static const char *const ROW_NAMES[ROW_COUNT] = {
    "grad V vs differences of V",
    "Hessian of V vs differences of grad V",
    "d(A u)/dq vs differences",
    "d(A^T lam)/dq vs differences",
    "declared affine A: d(A u)/dq constant",
    "dM/dq vs differences, M(q) SPD",
    "adapted basis X in ker A(q)",
    "dX/dq vs differences",
    "basis writes exactly its declared pattern",
    "D* field Pi grad H = full field",
    "grad H on D* vs differences",
    "Pi skew: a.Pi b = -b.Pi a",
    "index-1 field keeps A v = 0 and H",
    "declared angles and ignorable coordinates",
    "declared CVT type: A fixed along its force",
    "presets: v on D_q, H finite",
};

/* Scratch for one point, on the heap (n up to NH_MAX_DIM makes dX n^3). */
typedef struct check_work {
    double *hess, *jm, *x, *dx, *xp, *xm, *mass, *dm, *mp, *mm;
} check_work;

static void note(nh_check_report *rep, int row, double error)
{
    nh_check_row *r = &rep->rows[row];
    r->applies = 1;
    r->worst = fmax(r->worst, isfinite(error) ? error : INFINITY);
}

static double fd_error(double fd, double value)
{
    return fabs(fd - value) / (1.0 + fabs(fd));
}

/* u: an arbitrary vector with no zero entry, to contract d(A u)/dq with */
static void contraction_vector(int n, double *u)
{
    for (int i = 0; i < n; ++i)
        u[i] = 0.3 + 0.7 * sin(1.0 + i);
}

static void check_potential_and_constraint(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    const int n = s->n, m = s->m;
    double g[NH_MAX_DIM], jv[NH_MAX_CON * NH_MAX_DIM], gp[NH_MAX_DIM], gm[NH_MAX_DIM], x[NH_MAX_DIM];
    double ap[NH_MAX_CON * NH_MAX_DIM], am[NH_MAX_CON * NH_MAX_DIM], u[NH_MAX_DIM], lam[NH_MAX_CON];
    double aup[NH_MAX_CON], aum[NH_MAX_CON], atp[NH_MAX_DIM], atm[NH_MAX_DIM];
    contraction_vector(n, u);
    for (int a = 0; a < m; ++a)
        lam[a] = 1.3 - 0.4 * a;
    s->type->potential_gradient(s, q, g);
    s->type->potential_hessian(s, q, w->hess);
    s->type->constraint_jacobian_velocity(s, q, u, jv);
    s->type->constraint_jacobian_multiplier(s, q, lam, w->jm);
    for (int j = 0; j < n; ++j) {
        memcpy(x, q, sizeof(double) * n);
        x[j] = q[j] + FD_STEP;
        double vp = s->type->potential(s, x);
        s->type->potential_gradient(s, x, gp);
        s->type->constraint(s, x, ap);
        x[j] = q[j] - FD_STEP;
        double vm = s->type->potential(s, x);
        s->type->potential_gradient(s, x, gm);
        s->type->constraint(s, x, am);
        note(rep, ROW_GRAD, fd_error((vp - vm) / (2 * FD_STEP), g[j]));
        for (int i = 0; i < n; ++i) {
            note(rep, ROW_HESS, fd_error((gp[i] - gm[i]) / (2 * FD_STEP), w->hess[i * n + j]));
            note(rep, ROW_HESS, fabs(w->hess[i * n + j] - w->hess[j * n + i]));
        }
        nh_matvec(m, n, ap, u, aup);
        nh_matvec(m, n, am, u, aum);
        nh_matvec_t(m, n, ap, lam, atp);
        nh_matvec_t(m, n, am, lam, atm);
        for (int a = 0; a < m; ++a)
            note(rep, ROW_DAU, fd_error((aup[a] - aum[a]) / (2 * FD_STEP), jv[a * n + j]));
        for (int i = 0; i < n; ++i)
            note(rep, ROW_DATL, fd_error((atp[i] - atm[i]) / (2 * FD_STEP), w->jm[i * n + j]));
    }
}

/* NH_SYS_AFFINE_CONSTRAINT: d(A u)/dq at q and at a second point q + d (every coordinate moved by
 * 0.37 (1 + |q_i|)) agree to round-off; a constraint with a curved entry (sin, a product of coordinates)
 * differs by O(1) there. */
static void check_affine_constraint(const nh_system *s, const double *q, nh_check_report *rep)
{
    if (!(s->type->flags & NH_SYS_AFFINE_CONSTRAINT))
        return;
    const int n = s->n, m = s->m;
    double u[NH_MAX_DIM], moved[NH_MAX_DIM], here[NH_MAX_CON * NH_MAX_DIM], there[NH_MAX_CON * NH_MAX_DIM];
    contraction_vector(n, u);
    for (int i = 0; i < n; ++i)
        moved[i] = q[i] + 0.37 * (1.0 + fabs(q[i]));
    s->type->constraint_jacobian_velocity(s, q, u, here);
    s->type->constraint_jacobian_velocity(s, moved, u, there);
    for (int k = 0; k < m * n; ++k)
        note(rep, ROW_AFFINE, fabs(there[k] - here[k]) / (1.0 + fabs(here[k])));
}

/* The largest relative difference of the first `count` entries of a and b */
static double relative_gap(int count, const double *a, const double *b);

/* NH_SYS_CVT_TYPE: A reads only coordinates the constraint force does not move. The force's direction
 * K lam = M(q)^-1 A(q)^T lam (lam with entries of both signs), scaled to move q by 0.37 (1 + |q|), must leave A
 * unchanged to round-off; an A that reads a moved coordinate changes by O(1) there. */
static void check_cvt_type(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    if (!(s->type->flags & NH_SYS_CVT_TYPE))
        return;
    const int n = s->n, m = s->m;
    double a0[NH_MAX_CON * NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM], lam[NH_MAX_CON], push[NH_MAX_DIM];
    double moved[NH_MAX_DIM];
    for (int a = 0; a < m; ++a)
        lam[a] = 1.3 - 0.9 * a;
    s->type->constraint(s, q, a0);
    nh_matvec_t(m, n, a0, lam, push);
    nh_mass_matrix(s, q, w->mp);
    if (nh_spd_solve(n, w->mp, push)) {
        note(rep, ROW_CVT, INFINITY);
        return;
    }
    const double size = nh_norm_inf(n, push);
    if (!(size > 0.0))
        return;   /* no force at this q: nothing moves */
    for (int i = 0; i < n; ++i)
        moved[i] = q[i] + 0.37 * (1.0 + nh_norm_inf(n, q)) / size * push[i];
    s->type->constraint(s, moved, a1);
    note(rep, ROW_CVT, relative_gap(m * n, a0, a1));
}

/* Every state preset at the parameters it runs with by default (the defaults and its own overrides), as a run
 * checks it: the relative residual |A(q) v| / (1 + |v|), infinite where H is not finite or the preset does not
 * fit the system; every energy shell above the minimum of V. */
static void check_presets(const nh_system *s, nh_check_report *rep)
{
    for (int i = 0; i < s->type->n_presets; ++i) {
        const nh_preset *p = &s->type->presets[i];
        nh_system at;
        nh_error err;
        if (nh_system_init(&at, s->type, p, NULL, 0, &err)) {
            note(rep, ROW_PRESETS, INFINITY);
            continue;
        }
        if (nh_preset_is_shell(p)) {
            note(rep, ROW_PRESETS, nh_energy_shell_check(&at, p->shell_energy, &err) ? INFINITY : 0.0);
            continue;
        }
        const double energy = nh_energy(&at, p->q, p->v);
        note(rep, ROW_PRESETS, isfinite(energy) ? nh_constraint_residual(&at, p->q, p->v) / (1.0 + nh_norm_inf(at.n, p->v))
                                                : INFINITY);
    }
}

static double relative_gap(int count, const double *a, const double *b)
{
    double worst = 0.0;
    for (int k = 0; k < count; ++k)
        worst = fmax(worst, fabs(a[k] - b[k]) / (1.0 + fabs(a[k])));
    return worst;
}

/* The driver energy (at a fixed velocity) and the coupled structure at q and at `moved`, where the system
 * has them: the largest relative difference (kappa in w's n x n scratch mp and mm) */
static double coupled_difference_at(const nh_system *s, const double *q, const double *moved, check_work *w)
{
    double v[NH_MAX_DIM], gap = 0.0;
    contraction_vector(s->n, v);
    if (s->type->driver_energy) {
        const double e0 = s->type->driver_energy(s, q, v), e1 = s->type->driver_energy(s, moved, v);
        gap = relative_gap(1, &e0, &e1);
    }
    if (s->type->coupled_structure) {
        const int p = s->n - 1;
        double k0[NH_MAX_DIM], k1[NH_MAX_DIM], f0[NH_MAX_DIM], f1[NH_MAX_DIM];
        int rows0, rows1;
        s->type->coupled_structure(s, q[p], k0, w->mp, &rows0, f0);
        s->type->coupled_structure(s, moved[p], k1, w->mm, &rows1, f1);
        gap = fmax(gap, fmax(relative_gap(p, k0, k1), relative_gap(p, f0, f1)));
        gap = fmax(gap, rows0 == rows1 ? relative_gap(rows0 * p, w->mp, w->mm) : INFINITY);
    }
    return gap;
}

/* V, grad V, A, M(q), the adapted basis and the coupled system's functions at q and at `moved`: the
 * largest relative difference */
static double difference_at(const nh_system *s, const double *q, const double *moved, check_work *w)
{
    const int n = s->n, m = s->m;
    double g0[NH_MAX_DIM], g1[NH_MAX_DIM], a0[NH_MAX_CON * NH_MAX_DIM], a1[NH_MAX_CON * NH_MAX_DIM];
    const double v0 = s->type->potential(s, q), v1 = s->type->potential(s, moved);
    s->type->potential_gradient(s, q, g0);
    s->type->potential_gradient(s, moved, g1);
    s->type->constraint(s, q, a0);
    s->type->constraint(s, moved, a1);
    double gap = fmax(relative_gap(1, &v0, &v1), fmax(relative_gap(n, g0, g1), relative_gap(m * n, a0, a1)));
    nh_mass_matrix(s, q, w->mp);
    nh_mass_matrix(s, moved, w->mm);
    gap = fmax(gap, relative_gap(n * n, w->mp, w->mm));
    if (s->type->adapted_basis) {
        nh_adapted_basis(s, q, w->x, w->dx);
        nh_adapted_basis(s, moved, w->xp, w->dx);
        gap = fmax(gap, relative_gap(n * (n - m), w->x, w->xp));
    }
    return fmax(gap, coupled_difference_at(s, q, moved, w));
}

/* Declared coordinate kinds (coordinate_kinds): V, grad V, A, M(q) and the adapted basis at q and at q
 * with an angle turned by 2 pi, or an ignorable coordinate moved by 3.7 and by -1234.5, agree to round-off
 * of the moved coordinate (|q_i| + 2 pi ~ 10: 1e-12 leaves three orders for sin and cos); a coordinate
 * that is neither differs by O(1). */
static void check_coordinate_kinds(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    unsigned char kind[NH_MAX_DIM] = {0};
    if (!s->type->coordinate_kinds)
        return;
    s->type->coordinate_kinds(s, kind);
    const double angle_moves[1] = {2.0 * M_PI}, ignorable_moves[2] = {3.7, -1234.5};
    for (int i = 0; i < s->n; ++i) {
        const int moves = kind[i] == NH_COORDINATE_ANGLE ? 1 : kind[i] == NH_COORDINATE_IGNORABLE ? 2 : 0;
        for (int k = 0; k < moves; ++k) {
            double moved[NH_MAX_DIM];
            memcpy(moved, q, (size_t)s->n * sizeof *q);
            moved[i] += kind[i] == NH_COORDINATE_ANGLE ? angle_moves[k] : ignorable_moves[k];
            note(rep, ROW_KINDS, difference_at(s, q, moved, w));
        }
        if (kind[i] > NH_COORDINATE_IGNORABLE)
            note(rep, ROW_KINDS, INFINITY);   /* not a kind nhens knows */
    }
}

static void check_mass_matrix(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    if (!nh_has_variable_mass(s))
        return;
    const int n = s->n;
    double qq[NH_MAX_DIM], rhs[NH_MAX_DIM] = {1};
    s->type->mass_matrix(s, q, w->mass);
    s->type->mass_matrix_derivative(s, q, w->dm);
    memcpy(w->mp, w->mass, sizeof(double) * n * n);
    note(rep, ROW_MASS, nh_spd_solve(n, w->mp, rhs) ? INFINITY : 0.0);
    for (int j = 0; j < n; ++j) {
        memcpy(qq, q, sizeof(double) * n);
        qq[j] = q[j] + FD_STEP;
        s->type->mass_matrix(s, qq, w->mp);
        qq[j] = q[j] - FD_STEP;
        s->type->mass_matrix(s, qq, w->mm);
        for (int e = 0; e < n * n; ++e) {
            note(rep, ROW_MASS, fd_error((w->mp[e] - w->mm[e]) / (2 * FD_STEP), w->dm[e * n + j]));
            note(rep, ROW_MASS, fabs(w->mass[e] - w->mass[(e % n) * n + e / n]));
        }
    }
}

static void check_adapted_basis(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    const int n = s->n, m = s->m, r = n - m;
    double a[NH_MAX_CON * NH_MAX_DIM], qq[NH_MAX_DIM];
    nh_adapted_basis(s, q, w->x, w->dx);
    s->type->constraint(s, q, a);
    for (int c = 0; c < m; ++c)
        for (int b = 0; b < r; ++b) {
            double dot = 0, size = 0;
            for (int i = 0; i < n; ++i) {
                dot += a[c * n + i] * w->x[i * r + b];
                size += fabs(a[c * n + i] * w->x[i * r + b]);
            }
            note(rep, ROW_KERNEL, fabs(dot) / (1.0 + size));
        }
    for (int j = 0; j < n; ++j) {
        memcpy(qq, q, sizeof(double) * n);
        qq[j] = q[j] + FD_STEP;
        nh_adapted_basis(s, qq, w->xp, w->dm);
        qq[j] = q[j] - FD_STEP;
        nh_adapted_basis(s, qq, w->xm, w->dm);
        for (int e = 0; e < n * r; ++e)
            note(rep, ROW_DX, fd_error((w->xp[e] - w->xm[e]) / (2 * FD_STEP), w->dx[e * n + j]));
    }
}

/* A declared pattern (adapted_basis_pattern): from arrays filled with NaN, adapted_basis must write every
 * entry of the pattern and leave every other entry alone. The row's error counts the offending entries
 * (tolerance 0). */
static void check_basis_pattern(const nh_system *s, const double *q, check_work *w, nh_check_report *rep)
{
    if (!s->type->adapted_basis_pattern)
        return;
    const int x_size = s->n * (s->n - s->m), dx_size = x_size * s->n;
    unsigned char *x_mask = calloc((size_t)(x_size + dx_size), 1);
    if (!x_mask) {
        note(rep, ROW_PATTERN, INFINITY);
        return;
    }
    unsigned char *dx_mask = x_mask + x_size;
    s->type->adapted_basis_pattern(s, x_mask, dx_mask);
    for (int k = 0; k < x_size; ++k)
        w->x[k] = NAN;
    for (int k = 0; k < dx_size; ++k)
        w->dx[k] = NAN;
    s->type->adapted_basis(s, q, w->x, w->dx);
    double offending = 0;
    for (int k = 0; k < x_size; ++k)
        offending += isnan(w->x[k]) == (x_mask[k] != 0);
    for (int k = 0; k < dx_size; ++k)
        offending += isnan(w->dx[k]) == (dx_mask[k] != 0);
    note(rep, ROW_PATTERN, offending);
    free(x_mask);
}

/* rho = X^T M v: rho' = (dX[v])^T M v + X^T (dM[v]) v + X^T M a along the index-1 field; q' = v. */
static void check_dstar_field(const nh_system *s, const double *q, const double *v, const double *acc, check_work *w,
                              nh_check_report *rep)
{
    const int n = s->n, r = n - s->m;
    double zdot[2 * NH_MAX_DIM], mv[NH_MAX_DIM], ma[NH_MAX_DIM], dmv[NH_MAX_DIM] = {0}, scale = 1.0;
    if (nh_dstar_vector_field(s, q, v, zdot)) {
        note(rep, ROW_DSTAR_FIELD, INFINITY);
        return;
    }
    nh_adapted_basis(s, q, w->x, w->dx);
    nh_mass_matrix(s, q, w->mass);
    if (nh_has_variable_mass(s))
        s->type->mass_matrix_derivative(s, q, w->dm);
    nh_matvec(n, n, w->mass, v, mv);
    nh_matvec(n, n, w->mass, acc, ma);
    for (int i = 0; i < n && nh_has_variable_mass(s); ++i)
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < n; ++j)
                dmv[i] += w->dm[(i * n + k) * n + j] * v[j] * v[k];
    for (int i = 0; i < n; ++i)
        scale = fmax(scale, fabs(mv[i] * v[i]) + fabs(ma[i]));
    for (int i = 0; i < n; ++i)   /* a reduced system has no configuration: q never moves */
        note(rep, ROW_DSTAR_FIELD, fabs(zdot[i] - (nh_is_reduced(s) ? 0.0 : v[i])) / scale);
    for (int b = 0; b < r; ++b) {
        double rhodot = 0;
        for (int i = 0; i < n; ++i) {
            double dxv = 0;
            for (int j = 0; j < n; ++j)
                dxv += w->dx[(i * r + b) * n + j] * v[j];
            rhodot += dxv * mv[i] + w->x[i * r + b] * (ma[i] + dmv[i]);
        }
        note(rep, ROW_DSTAR_FIELD, fabs(zdot[n + b] - rhodot) / scale);
    }
}

static void check_dstar_gradient(const nh_system *s, const double *q, nh_pcg32 *rng, nh_check_report *rep)
{
    const int dim = 2 * s->n - s->m;
    double z[2 * NH_MAX_DIM], g[2 * NH_MAX_DIM], zz[2 * NH_MAX_DIM], hp, hm, h0;
    double a[2 * NH_MAX_DIM], b[2 * NH_MAX_DIM], pa[2 * NH_MAX_DIM], pb[2 * NH_MAX_DIM];
    memcpy(z, q, sizeof(double) * s->n);
    for (int i = s->n; i < dim; ++i)
        z[i] = nh_pcg32_gaussian(rng);
    if (nh_dstar_hamiltonian(s, z, &h0, g)) {
        note(rep, ROW_DSTAR_GRAD, INFINITY);
        return;
    }
    for (int j = 0; j < dim; ++j) {
        memcpy(zz, z, sizeof(double) * dim);
        zz[j] = z[j] + FD_STEP;
        nh_dstar_hamiltonian(s, zz, &hp, NULL);
        zz[j] = z[j] - FD_STEP;
        nh_dstar_hamiltonian(s, zz, &hm, NULL);
        note(rep, ROW_DSTAR_GRAD, fd_error((hp - hm) / (2 * FD_STEP), g[j]));
    }
    for (int i = 0; i < dim; ++i) {
        a[i] = nh_pcg32_gaussian(rng);
        b[i] = nh_pcg32_gaussian(rng);
    }
    nh_dstar_pi_times(s, z, b, pb);
    nh_dstar_pi_times(s, z, a, pa);
    double ab = nh_dot(dim, a, pb), ba = nh_dot(dim, b, pa);
    note(rep, ROW_PI_SKEW, fabs(ab + ba) / (1 + fabs(ab)));
}

/* d/dt (A(q) v) and d/dt H along the index-1 field, by central differences along the flow. */
static void check_index1(const nh_system *s, const double *q, const double *v, const double *dq, const double *dv,
                         nh_check_report *rep)
{
    const int n = s->n;
    double qp[NH_MAX_DIM], vp[NH_MAX_DIM], qm[NH_MAX_DIM], vm[NH_MAX_DIM], rp[NH_MAX_CON], rm[NH_MAX_CON];
    double ap[NH_MAX_CON * NH_MAX_DIM], am[NH_MAX_CON * NH_MAX_DIM], scale = 1.0;
    for (int i = 0; i < n; ++i) {
        qp[i] = q[i] + FD_STEP * dq[i], vp[i] = v[i] + FD_STEP * dv[i];
        qm[i] = q[i] - FD_STEP * dq[i], vm[i] = v[i] - FD_STEP * dv[i];
        scale = fmax(scale, fabs(v[i]) * (fabs(dq[i]) + fabs(dv[i])));
    }
    s->type->constraint(s, qp, ap);
    s->type->constraint(s, qm, am);
    nh_matvec(s->m, n, ap, vp, rp);
    nh_matvec(s->m, n, am, vm, rm);
    for (int a = 0; a < s->m; ++a)
        note(rep, ROW_INDEX1, fabs(rp[a] - rm[a]) / (2 * FD_STEP) / scale);
    note(rep, ROW_INDEX1, fabs(nh_energy(s, qp, vp) - nh_energy(s, qm, vm)) / (2 * FD_STEP) / scale);
}

static int work_alloc(check_work *w, int n)
{
    const size_t n2 = (size_t)n * n, n3 = n2 * n;
    double *block = calloc(6 * n2 + 2 * n3 + 2 * n2, sizeof *block);
    if (!block)
        return 1;
    w->hess = block, w->jm = block + n2, w->x = block + 2 * n2, w->xp = block + 3 * n2, w->xm = block + 4 * n2;
    w->mass = block + 5 * n2, w->dx = block + 6 * n2, w->dm = w->dx + n3, w->mp = w->dm + n3, w->mm = w->mp + n2;
    return 0;
}

static void finish(nh_check_report *rep)
{
    static const double tolerance[ROW_COUNT] = {FD_TOL, FD_TOL,       FD_TOL,       FD_TOL, ROUNDOFF_TOL,
                                                FD_TOL, ROUNDOFF_TOL, FD_TOL,       0.0,    ROUNDOFF_TOL,
                                                FD_TOL, ROUNDOFF_TOL, FD_TOL,       ROUNDOFF_TOL,
                                                ROUNDOFF_TOL, NH_INITIAL_TOLERANCE};
    rep->n_rows = ROW_COUNT;
    rep->failed = 0;
    for (int i = 0; i < ROW_COUNT; ++i) {
        nh_check_row *r = &rep->rows[i];
        r->name = ROW_NAMES[i];
        r->tolerance = tolerance[i];
        r->passed = !r->applies || r->worst <= r->tolerance;
        rep->failed += !r->passed;
    }
}

int nh_system_check(const nh_system *s, int points, uint64_t seed, nh_check_report *report, nh_error *err)
{
    check_work w;
    memset(report, 0, sizeof *report);
    if (work_alloc(&w, s->n))
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for the checks of %s", s->type->name);
    nh_pcg32 rng;
    nh_pcg32_seed(&rng, seed, 54);
    const double shell = s->type->minimum_energy(s) + 3.0;
    int rc = NH_OK;
    for (int p = 0; p < points && rc == NH_OK; ++p) {
        double q[NH_MAX_DIM], v[NH_MAX_DIM], dq[NH_MAX_DIM], dv[NH_MAX_DIM];
        s->type->sample_configuration(s, &rng, q);
        check_potential_and_constraint(s, q, &w, report);
        check_affine_constraint(s, q, report);
        check_cvt_type(s, q, &w, report);
        check_mass_matrix(s, q, &w, report);
        check_coordinate_kinds(s, q, &w, report);
        if (s->type->adapted_basis) {
            check_adapted_basis(s, q, &w, report);
            check_basis_pattern(s, q, &w, report);
            check_dstar_gradient(s, q, &rng, report);
        }
        if (nh_energy_shell_sample(s, shell, &rng, q, v) || nh_index1_rhs(s, q, v, dq, dv, NULL)) {
            rc = nh_fail(err, NH_ERR_INPUT, "%s: could not draw a state on the energy shell H = %g", s->type->name,
                         shell);
            break;
        }
        check_index1(s, q, v, dq, dv, report);
        if (s->type->adapted_basis)
            check_dstar_field(s, q, v, dv, &w, report);
        report->points++;
    }
    check_presets(s, report);
    free(w.hess);
    finish(report);
    return rc;
}
