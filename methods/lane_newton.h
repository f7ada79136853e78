/* The implicit lane kernels (included by lane_steps.h, whose AT, LANES, N and ML it uses): the built-in Newton
 * (solvers/solver_newton.c) batched over the lanes, and over it DLA^alpha (dla.c, and idla with alpha = 1/2) here
 * and dd (lane_dd.h). Each lane performs the scalar step's operations in its order: the guess from its own step
 * history (common.h's nh_history_quadratic), the method's residual and Newton matrix, LU with partial pivoting
 * (base/linalg.c: the same pivot in each lane, chosen and swapped by selects), Newton's iterations with the
 * convergence rule of solver.h and the end of nh_solver_finish. A lane that has converged is frozen while the
 * others iterate: its values are only ever replaced by selects that keep them.
 *
 * The rare paths go to the scalar stepper (nh_lane_scalar_step), which gives the same bits: a step without
 * three solutions of the same h in the lane's history (the first steps after a load, where the scalar guess is
 * explicit Euler on the index-1 ODE), and a lane whose solve fails (the scalar step then starts again from that
 * guess). The batch then counts nothing for the lane: the scalar step counts its solves and iterations. */

#include "nhens/solver.h"

enum { DIM = N + 1 };   /* the unknowns (v1, lam): one constraint */

/* ---- LU with partial pivoting lane by lane (linalg.c's lu_factor_size, lu_solve_size) ------------------ */

/* Whether some lane's pivot at column k is row i (a row swap that only moves values: skipping it where no lane
 * swaps changes no bit) */
LANE_INLINE int pivot_in_some_lane(const lane_flag *restrict pivot, int k, int i, int L)
{
    lane_flag some = 0;
    LANES some |= AT(pivot, k) == i;
    return some != 0;
}

/* Factor a (DIM x DIM x L) in place: pivot[k] is the row swapped into row k at column k, failed set where a
 * column has no finite non-zero pivot (the scalar factorisation stops there; a failed lane's other entries are
 * not read). */
LANE_INLINE void lu_factor_lanes(double *restrict a, lane_flag *restrict pivot, lane_flag *restrict failed, int L)
{
    LANES failed[l] = 0;
    for (int k = 0; k < DIM; ++k) {
        double best[ML];
        LANES {
            best[l] = fabs(AT(a, k * DIM + k));
            AT(pivot, k) = k;
        }
        for (int i = k + 1; i < DIM; ++i)
            LANES {
                const double cand = fabs(AT(a, i * DIM + k));
                const lane_flag so_far = AT(pivot, k);
                AT(pivot, k) = cand > best[l] ? i : so_far;
                best[l] = cand > best[l] ? cand : best[l];
            }
        LANES failed[l] |= !(best[l] > 0.0 && best[l] <= DBL_MAX);
        for (int i = k + 1; i < DIM; ++i) {
            if (!pivot_in_some_lane(pivot, k, i, L))   /* the usual case: no lane swaps in row i */
                continue;
            for (int j = 0; j < DIM; ++j)
                LANES {
                    const double top = AT(a, k * DIM + j), other = AT(a, i * DIM + j);
                    const int swap = AT(pivot, k) == i;
                    AT(a, k * DIM + j) = swap ? other : top;
                    AT(a, i * DIM + j) = swap ? top : other;
                }
        }
        double inv[ML];
        LANES inv[l] = 1.0 / AT(a, k * DIM + k);
        for (int i = k + 1; i < DIM; ++i) {
            double f[ML];
            LANES {
                f[l] = AT(a, i * DIM + k) * inv[l];
                AT(a, i * DIM + k) = f[l];
            }
            for (int j = k + 1; j < DIM; ++j)
                LANES {   /* both loaded before the select, so that it vectorises (no conditional load) */
                    const double entry = AT(a, i * DIM + j), above = AT(a, k * DIM + j);
                    const double updated = entry - f[l] * above;
                    AT(a, i * DIM + j) = f[l] == 0.0 ? entry : updated;
                }
        }
    }
}

/* b = (LU)^-1 b: b's rows swapped as the factorisation swapped the matrix's (which puts row perm[k] in row k),
 * the forward and the back substitution in lu_solve_size's order */
LANE_INLINE void lu_solve_lanes(const double *restrict lu, const lane_flag *restrict pivot, double *restrict b, int L)
{
    for (int k = 0; k < DIM - 1; ++k)
        for (int i = k + 1; i < DIM; ++i) {
            if (!pivot_in_some_lane(pivot, k, i, L))
                continue;
            LANES {
                const double top = AT(b, k), other = AT(b, i);
                const int swap = AT(pivot, k) == i;
                AT(b, k) = swap ? other : top;
                AT(b, i) = swap ? top : other;
            }
        }
    for (int i = 1; i < DIM; ++i)
        for (int j = 0; j < i; ++j)
            LANES AT(b, i) -= AT(lu, i * DIM + j) * AT(b, j);
    for (int i = DIM - 1; i >= 0; --i) {
        for (int j = DIM - 1; j > i; --j)
            LANES AT(b, i) -= AT(lu, i * DIM + j) * AT(b, j);
        LANES AT(b, i) /= AT(lu, i * DIM + i);
    }
}

/* nh_norm_inf lane by lane (NaN when an entry is NaN) */
LANE_INLINE void norm_inf_lanes(const double *restrict x, double *restrict out, int L)
{
    LANES {
        double r = 0.0;
        lane_flag nan_seen = 0;
        for (int i = 0; i < DIM; ++i) {
            const double a = fabs(AT(x, i));
            r = a > r ? a : r;
            nan_seen |= a != a;
        }
        out[l] = nan_seen ? NAN : r;
    }
}

/* ---- the batched Newton ------------------------------------------------------------------------------ */

/* A method's residual (r not NULL) and Newton matrix (jac not NULL, DIM x DIM x L) at every lane's x, from its
 * step's context: the lane form of its scalar evaluate (dla_evaluate, dd_evaluate). newton_solve_lanes asks for
 * the matrix only at the x whose residual it has just asked for (a lane builds a matrix only where it has just
 * evaluated, and x does not change in between), so that a method may keep from the residual's call what the
 * matrix shares with it (dd: its points and discrete gradient). */
typedef void (*newton_evaluate_fn)(const void *method, const double *restrict x, double *restrict r,
                                   double *restrict jac, int L);

/* The Newton's arrays, DIM x L unless named, and the method it solves */
typedef struct newton_lanes {
    double *x, *r, *trial, *step, *best;     /* the iterate, its residual, a new residual, an update, the solution */
    double *matrix, *lu;                     /* a new Newton matrix, and each lane's factored one (DIM x DIM) */
    lane_flag *new_pivot, *pivot;
    newton_evaluate_fn evaluate;
    const void *method;                      /* evaluate's context: the step's constants and arrays */
} newton_lanes;

LANE_INLINE double *take_newton(double **next, int count, int L)
{
    double *array = *next;
    *next += count * L;
    return array;
}

/* The Newton's arrays from the batch's workspace (b->newton); *next: the method's, after them */
LANE_INLINE void newton_lanes_arrays(nh_lane_batch *b, newton_lanes *nw, double **next, int L)
{
    *next = b->newton;
    double **vectors[] = {&nw->x, &nw->r, &nw->trial, &nw->step, &nw->best};
    for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; ++k)
        *vectors[k] = take_newton(next, DIM, L);
    nw->matrix = take_newton(next, DIM * DIM, L);
    nw->lu = take_newton(next, DIM * DIM, L);
    nw->new_pivot = (lane_flag *)take_newton(next, DIM, L);
    nw->pivot = (lane_flag *)take_newton(next, DIM, L);
}

/* The phases of a lane's solve */
enum { SOLVE_IDLE = 0, SOLVE_NEWTON, SOLVE_FINISH, SOLVE_DONE, SOLVE_FAILED };

/* Where `mask` is set, to = from (`entries` x L) */
LANE_INLINE void select_lanes(const lane_flag *restrict mask, const double *restrict from, double *restrict to,
                              int entries, int L)
{
    for (int i = 0; i < entries; ++i)
        LANES {
            const double kept = AT(to, i), replaced = AT(from, i);
            AT(to, i) = mask[l] ? replaced : kept;
        }
}

LANE_INLINE void select_flags_lanes(const lane_flag *restrict mask, const lane_flag *restrict from,
                                    lane_flag *restrict to, int entries, int L)
{
    for (int i = 0; i < entries; ++i)
        LANES {
            const lane_flag kept = AT(to, i), replaced = AT(from, i);
            AT(to, i) = mask[l] ? replaced : kept;
        }
}

LANE_INLINE int any_lane(const lane_flag *restrict mask, int L)
{
    lane_flag any = 0;
    LANES any |= mask[l];
    return any != 0;
}

/* The Newton matrix at x for the lanes of `build` (phase SOLVE_NEWTON, or SOLVE_FINISH after a far step:
 * solver_newton.c's build_matrix), factored; a lane without a factorisation fails (Newton) or ends without
 * the end of the solve (finish), as in the scalar solve. */
LANE_INLINE void newton_build_lanes(const newton_lanes *nw, lane_flag *restrict phase, lane_flag *restrict refactor,
                                    long *restrict iterations, int L)
{
    lane_flag build[ML], failed[ML];
    LANES {
        build[l] = phase[l] == SOLVE_NEWTON || (phase[l] == SOLVE_FINISH && refactor[l]);
        iterations[l] += phase[l] == SOLVE_NEWTON;
    }
    if (!any_lane(build, L))
        return;
    nw->evaluate(nw->method, nw->x, NULL, nw->matrix, L);
    lu_factor_lanes(nw->matrix, nw->new_pivot, failed, L);
    LANES {
        build[l] &= !failed[l];
        phase[l] = failed[l] && phase[l] == SOLVE_NEWTON ? SOLVE_FAILED
                   : failed[l] && phase[l] == SOLVE_FINISH && refactor[l] ? SOLVE_DONE : phase[l];
        refactor[l] = 0;
    }
    select_lanes(build, nw->matrix, nw->lu, DIM * DIM, L);
    select_flags_lanes(build, nw->new_pivot, nw->pivot, DIM, L);
}

/* The batched solve of the lanes in phase SOLVE_NEWTON from their guesses in nw->x, into nw->best; each ends
 * SOLVE_DONE or SOLVE_FAILED. scale: each lane's residual scale (the problem's); iterations: each lane's, as the
 * scalar solve counts them. */
LANE_INLINE void newton_solve_lanes(const newton_lanes *nw, const double *restrict scale, lane_flag *restrict phase,
                                    long *restrict iterations, int L)
{
    double fnorm[ML], size[ML], best_size[ML];
    lane_flag refactor[ML], finish_steps[ML], advance[ML], evaluate[ML], smaller[ML];
    nw->evaluate(nw->method, nw->x, nw->r, NULL, L);
    norm_inf_lanes(nw->r, fnorm, L);
    LANES {
        phase[l] = phase[l] == SOLVE_NEWTON && fnorm[l] <= 0.01 * NH_SOLVER_FTOL * scale[l] ? SOLVE_DONE : phase[l];
        refactor[l] = finish_steps[l] = 0;
        best_size[l] = 0.0;
    }
    for (int i = 0; i < DIM; ++i)
        LANES AT(nw->best, i) = AT(nw->x, i);
    for (int pass = 1;; ++pass) {
        newton_build_lanes(nw, phase, refactor, iterations, L);
        lane_flag going = 0;
        LANES going |= phase[l] == SOLVE_NEWTON || phase[l] == SOLVE_FINISH;
        if (!going)
            return;
        for (int i = 0; i < DIM; ++i)
            LANES AT(nw->step, i) = -AT(nw->r, i);
        lu_solve_lanes(nw->lu, nw->pivot, nw->step, L);
        for (int i = 0; i < DIM; ++i)
            LANES AT(nw->trial, i) = AT(nw->x, i) + AT(nw->step, i);
        /* Newton: the step's size relative to the new iterate; the end of the solve: to the iterate it starts from */
        LANES {
            double r = 0.0;
            lane_flag nan_seen = 0;
            for (int i = 0; i < DIM; ++i) {
                const double from = AT(nw->x, i), to = AT(nw->trial, i);
                const double xi = phase[l] == SOLVE_NEWTON ? to : from;
                const double denom = fabs(xi) > 1.0 ? fabs(xi) : 1.0;
                const double t = fabs(AT(nw->step, i)) / denom;
                nan_seen |= t != t;
                r = t > r ? t : r;
            }
            size[l] = nan_seen ? NAN : r;
        }
        LANES {
            const int newton = phase[l] == SOLVE_NEWTON, finish = phase[l] == SOLVE_FINISH;
            smaller[l] = size[l] < best_size[l];
            const int floor = finish && !smaller[l] && !(size[l] > NH_SOLVER_FLOOR_STEP);
            const int roundoff = finish && !floor && smaller[l] && size[l] <= NH_SOLVER_ROUNDOFF_STEP;
            advance[l] = newton || (finish && !floor);
            evaluate[l] = newton || (finish && !floor && !roundoff);
            phase[l] = floor || roundoff ? SOLVE_DONE : phase[l];
            smaller[l] |= roundoff ? 2 : 0;   /* the round-off step's iterate is the solution */
        }
        select_lanes(advance, nw->trial, nw->x, DIM, L);
        lane_flag taken[ML];
        LANES taken[l] = smaller[l] >> 1;
        select_lanes(taken, nw->x, nw->best, DIM, L);
        if (any_lane(evaluate, L)) {
            nw->evaluate(nw->method, nw->x, nw->trial, NULL, L);
            select_lanes(evaluate, nw->trial, nw->r, DIM, L);
        }
        norm_inf_lanes(nw->r, fnorm, L);
        LANES {
            const int newton = phase[l] == SOLVE_NEWTON, finish = evaluate[l] && phase[l] == SOLVE_FINISH;
            const int finite = fabs(fnorm[l]) <= DBL_MAX;
            const int accepted = newton && finite &&
                                 (fnorm[l] <= NH_SOLVER_FTOL * scale[l] || size[l] <= NH_SOLVER_STEPTOL);
            iterations[l] += finish;
            taken[l] = accepted || (finish && (smaller[l] & 1));
            best_size[l] = taken[l] ? size[l] : best_size[l];
            refactor[l] = accepted && size[l] > NH_SOLVER_FAR_STEP;
            finish_steps[l] = accepted ? 0 : finish_steps[l] + finish;
            phase[l] = accepted                                         ? SOLVE_FINISH
                       : newton && (!finite || pass == NH_SOLVER_MAX_ITERS) ? SOLVE_FAILED
                       : finish && finish_steps[l] == NH_SOLVER_FINISH_STEPS ? SOLVE_DONE
                                                                             : phase[l];
        }
        select_lanes(taken, nw->x, nw->best, DIM, L);
    }
}

/* The start of an implicit step: the lanes with three solutions of step h in their history are solved in the
 * batch (SOLVE_NEWTON), the other active lanes are stepped by the scalar stepper before the batch (nh_method_solve's guess
 * without a history). Returns whether any lane is left to the batch. */
LANE_INLINE int newton_lanes_begin(nh_lane_batch *b, double h, lane_flag *restrict phase, long *restrict iterations,
                                   int L)
{
    LANES {
        phase[l] = b->active[l] && b->history_count[l] >= NH_LANE_HISTORY && b->history_h[l] == h ? SOLVE_NEWTON
                                                                                                 : SOLVE_IDLE;
        b->status[l] = NH_OK;
        iterations[l] = 0;
    }
    for (int l = 0; l < L; ++l)
        if (b->active[l] && phase[l] == SOLVE_IDLE)
            b->status[l] = nh_lane_scalar_step(b, l, h);
    return any_lane(phase, L);
}

/* x = the quadratic through each lane's last three solutions (nh_history_quadratic) */
LANE_INLINE void newton_lanes_guess(const nh_lane_batch *b, double *restrict x, int L)
{
    const double *restrict past = b->history, *restrict middle = past + DIM * L, *restrict oldest = middle + DIM * L;
    for (int i = 0; i < DIM; ++i)
        LANES AT(x, i) = 3.0 * (AT(past, i) - AT(middle, i)) + AT(oldest, i);
}

/* The end of an implicit step, after the method has written the new state of the lanes in `done`: their
 * solutions remembered (nh_stepper_remember) and their solves counted; a lane whose solve failed is stepped
 * again by the scalar stepper. */
LANE_INLINE void newton_lanes_end(nh_lane_batch *b, const newton_lanes *nw, const lane_flag *restrict done,
                                  const lane_flag *restrict phase, const long *restrict iterations, double h, int L)
{
    double *restrict newest = b->history, *restrict second = newest + DIM * L, *restrict third = second + DIM * L;
    select_lanes(done, second, third, DIM, L);
    select_lanes(done, newest, second, DIM, L);
    select_lanes(done, nw->best, newest, DIM, L);
    for (int l = 0; l < L; ++l) {
        if (phase[l] == SOLVE_DONE) {
            b->solver[l].solves++;
            b->solver[l].iterations += iterations[l];
        } else if (phase[l] == SOLVE_FAILED) {
            b->status[l] = nh_lane_scalar_step(b, l, h);
        }
    }
}

/* nh_method_momentum_scale of each lane */
LANE_INLINE void momentum_scale_lanes(double h, const double *restrict v0, const double *restrict grad0,
                                      double *restrict scale, int L)
{
    LANES {
        double s = 0.0;
        for (int i = 0; i < N; ++i) {
            const double a = fabs(AT(v0, i)), g = fabs(h * AT(grad0, i));
            s = a > s ? a : s;
            s = g > s ? g : s;
        }
        scale[l] = s > 0.0 ? s : 1.0;
    }
}

/* ---- DLA^alpha (dla.c) --------------------------------------------------------------------------------- */

/* The step's constants and arrays, all DIM x L or n x L unless named (taken from b->newton) */
typedef struct dla_lanes_step {
    const double *par;
    double h, alpha;
    const double *q0, *v0;
    double *grad0, *node, *a_node;           /* grad V(q0), Q, A(Q) */
    double *q1, *g1, *a1, *dav, *hess;       /* an evaluation's point, grad V, A, d(A v1)/dq there, Hess V (n x n) */
} dla_lanes_step;

LANE_INLINE void dla_lanes_arrays(nh_lane_batch *b, dla_lanes_step *c, newton_lanes *nw, int L)
{
    double *next;
    newton_lanes_arrays(b, nw, &next, L);
    double **vectors[] = {&c->grad0, &c->node, &c->a_node, &c->q1, &c->g1, &c->a1, &c->dav};
    for (size_t k = 0; k < sizeof vectors / sizeof vectors[0]; ++k)
        *vectors[k] = take_newton(&next, DIM, L);
    c->hess = take_newton(&next, N * N, L);
}

/* dla_position: q1 = Q + alpha h v1 */
LANE_INLINE void dla_position_lanes(const dla_lanes_step *c, const double *restrict v1, double *restrict q1, int L)
{
    for (int i = 0; i < N; ++i)
        LANES AT(q1, i) = AT(c->node, i) + c->alpha * c->h * AT(v1, i);
}

/* dla_evaluate at every lane's x: the residual into r (r not NULL) and the Newton matrix into jac (not NULL) */
LANE_INLINE void dla_evaluate_lanes(const void *method, const double *restrict x, double *restrict r,
                                    double *restrict jac, int L)
{
    const dla_lanes_step *c = method;
    const double h = c->h, al = c->alpha;
    const double *restrict lam = x + N * L;
    dla_position_lanes(c, x, c->q1, L);
    ls_constraint(c->par, c->q1, c->a1, L);
    if (r) {
        ls_gradient(c->par, c->q1, c->g1, L);
        for (int i = 0; i < N; ++i)
            LANES AT(r, i) = (AT(x, i) - AT(c->v0, i)) + h * (al * AT(c->grad0, i) + (1.0 - al) * AT(c->g1, i)) -
                             h * (AT(c->a_node, i) * lam[l]);
        LANES {
            double sum = 0.0;
            for (int i = 0; i < N; ++i)
                sum += AT(c->a1, i) * AT(x, i);
            AT(r, N) = sum;
        }
    }
    if (!jac)
        return;
    const double curvature = al * (1.0 - al) * h * h, velocity_weight = al * h;
    ls_hessian(c->par, c->q1, c->hess, L);
    ls_jacobian_velocity(c->par, c->q1, x, c->dav, L);
    for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j)
            LANES AT(jac, i * DIM + j) = curvature * AT(c->hess, i * N + j);
        LANES {
            AT(jac, i * DIM + i) += 1.0;
            AT(jac, i * DIM + N) = -h * AT(c->a_node, i);
        }
    }
    for (int j = 0; j < N; ++j)
        LANES AT(jac, N * DIM + j) = AT(c->a1, j) + velocity_weight * AT(c->dav, j);
    LANES AT(jac, N * DIM + N) = 0.0;
}

LANE_INLINE void dla_lanes(nh_lane_batch *b, double h, int L)
{
    dla_lanes_step c = {.par = b->system_par, .h = h, .alpha = b->implicit_alpha, .q0 = b->q, .v0 = b->v};
    newton_lanes nw = {.evaluate = dla_evaluate_lanes, .method = &c};
    dla_lanes_arrays(b, &c, &nw, L);
    lane_flag phase[ML];
    long iterations[ML];
    if (!newton_lanes_begin(b, h, phase, iterations, L))
        return;
    double scale[ML];
    ls_gradient(c.par, c.q0, c.grad0, L);
    for (int i = 0; i < N; ++i)
        LANES AT(c.node, i) = AT(c.q0, i) + (1.0 - c.alpha) * h * AT(c.v0, i);
    ls_constraint(c.par, c.node, c.a_node, L);
    momentum_scale_lanes(h, c.v0, c.grad0, scale, L);
    newton_lanes_guess(b, nw.x, L);
    newton_solve_lanes(&nw, scale, phase, iterations, L);
    lane_flag done[ML];
    LANES done[l] = phase[l] == SOLVE_DONE;
    for (int i = 0; i < N; ++i)
        LANES {
            const double v1 = AT(nw.best, i), q = AT(b->q, i), v = AT(b->v, i);
            const double q1 = AT(c.node, i) + c.alpha * h * v1;
            AT(b->q, i) = done[l] ? q1 : q;
            AT(b->v, i) = done[l] ? v1 : v;
        }
    newton_lanes_end(b, &nw, done, phase, iterations, h, L);
}

#include "lane_dd.h"
