/* The analytic Newton matrix of the D* steps (Celledoni et al. 2019, eq. 14) with the AVF, Gonzalez and Itoh-Abe
 * discrete gradients, for systems with a constant diagonal mass M that are not reduced:
 *   d res / d z1 = I/h - 1/2 d(Pi(z) G)/dz |_(z = mid, G = grad_bar H) - Pi(mid) d grad_bar H / d z1,
 * where d grad_bar H / d z1 is sum_k w_k c_k Hess H(z0 + c_k delta) for AVF and, for Gonzalez,
 * 1/2 Hess H(mid) plus the derivative of the correction (nh_gonzalez_correct_jacobian); Itoh-Abe's is
 * built row by row from grad H along its walk (itoh_abe_jacobian). AVF's sums
 * (and the G of dPi) use at most DSTAR_MATRIX_NODES Gauss-Legendre points (dstar_internal.h).
 *
 * At a frame (X, dX, y = g^-1 rho, v = X y, p = M v), with u_k = dX/dq_k y, S_k = dX/dq_k^T p + X^T M u_k
 * (= (dg/dq_k) y), ydot_k = dy/dq_k = -g^-1 S_k and pdot_k = dp/dq_k = M (u_k + X ydot_k):
 *   Hess H = [[V_ik - u_i^T M u_k - ydot_i . S_k - p^T (d2X/dq_i dq_k) y,  ydot_i^T],
 *             [ydot_k,                                                     g^-1   ]]
 *   d(Pi G)/dq_k = [dX/dq_k G_rho ; -dX/dq_k^T G_q + (K_k - K_k^T) G_rho],  d(Pi G)/drho_c = [0 ; (L_c - L_c^T) G_rho]
 * with K_k = dD/dq_k = D(pdot_k) + E_k + F_k, L_c = D(M X g^-1 e_c), D(pi)_ab = sum pi_j dX_a^j/dq_i X_b^i
 * (the structure matrix with p replaced by pi), E_k,ab = sum p_j d2X_a^j/dq_i dq_k X_b^i and
 * F_k,ab = sum p_j dX_a^j/dq_i dX_b^i/dq_k. The second derivatives of X are forward differences of dX
 * (step NH_FD_STEP), read at the listed entries of dX: they enter only the Newton matrix, never the
 * residual, so a step still converges to round-off; an affine basis (the quartic's) gives exact zeros.
 * Everything runs over the nonzero lists of X and dX, in the stepper's workspace. */
#include "discrete_gradient.h"
#include "dstar_internal.h"
#include "nhens/linalg.h"
#include "nhens/solver.h"

#include <math.h>
#include <string.h>

int nh_dstar_has_analytic_jacobian(const dstar_step *c)
{
    const nh_system *s = c->sys;
    return !nh_has_variable_mass(s) && !nh_is_reduced(s);
}

/* The q_k that dX depends on (listed in dX's pattern), ascending: u, s, ydot and pdot vanish in the other
 * rows, and every term of the matrix that reads such a row is an exact zero, so it is skipped. */
typedef struct active_rows {
    int count, k[N];
} active_rows;

static void find_active_rows(const dstar_step *c, const dstar_frame *f, active_rows *rows)
{
    unsigned char listed[N] = {0};
    for (int e = 0; e < f->dx_count; ++e)
        listed[c->w->dx_nz.entry[e].i] = 1;
    rows->count = 0;
    for (int k = 0; k < c->sys->n; ++k)
        if (listed[k])
            rows->k[rows->count++] = k;
}

/* u, s, ydot, pdot of the frame (see the top of the file), one row per q_k (zero outside the active
 * rows); and ginv = g^-1 from g's factored blocks, after which each ydot_k = -g^-1 S_k is a product: no
 * latency-bound triangular solves per k. */
static void frame_motion(const dstar_step *c, const dstar_frame *f, const active_rows *rows)
{
    const nh_system *sys = c->sys;
    const int n = sys->n, r = c->r;
    dstar_work *w = c->w;
    const pattern_entry *dx = w->dx_nz.entry, *x = w->x_nz.entry;
    nh_dstar_inverse_metric(c, w->ginv);
    memset(w->u, 0, (size_t)n * n * sizeof *w->u);
    memset(w->s, 0, (size_t)n * r * sizeof *w->s);
    memset(w->ydot, 0, (size_t)n * r * sizeof *w->ydot);
    memset(w->pdot, 0, (size_t)n * n * sizeof *w->pdot);
    for (int e = 0; e < f->dx_count; ++e) {
        const double value = w->dx[dx[e].k];
        w->u[dx[e].i * n + dx[e].j] += value * f->y[dx[e].a];
        w->s[dx[e].i * r + dx[e].a] += value * f->p[dx[e].j];
    }
    for (int row = 0; row < rows->count; ++row) {
        const int k = rows->k[row];
        const double *uk = w->u + k * n;
        double *sk = w->s + k * r, *yk = w->ydot + k * r, *pk = w->pdot + k * n;
        for (int e = 0; e < f->x_count; ++e)
            sk[x[e].a] += w->x[x[e].k] * sys->mass[x[e].i] * uk[x[e].i];
        for (int a = 0; a < r; ++a)
            yk[a] = -nh_dot(r, w->ginv + a * r, sk);
        memcpy(pk, uk, (size_t)n * sizeof *pk);
        for (int e = 0; e < f->x_count; ++e)
            pk[x[e].i] += w->x[x[e].k] * yk[x[e].a];
        for (int i = 0; i < n; ++i)
            pk[i] *= sys->mass[i];
    }
}

/* dd[e] = d(dX)/dq_k at the listed entries e of the frame's dX, by a forward difference. */
static int second_derivative_slice(const dstar_step *c, const dstar_frame *f, int k, double *dd)
{
    const int n = c->sys->n;
    const pattern_entry *dx = c->w->dx_nz.entry;
    double q[N];
    memcpy(q, f->z, (size_t)n * sizeof *q);
    q[k] += NH_FD_STEP * fmax(1.0, fabs(q[k]));
    const double step = q[k] - f->z[k];
    if (nh_dstar_basis_at(c, q, c->w->x_shift, c->w->dx_shift))
        return 1;
    for (int e = 0; e < f->dx_count; ++e)
        dd[e] = (c->w->dx_shift[dx[e].k] - c->w->dx[dx[e].k]) / step;
    return 0;
}

/* Terms D_ab += t X_b^i (all b) of a structure-like matrix D, applied as (D - D^T) G_rho to one column
 * `out` (stride `stride`, r entries): out_a += t (X G_rho)_i, out_b -= t G_a X_b^i. The second part is
 * gathered per row i of X (acc_i += t G_a) and applied once per column, over X's listed entries. */
static void add_skew_term(int a, int i, double t, const double *g_rho, const double *x_g, double *out, int stride,
                          double *acc)
{
    out[a * stride] += t * x_g[i];
    acc[i] += t * g_rho[a];
}

/* out_b -= sum_i acc_i X_b^i for the terms gathered in acc, which is cleared for the next column. */
static void finish_skew_column(const dstar_step *c, const dstar_frame *f, double *acc, double *out, int stride)
{
    const pattern_entry *x = c->w->x_nz.entry;
    for (int e = 0; e < f->x_count; ++e)
        out[x[e].a * stride] -= acc[x[e].i] * c->w->x[x[e].k];
    memset(acc, 0, (size_t)c->sys->n * sizeof *acc);
}

/* The terms with second derivatives of X, one slice d(dX)/dq_k at a time: hqq (n n, when not NULL)
 * -= p^T (d2X/dq_i dq_k) y into column k, and (when g is not NULL) the E_k term of d(Pi G)/dq_k into
 * column k of jpi's rho rows. */
static int add_second_derivative_terms(const dstar_step *c, const dstar_frame *f, const double *g, double *hqq,
                                       const active_rows *rows)
{
    const int n = c->sys->n, dim = c->dim;
    const pattern_entry *dx = c->w->dx_nz.entry;
    double *dd = c->w->dd, x_g[N], acc[N] = {0};
    /* Slices only along the active rows. With a declared pattern X does not depend on the other q_k, nor
     * does dX: their slices are exact zeros. With a scanned pattern (a QR basis, a function of A(q)) dX/dq_k
     * has been zero at every frame so far, which for the systems here is structural (the quartic's A reads
     * only w): the slice is again zero, and were it not, only the Newton matrix would be inexact, not
     * the residual a step converges to. */
    if (g)
        nh_dstar_basis_times(c, f, g + n, x_g);
    for (int row = 0; row < rows->count && f->dx_count; ++row) {
        const int k = rows->k[row];
        if (second_derivative_slice(c, f, k, dd))
            return 1;
        int gathered = 0;   /* an affine basis (the quartic's) has only zero slices: nothing to finish */
        for (int e = 0; e < f->dx_count; ++e) {
            const double t = f->p[dx[e].j] * dd[e];
            if (hqq)
                hqq[dx[e].i * n + k] -= t * f->y[dx[e].a];
            if (g && t != 0.0) {
                add_skew_term(dx[e].a, dx[e].i, t, g + n, x_g, c->w->jpi + n * dim + k, dim, acc);
                gathered = 1;
            }
        }
        if (gathered)
            finish_skew_column(c, f, acc, c->w->jpi + n * dim + k, dim);
    }
    return 0;
}

/* hess (dim dim) = Hess H at the frame (motion computed), from hqq = V_ik - p^T (d2X/dq_i dq_k) y */
static void assemble_hessian(const dstar_step *c, const double *hqq, const active_rows *rows, double *hess)
{
    const int n = c->sys->n, r = c->r, dim = c->dim;
    const dstar_work *w = c->w;
    for (int i = 0; i < n; ++i) {
        const double *yi = w->ydot + i * r;
        memcpy(hess + i * dim, hqq + i * n, (size_t)n * sizeof *hess);
        for (int a = 0; a < r; ++a)
            hess[i * dim + n + a] = hess[(n + a) * dim + i] = yi[a];
    }
    for (int row_i = 0; row_i < rows->count; ++row_i) {
        const int i = rows->k[row_i];
        const double *ui = w->u + i * n, *yi = w->ydot + i * r;
        for (int row_k = 0; row_k < rows->count; ++row_k) {
            const int k = rows->k[row_k];
            const double *uk = w->u + k * n, *sk = w->s + k * r;
            double value = hqq[i * n + k];
            for (int j = 0; j < n; ++j)
                value -= c->sys->mass[j] * ui[j] * uk[j];
            for (int a = 0; a < r; ++a)
                value -= yi[a] * sk[a];
            hess[i * dim + k] = value;
        }
    }
    for (int a = 0; a < r; ++a)
        memcpy(hess + (n + a) * dim + n, w->ginv + a * r, (size_t)r * sizeof *hess);
}

/* jpi += d(Pi(z) G)/dz at the frame (motion computed) except the E_k terms: the q rows and the terms
 * of -dX^T G_q, D(pdot_k), F_k and L_c (see the top of the file). jpi's q rows hold only dX/dq_k G_rho
 * here, which the F_k term reads. */
static void add_pi_derivative(const dstar_step *c, const dstar_frame *f, const double *g, const active_rows *rows)
{
    const int n = c->sys->n, r = c->r, dim = c->dim;
    const dstar_work *w = c->w;
    const pattern_entry *dx = w->dx_nz.entry;
    const double *g_rho = g + n;
    double *jpi = w->jpi, *rho_rows = jpi + n * dim, x_g[N], p_g[N] = {0}, pi[N], acc[N] = {0};
    nh_dstar_basis_times(c, f, g_rho, x_g);
    for (int e = 0; e < f->dx_count; ++e) {
        const double value = w->dx[dx[e].k];
        jpi[dx[e].j * dim + dx[e].i] += value * g_rho[dx[e].a];
        rho_rows[dx[e].a * dim + dx[e].i] -= value * g[dx[e].j];
        p_g[dx[e].i] += f->p[dx[e].j] * value * g_rho[dx[e].a];
    }
    for (int row = 0; row < rows->count; ++row) {   /* pdot_k and dX/dq_k G_rho vanish in the other rows */
        const int k = rows->k[row];
        for (int e = 0; e < f->dx_count; ++e) {
            const double value = w->dx[dx[e].k];
            add_skew_term(dx[e].a, dx[e].i, w->pdot[k * n + dx[e].j] * value, g_rho, x_g, rho_rows + k, dim, acc);
            rho_rows[dx[e].a * dim + k] += f->p[dx[e].j] * value * jpi[dx[e].i * dim + k];   /* F_k G */
        }
        finish_skew_column(c, f, acc, rho_rows + k, dim);
    }
    for (int e = 0; e < f->dx_count; ++e)   /* -F_k^T G */
        rho_rows[dx[e].a * dim + dx[e].i] -= p_g[dx[e].j] * w->dx[dx[e].k];
    for (int col = 0; col < r; ++col) {
        nh_dstar_basis_times(c, f, w->ginv + col * r, pi);
        for (int i = 0; i < n; ++i)
            pi[i] *= c->sys->mass[i];
        for (int e = 0; e < f->dx_count; ++e)
            add_skew_term(dx[e].a, dx[e].i, pi[dx[e].j] * w->dx[dx[e].k], g_rho, x_g, rho_rows + n + col, dim, acc);
        finish_skew_column(c, f, acc, rho_rows + n + col, dim);
    }
}

/* At the frame f (computed with dX): Hess H into w->hess when with_hessian, and d(Pi(z) G)/dz into
 * w->jpi when g is not NULL; one pass of second-derivative slices serves both. */
static int frame_second_order(const dstar_step *c, const dstar_frame *f, int with_hessian, const double *g)
{
    dstar_work *w = c->w;
    double *hqq = with_hessian ? w->hqq : NULL;
    if (hqq)
        c->sys->type->potential_hessian(c->sys, f->z, hqq);
    if (g)
        memset(w->jpi, 0, (size_t)c->dim * c->dim * sizeof *w->jpi);
    active_rows rows;
    find_active_rows(c, f, &rows);
    frame_motion(c, f, &rows);
    if (add_second_derivative_terms(c, f, g, hqq, &rows))
        return 1;
    if (hqq)
        assemble_hessian(c, hqq, &rows, w->hess);
    if (g)
        add_pi_derivative(c, f, g, &rows);
    return 0;
}

/* jac = I/h - 1/2 jpi - Pi(mid) dgrad, at the midpoint frame f */
static void assemble_jacobian(const dstar_step *c, const dstar_frame *f, double *jac)
{
    const int dim = c->dim;
    const dstar_work *w = c->w;
    nh_dstar_structure_matrix(c, f, w->d);
    nh_dstar_apply_pi_columns(c, f, w->d, w->dgrad, dim, jac);
    double diagonal[Z];
    for (int i = 0; i < dim; ++i)
        diagonal[i] = jac[i * dim + i];
    for (int i = 0; i < dim * dim; ++i)   /* (0 - x) - y off the diagonal is -x - y exactly */
        jac[i] = -0.5 * w->jpi[i] - jac[i];
    for (int i = 0; i < dim; ++i)
        jac[i * dim + i] = (1.0 / c->h - 0.5 * w->jpi[i * dim + i]) - diagonal[i];
}

/* AVF: grad_bar H and its derivative sum_k w_k c_k Hess H(z0 + c_k delta), both by the matrix nodes */
static int avf_jacobian(const dstar_step *c, const double *z1, const double *mid, double *jac)
{
    const dstar_method *m = c->method;
    const int dim = c->dim;
    double *dgrad = c->w->dgrad, point[Z], grad[Z], g[Z] = {0};
    dstar_frame f;
    memset(dgrad, 0, (size_t)dim * dim * sizeof *dgrad);
    for (int k = 0; k < m->matrix_nodes; ++k) {
        const double node = m->matrix_node[k], weight = m->matrix_weight[k];
        for (int i = 0; i < dim; ++i)
            point[i] = c->z0[i] + node * (z1[i] - c->z0[i]);
        if (nh_dstar_frame_at(c, point, 1, &f) || frame_second_order(c, &f, 1, NULL))
            return 1;
        nh_dstar_frame_gradient(c, &f, grad);
        for (int i = 0; i < dim; ++i)
            g[i] += weight * grad[i];
        for (int i = 0; i < dim * dim; ++i)
            dgrad[i] += weight * node * c->w->hess[i];
    }
    if (nh_dstar_frame_at(c, mid, 1, &f) || frame_second_order(c, &f, 0, g))
        return 1;
    assemble_jacobian(c, &f, jac);
    return 0;
}

static int gonzalez_jacobian(const dstar_step *c, const double *z1, const double *mid, double *jac, double *res)
{
    const int dim = c->dim;
    double *dgrad = c->w->dgrad, delta[Z], grad1[Z], grad_mid[Z], g[Z], hess_delta[Z], coef;
    dstar_frame f;
    for (int i = 0; i < dim; ++i)
        delta[i] = z1[i] - c->z0[i];
    if (nh_dstar_frame_at(c, z1, 1, &f))
        return 1;
    const double h1 = nh_dstar_frame_energy(c, &f);
    nh_dstar_frame_gradient(c, &f, grad1);
    if (nh_dstar_frame_at(c, mid, 1, &f))
        return 1;
    nh_dstar_frame_gradient(c, &f, grad_mid);
    memcpy(g, grad_mid, (size_t)dim * sizeof *g);
    const int corrected = nh_gonzalez_correct(dim, c->energy0, h1, delta, nh_dot(dim, mid, mid), g, &coef);
    if (frame_second_order(c, &f, 1, g))
        return 1;
    for (int i = 0; i < dim * dim; ++i)
        dgrad[i] = 0.5 * c->w->hess[i];
    if (corrected) {
        nh_matvec(dim, dim, c->w->hess, delta, hess_delta);
        nh_gonzalez_correct_jacobian(dim, delta, coef, grad1, grad_mid, hess_delta, dgrad);
    }
    assemble_jacobian(c, &f, jac);
    if (res)   /* g is the residual's discrete gradient (the same H(z1), grad H(mid) and correction) */
        nh_dstar_residual_at(c, z1, &f, g, res);
    return 0;
}

/* B = d(g^-1)/dq_k = -g^-1 (dg/dq_k) g^-1 (its lower triangle, r r) at the frame (motion computed: ginv
 * set). Each listed entry dX_a^j/dq_k adds v (e_a X^j + X^j e_a^T), v = dX_a^j/dq_k M_j (X^j: row j of X),
 * to dg/dq_k, so B is a sum of rank-two terms -v (u w^T + w u^T) with u = g^-1 e_a and w = g^-1 X^j. */
static void inverse_metric_derivative(const dstar_step *c, const dstar_frame *f, int k, double *b_k)
{
    const int r = c->r;
    const dstar_work *w = c->w;
    const pattern_entry *dx = w->dx_nz.entry;
    memset(b_k, 0, (size_t)r * r * sizeof *b_k);
    for (int e = 0; e < f->dx_count; ++e) {
        if (dx[e].i != k)
            continue;
        const double value = w->dx[dx[e].k] * c->sys->mass[dx[e].j], *x_row = w->x + dx[e].j * r;
        const double *u = w->ginv + dx[e].a * r;   /* g^-1 is symmetric: row a is column a */
        double ginv_x[N];
        for (int a = 0; a < r; ++a)
            ginv_x[a] = nh_dot(r, w->ginv + a * r, x_row);
        for (int a = 0; a < r; ++a)
            for (int b = 0; b <= a; ++b)
                b_k[a * r + b] -= value * (u[a] * ginv_x[b] + ginv_x[a] * u[b]);
    }
}

/* Itoh-Abe's rows n + a of dgrad (d grad_bar H / d z1), from the frame f at (q1, rho0) with its motion:
 * G_{n+a} = (g^-1 rho^(a))_a + 1/2 delta_a (g^-1)_aa at q1, rho^(a) = rho0 with the components before a
 * moved (dstar.c), so d/drho1_b = (g^-1)_ab (b < a), 1/2 (g^-1)_aa (b = a), 0 (b > a), and
 * d/dq_k = (B_k rho^(a))_a + 1/2 delta_a (B_k)_aa with B_k = d(g^-1)/dq_k and B_k rho0 = ydot_k. */
static void itoh_abe_momentum_rows(const dstar_step *c, const dstar_frame *f, const double *z1,
                                   const active_rows *rows, double *dgrad)
{
    const int n = c->sys->n, r = c->r, dim = c->dim;
    const dstar_work *w = c->w;
    double delta[N];
    for (int a = 0; a < r; ++a) {
        double *row = dgrad + (n + a) * dim;
        delta[a] = z1[n + a] - c->z0[n + a];
        for (int b = 0; b < a; ++b)
            row[n + b] = w->ginv[a * r + b];
        row[n + a] = 0.5 * w->ginv[a * r + a];
    }
    for (int row = 0; row < rows->count; ++row) {   /* B_k = 0 in the other rows */
        const int k = rows->k[row];
        inverse_metric_derivative(c, f, k, w->dmetric);
        for (int a = 0; a < r; ++a) {
            const double *b_k = w->dmetric + a * r;
            double value = w->ydot[k * r + a] + 0.5 * delta[a] * b_k[a];
            for (int b = 0; b < a; ++b)
                value += delta[b] * b_k[b];
            dgrad[(n + a) * dim + k] = value;
        }
    }
}

/* Itoh-Abe's rows i < n of dgrad, from grad H at the walk's points (w->grads row i: after q_i moved) and
 * G: with G_i the increment quotient (13) or the exact mean of dH/dq_i over the segment (both have these
 * derivatives), dG_i/dz1_j = [d_j H(after q_i moved) - d_j H(before)] / delta_i for j < i,
 * [d_i H(after) - G_i] / delta_i for j = i, and 0 for j > i. Below the difference step the quotients
 * would be rounding: the row is then d/dq_i of grad H at the point after q_i moved, half on the
 * diagonal, by a forward difference (the same rows to O(delta_i)). */
static int itoh_abe_position_rows(const dstar_step *c, const double *z1, const double *g, double *dgrad)
{
    const int n = c->sys->n, dim = c->dim;
    const double *grads = c->w->grads;
    for (int i = 0; i < n; ++i) {
        const double delta = z1[i] - c->z0[i], *after = grads + i * dim;
        const double *before = i > 0 ? after - dim : NULL;   /* read only for j < i */
        double *row = dgrad + i * dim, shifted[Z], point[Z];
        if (fabs(delta) >= NH_FD_STEP * fmax(1.0, fabs(z1[i]))) {
            for (int j = 0; j < i; ++j)
                row[j] = (after[j] - before[j]) / delta;
            row[i] = (after[i] - g[i]) / delta;
            continue;
        }
        memcpy(point, z1, (size_t)(i + 1) * sizeof *point);
        memcpy(point + i + 1, c->z0 + i + 1, (size_t)(dim - i - 1) * sizeof *point);
        point[i] += NH_FD_STEP * fmax(1.0, fabs(z1[i]));
        const double step = point[i] - z1[i];
        dstar_frame f;
        if (nh_dstar_frame_at(c, point, 1, &f))
            return 1;
        nh_dstar_frame_gradient(c, &f, shifted);
        for (int j = 0; j < i; ++j)
            row[j] = (shifted[j] - after[j]) / step;
        row[i] = 0.5 * (shifted[i] - after[i]) / step;
    }
    return 0;
}

/* Itoh-Abe: its gradient G with grad H along the walk, dgrad row by row (above), then d(Pi G)/dz at the
 * midpoint frame as for the others. */
static int itoh_abe_jacobian(const dstar_step *c, const double *z1, const double *mid, double *jac, double *res)
{
    dstar_work *w = c->w;
    double point[Z], g[Z];
    dstar_frame f;
    active_rows rows;
    memset(w->dgrad, 0, (size_t)c->dim * c->dim * sizeof *w->dgrad);
    if (nh_dstar_itoh_abe_gradient(c, z1, point, g, w->grads, &f))
        return 1;
    find_active_rows(c, &f, &rows);
    frame_motion(c, &f, &rows);
    itoh_abe_momentum_rows(c, &f, z1, &rows, w->dgrad);
    if (itoh_abe_position_rows(c, z1, g, w->dgrad) || nh_dstar_frame_at(c, mid, 1, &f) ||
        frame_second_order(c, &f, 0, g))
        return 1;
    assemble_jacobian(c, &f, jac);
    if (res)   /* g is the residual's walk (with or without grads, the same frames' energies) */
        nh_dstar_residual_at(c, z1, &f, g, res);
    return 0;
}

int nh_dstar_shares_residual(const dstar_step *c)
{
    return nh_dstar_has_analytic_jacobian(c) && c->method->gradient != DG_AVF;
}

int nh_dstar_analytic_jacobian(const dstar_step *c, const double *z1, double *jac, double *res)
{
    double mid[Z];
    for (int i = 0; i < c->dim; ++i)
        mid[i] = 0.5 * (c->z0[i] + z1[i]);
    switch (c->method->gradient) {
    case DG_AVF:   /* its matrix's Gauss points are not the residual's: res is not given */
        return res != NULL || avf_jacobian(c, z1, mid, jac);
    case DG_ITOH_ABE:
        return itoh_abe_jacobian(c, z1, mid, jac, res);
    case DG_GONZALEZ:
        break;
    }
    return gonzalez_jacobian(c, z1, mid, jac, res);
}
