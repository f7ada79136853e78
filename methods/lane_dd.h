/* The dd lane kernel (included by lane_newton.h, whose batched Newton it uses): the discrete-derivative step of
 * dd.c with the Gonzalez discrete gradient of discrete_gradient.c, each lane's operations those of the scalar
 * step in its order. The scalar code's branches are selects here: the Gonzalez correction is skipped (its grad
 * and Newton matrix kept as they were) in a lane whose step is at round-off. Besides the formulas of
 * lane_newton.h's methods, the lane system gives V (ls_potential(par, q, out, L): L values) and d(A^T lam)/dq
 * (ls_jacobian_multiplier(par, q, lam, out, L): n x n x L, lam L values). */
#include "discrete_gradient.h"

/* The step's constants and arrays, all n x L unless named (taken from b->newton after the Newton's) */
typedef struct dd_lanes_step {
    const double *par;
    double h;
    const double *q0, *v0;
    double *potential0, *potential1;         /* V(q0), V(q1) (L each) */
    double *inv_d2, *coef;                   /* 1 / |q1 - q0|^2 and the correction's coefficient (L each) */
    lane_flag *tiny;                         /* L: the step is at round-off (no correction) */
    double *grad0;                           /* grad V(q0) (the residual's scale) */
    double *q1, *mid, *vbar;                 /* dd_points: q1, the constraint's midpoint, the mean velocity */
    double *centre, *delta;                  /* the discrete gradient's midpoint (q0 + q1) / 2 and q1 - q0 */
    double *grad_centre, *grad;              /* grad V(centre), grad_bar V */
    double *g1, *row, *a, *dav;              /* grad V(q1), the correction's row, A(mid), d(A vbar)/dq */
    double *hess, *datl;                     /* Hess V(centre), d(A^T lam)/dq (n x n) */
} dd_lanes_step;

LANE_INLINE void dd_lanes_arrays(nh_lane_batch *b, dd_lanes_step *c, newton_lanes *nw, int L)
{
    double *next;
    newton_lanes_arrays(b, nw, &next, L);
    double **scalars[] = {&c->potential0, &c->potential1, &c->inv_d2, &c->coef};
    for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; ++k)
        *scalars[k] = take_newton(&next, 1, L);
    c->tiny = (lane_flag *)take_newton(&next, 1, L);
    double **vectors[] = {&c->grad0, &c->q1, &c->mid, &c->vbar, &c->centre, &c->delta,
                          &c->grad_centre, &c->grad, &c->g1, &c->row, &c->a, &c->dav};
    for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; ++k)
        *vectors[k] = take_newton(&next, N, L);
    c->hess = take_newton(&next, N * N, L);
    c->datl = take_newton(&next, N * N, L);
}

/* dd_points: vbar = (v0 + v1) / 2, q1 = q0 + h vbar, mid = q0 + h/2 vbar */
LANE_INLINE void dd_points_lanes(const dd_lanes_step *c, const double *restrict v1, int L)
{
    for (int i = 0; i < N; ++i)
        LANES {
            const double vbar = 0.5 * (AT(c->v0, i) + AT(v1, i));
            AT(c->vbar, i) = vbar;
            AT(c->q1, i) = AT(c->q0, i) + c->h * vbar;
            AT(c->mid, i) = AT(c->q0, i) + 0.5 * c->h * vbar;
        }
}

/* nh_gonzalez_gradient(q0, V(q0), q1) into c->grad, from grad V(centre) (kept in c->grad_centre) */
LANE_INLINE void dd_gonzalez_lanes(const dd_lanes_step *c, int L)
{
    for (int i = 0; i < N; ++i)
        LANES {
            AT(c->centre, i) = 0.5 * (AT(c->q0, i) + AT(c->q1, i));
            AT(c->delta, i) = AT(c->q1, i) - AT(c->q0, i);
        }
    ls_gradient(c->par, c->centre, c->grad_centre, L);
    ls_potential(c->par, c->q1, c->potential1, L);
    LANES {
        double d2 = 0.0, centre2 = 0.0, along = 0.0;
        for (int i = 0; i < N; ++i)
            d2 += AT(c->delta, i) * AT(c->delta, i);
        for (int i = 0; i < N; ++i)
            centre2 += AT(c->centre, i) * AT(c->centre, i);
        for (int i = 0; i < N; ++i)
            along += AT(c->grad_centre, i) * AT(c->delta, i);
        c->tiny[l] = d2 <= NH_GONZALEZ_TINY_STEP2 * (1.0 + centre2);
        c->inv_d2[l] = 1.0 / d2;
        c->coef[l] = (c->potential1[l] - c->potential0[l] - along) * c->inv_d2[l];
    }
    for (int i = 0; i < N; ++i)
        LANES {
            const double kept = AT(c->grad_centre, i), corrected = kept + c->coef[l] * AT(c->delta, i);
            AT(c->grad, i) = c->tiny[l] ? kept : corrected;
        }
}

/* What the discrete gradient's derivative d/dq1 is made of, at the points of dd_gonzalez_lanes: Hess V(centre)
 * into c->hess and nh_gonzalez_correct_jacobian's row [grad V(q1) - grad V(centre) - Hess delta / 2 - 2 coef
 * delta] / |delta|^2 into c->row; dd_evaluate_lanes forms the derivative entry by entry in the Newton matrix's
 * loop */
LANE_INLINE void dd_gonzalez_jacobian_lanes(const dd_lanes_step *c, int L)
{
    ls_hessian(c->par, c->centre, c->hess, L);
    ls_gradient(c->par, c->q1, c->g1, L);
    for (int j = 0; j < N; ++j)   /* Hess delta (nh_matvec), then the row */
        LANES {
            double hd = 0.0;
            for (int i = 0; i < N; ++i)
                hd += AT(c->hess, j * N + i) * AT(c->delta, i);
            AT(c->row, j) = (AT(c->g1, j) - AT(c->grad_centre, j) - 0.5 * hd - 2.0 * c->coef[l] * AT(c->delta, j)) *
                            c->inv_d2[l];
        }
}

/* dd_evaluate at every lane's x: the residual into r (r not NULL) and the Newton matrix into jac (not NULL). The
 * matrix is asked for only at the x of the residual just evaluated (newton_evaluate_fn), so that the points, the
 * discrete gradient's parts and A(mid) are those of that call. */
LANE_INLINE void dd_evaluate_lanes(const void *method, const double *restrict x, double *restrict r,
                                   double *restrict jac, int L)
{
    const dd_lanes_step *c = method;
    const double h = c->h;
    const double *restrict lam = x + N * L;
    if (r) {
        dd_points_lanes(c, x, L);
        dd_gonzalez_lanes(c, L);
        ls_constraint(c->par, c->mid, c->a, L);
        for (int i = 0; i < N; ++i)
            LANES AT(r, i) = (AT(x, i) - AT(c->v0, i)) + h * (AT(c->grad, i) - AT(c->a, i) * lam[l]);
        LANES {
            double sum = 0.0;
            for (int i = 0; i < N; ++i)
                sum += AT(c->a, i) * AT(c->vbar, i);
            AT(r, N) = sum;
        }
    }
    if (!jac)
        return;
    const double grad_weight = 0.5 * h * h, force_weight = 0.25 * h * h, velocity_weight = 0.25 * h;
    dd_gonzalez_jacobian_lanes(c, L);
    ls_jacobian_multiplier(c->par, c->mid, lam, c->datl, L);
    ls_jacobian_velocity(c->par, c->mid, c->vbar, c->dav, L);
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j)
            LANES {   /* d grad_bar V / dq1: Hess / 2, + delta_i row_j and + coef on the diagonal where corrected */
                const double half = 0.5 * AT(c->hess, i * N + j);
                const double off_diagonal = half + AT(c->delta, i) * AT(c->row, j);
                const double diagonal = off_diagonal + c->coef[l];
                const double corrected = i == j ? diagonal : off_diagonal;
                const double dgrad = c->tiny[l] ? half : corrected;
                AT(jac, i * DIM + j) = grad_weight * dgrad - force_weight * AT(c->datl, i * N + j);
            }
        LANES {
            AT(jac, i * DIM + i) += 1.0;
            AT(jac, i * DIM + N) = -h * AT(c->a, i);
        }
    }
    for (int j = 0; j < N; ++j)
        LANES AT(jac, N * DIM + j) = 0.5 * AT(c->a, j) + velocity_weight * AT(c->dav, j);
    LANES AT(jac, N * DIM + N) = 0.0;
}

/* fmax(a, b) for dd_scale's arguments, without a call: a NaN argument gives the other, else the larger. Neither is
 * negative and a zero only ever meets a positive value (the step's floor, the momentum scale), so that a tie is
 * of two equal positive values, whichever is returned. */
LANE_INLINE double dd_fmax(double a, double b)
{
    return a != a ? b : b > a ? b : a;
}

/* dd_scale at each lane's guess x: the momentum balance's scale, or the discrete gradient's correction's
 * rounding where larger */
LANE_INLINE void dd_scale_lanes(const dd_lanes_step *c, const double *restrict x, double *restrict scale, int L)
{
    const double h = c->h;
    double momentum[ML];
    momentum_scale_lanes(h, c->v0, c->grad0, momentum, L);
    dd_points_lanes(c, x, L);
    ls_potential(c->par, c->q1, c->potential1, L);
    LANES {
        double vbar2 = 0.0, mid2 = 0.0;
        for (int i = 0; i < N; ++i)
            vbar2 += AT(c->vbar, i) * AT(c->vbar, i);
        for (int i = 0; i < N; ++i)
            mid2 += AT(c->mid, i) * AT(c->mid, i);
        const double step = fabs(h) * sqrt(vbar2);
        const double floor_step = 1e-12 * sqrt(1.0 + mid2);
        const double potentials = fabs(c->potential0[l]) + fabs(c->potential1[l]);
        const double correction = fabs(h) * potentials / dd_fmax(step, floor_step);
        scale[l] = dd_fmax(momentum[l], correction);
    }
}

LANE_INLINE void dd_lanes(nh_lane_batch *b, double h, int L)
{
    dd_lanes_step c = {.par = b->system_par, .h = h, .q0 = b->q, .v0 = b->v};
    newton_lanes nw = {.evaluate = dd_evaluate_lanes, .method = &c};
    dd_lanes_arrays(b, &c, &nw, L);
    lane_flag phase[ML];
    long iterations[ML];
    if (!newton_lanes_begin(b, h, phase, iterations, L))
        return;
    double scale[ML];
    ls_potential(c.par, c.q0, c.potential0, L);
    ls_gradient(c.par, c.q0, c.grad0, L);
    newton_lanes_guess(b, nw.x, L);
    dd_scale_lanes(&c, nw.x, scale, L);
    newton_solve_lanes(&nw, scale, phase, iterations, L);
    lane_flag done[ML];
    LANES done[l] = phase[l] == SOLVE_DONE;
    for (int i = 0; i < N; ++i)
        LANES {
            const double v1 = AT(nw.best, i), q = AT(b->q, i), v = AT(b->v, i);
            const double q1 = q + h * (0.5 * (v + v1));
            AT(b->q, i) = done[l] ? q1 : q;
            AT(b->v, i) = done[l] ? v1 : v;
        }
    newton_lanes_end(b, &nw, done, phase, iterations, h, L);
}
