/* The stepper life cycle (create / start / step / free), its accessors, the solver statistics summed
 * over inner steppers, and the recentring of angles and ignorable coordinates between steps with the
 * turns and offsets that give them back in the start frame (include/nhens/method.h). */
#include "stepper.h"

#include "kernels.h"

#include "nhens/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 2 pi = TWO_PI_HIGH + TWO_PI_LOW to about 1e-32 */
static const double TWO_PI_HIGH = 6.283185307179586232, TWO_PI_LOW = 2.4492935982947064e-16;

double nh_coordinate_moved(double x, double high, double low)
{
    return (x - high) - low;
}

static void mark_coordinate_kinds(nh_stepper *st)
{
    if (st->sys->type->coordinate_kinds)
        st->sys->type->coordinate_kinds(st->sys, st->kind);
}

/* Whether st's method and all its inner steppers' are built in: only they move what they keep of a step
 * when a coordinate is recentred (stepper.h's move_kept). */
static int all_recentre(const nh_stepper *st)
{
    int all = nh_method_is_builtin(st->type);
    for (int i = 0; i < st->n_inner; ++i)
        all &= all_recentre(st->inner[i]);
    return all;
}

static nh_stepper *stepper_alloc(const nh_method_spec *spec, const nh_system *sys, nh_solver_kind solver,
                                 nh_error *err)
{
    nh_stepper *st = calloc(1, sizeof *st);
    if (!st) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory creating a stepper");
        return NULL;
    }
    st->type = spec->type;
    st->step = nh_step_kernel_for(spec->type, sys);
    if (!st->step)
        st->step = spec->type->step;
    st->method = *spec;
    st->params = spec->params;
    st->sys = sys;
    st->solver_kind = solver;
    st->carried_dim = spec->type->carried_dim ? spec->type->carried_dim(spec, sys) : 0;
    mark_coordinate_kinds(st);
    return st;
}

int nh_step_history_init(nh_step_history *history, int dim, int n, nh_error *err)
{
    history->count = 0;
    history->dim = dim;
    history->solution = malloc(((size_t)NH_HISTORY_POINTS * (size_t)dim + 2 * (size_t)n) * sizeof(double));
    if (!history->solution)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for a step history of %d unknowns", dim);
    history->q = history->solution + NH_HISTORY_POINTS * dim;
    history->v = history->q + n;
    return NH_OK;
}

static int stepper_allocate_parts(nh_stepper *st, nh_error *err)
{
    const nh_method_spec *spec = &st->method;
    int dim = spec->type->solver_dim ? spec->type->solver_dim(spec, st->sys) : 0;
    if (dim > 0 && !(st->solver = nh_solver_create(st->solver_kind, dim, err)))
        return NH_ERR_SOLVER;
    if (dim > 0 && nh_step_history_init(&st->history, dim, st->sys->n, err))
        return NH_ERR_NOMEM;
    long size = spec->type->workspace_size ? spec->type->workspace_size(spec, st->sys) : 0;
    if (size > 0 && !(st->workspace = calloc((size_t)size, sizeof *st->workspace)))
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for a workspace of %ld doubles", size);
    return spec->type->create ? spec->type->create(st, err) : NH_OK;
}

nh_stepper *nh_stepper_create(const nh_method_spec *spec, const nh_system *sys, nh_solver_kind solver,
                              nh_error *err)
{
    if (nh_method_spec_check(spec, sys, err))
        return NULL;
    nh_stepper *st = stepper_alloc(spec, sys, solver, err);
    if (st && stepper_allocate_parts(st, err) != NH_OK) {
        nh_stepper_free(st);
        return NULL;
    }
    if (st)
        st->recentres = all_recentre(st);
    return st;
}

nh_stepper *nh_stepper_create_inner(nh_stepper *outer, const nh_method_spec *spec, nh_error *err)
{
    if (outer->n_inner == NH_MAX_INNER_STEPPERS) {
        nh_fail(err, NH_ERR_INPUT, "method %s: more than %d inner steppers", outer->type->name,
                NH_MAX_INNER_STEPPERS);
        return NULL;
    }
    nh_stepper *inner = nh_stepper_create(spec, outer->sys, outer->solver_kind, err);
    if (inner)
        outer->inner[outer->n_inner++] = inner;
    return inner;
}

/* A trajectory's steps must not depend on the trajectories integrated before it by the same worker. */
static void forget_earlier_trajectories(nh_stepper *st)
{
    st->history.count = 0;
    memset(st->turns, 0, sizeof st->turns);
    memset(st->offset, 0, sizeof st->offset);
    st->trajectory++;
    if (st->solver)
        nh_solver_forget(st->solver);
    for (int i = 0; i < st->n_inner; ++i)
        forget_earlier_trajectories(st->inner[i]);
}

int nh_stepper_start(nh_stepper *st, const double *q, const double *v, double *carried)
{
    forget_earlier_trajectories(st);
    return st->type->start ? st->type->start(st, q, v, carried) : NH_OK;
}

int nh_stepper_step(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    int rc = st->step(st, h, q, v, carried);
    if (rc == NH_OK && !nh_all_finite_pair(st->sys->n, q, v))
        rc = NH_STEP_NONFINITE;
    return rc;
}

/* Coordinate i of everything st (and its inner steppers) keeps of the last step moved by high + low. */
static void move_memory(nh_stepper *st, int i, double high, double low)
{
    if (st->history.solution)
        st->history.q[i] = nh_coordinate_moved(st->history.q[i], high, low);
    if (st->move_kept)
        st->move_kept(st, i, high, low);
    for (int k = 0; k < st->n_inner; ++k)
        move_memory(st->inner[k], i, high, low);
}

void nh_recentre_once(unsigned char kind, double *x, double *turns, double *offset, double *high, double *low)
{
    *low = 0.0;
    if (kind == NH_COORDINATE_ANGLE) {
        const double sign = *x > 0 ? 1.0 : -1.0;
        *high = sign * TWO_PI_HIGH;
        *low = sign * TWO_PI_LOW;
        *turns += sign;
    } else {
        *high = nearbyint(*x);
        *offset += *high;
    }
    *x = nh_coordinate_moved(*x, *high, *low);
}

/* Angles beyond this are left alone: each turn is then inexact, and the angle has lost its digits */
static const double ANGLE_RECENTRE_LIMIT = 0x1p20;

int nh_recentres(unsigned char kind, double x)
{
    const int angle = kind == NH_COORDINATE_ANGLE, ignorable = kind == NH_COORDINATE_IGNORABLE;
    return fabs(x) > NH_RECENTRE_LIMIT && isfinite(x) && (ignorable || (angle && fabs(x) < ANGLE_RECENTRE_LIMIT));
}

int nh_stepper_recentre(nh_stepper *st, double *q)
{
    int moved = 0;
    for (int i = 0; st->recentres && i < st->sys->n; ++i) {
        if (!nh_recentres(st->kind[i], q[i]))
            continue;
        while (fabs(q[i]) > NH_RECENTRE_LIMIT) {   /* one turn a time (a step moves less than one, but a start may not) */
            double high, low;
            nh_recentre_once(st->kind[i], &q[i], &st->turns[i], &st->offset[i], &high, &low);
            move_memory(st, i, high, low);
        }
        ++moved;
    }
    return moved;
}

void nh_stepper_in_start_frame(const nh_stepper *st, const double *q, double *out)
{
    for (int i = 0; i < st->sys->n; ++i) {
        const double turns = st->turns[i];
        out[i] = q[i] + st->offset[i] + (turns != 0.0 ? turns * TWO_PI_HIGH + turns * TWO_PI_LOW : 0.0);
    }
}

static int same_values(int n, const double *a, const double *b)
{
    for (int i = 0; i < n; ++i)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int nh_stepper_history(nh_stepper *st, double h, const double *q, const double *v, const double **past)
{
    nh_step_history *history = &st->history;
    const int n = st->sys->n;
    if (!(history->count > 0 && history->h == h && same_values(n, q, history->q) && same_values(n, v, history->v))) {
        history->count = 0;
        history->h = h;
    }
    *past = history->solution;
    return history->count;
}

void nh_stepper_remember(nh_stepper *st, const double *x, const double *q, const double *v)
{
    nh_step_history *history = &st->history;
    const int n = st->sys->n, dim = history->dim;
    if (dim > 0) {
        memmove(history->solution + dim, history->solution, (size_t)(NH_HISTORY_POINTS - 1) * dim * sizeof *x);
        memcpy(history->solution, x, (size_t)dim * sizeof *x);
    }
    memcpy(history->q, q, (size_t)n * sizeof *q);
    memcpy(history->v, v, (size_t)n * sizeof *v);
    history->count += history->count < NH_HISTORY_POINTS;
}

void nh_step_history_resume(nh_step_history *history, int n, const double *q, const double *v)
{
    memcpy(history->q, q, (size_t)n * sizeof *q);
    memcpy(history->v, v, (size_t)n * sizeof *v);
}

void nh_step_history_swap(nh_stepper *st, nh_step_history *other)
{
    nh_step_history own = st->history;
    st->history = *other;
    *other = own;
}

void nh_step_history_free(nh_step_history *history)
{
    free(history->solution);
    history->solution = history->q = history->v = NULL;
}

int nh_stepper_newton_matrices(nh_stepper *st, double h, const double *q, const double *v, double *analytic,
                               double *differences, int *dim)
{
    if (!st->solver)
        return 1;
    const int n = st->sys->n;
    double q1[NH_MAX_DIM], v1[NH_MAX_DIM], *carried = calloc((size_t)st->carried_dim + 1, sizeof *carried);
    if (!carried)
        return 1;
    memcpy(q1, q, (size_t)n * sizeof *q);
    memcpy(v1, v, (size_t)n * sizeof *v);
    nh_solver_probe probe = {analytic, differences, 0, 0, -1};
    if (nh_stepper_start(st, q1, v1, carried) == NH_OK) {
        nh_solver_set_probe(st->solver, &probe);
        st->step(st, h, q1, v1, carried);
        nh_solver_set_probe(st->solver, NULL);
    }
    free(carried);
    *dim = probe.dim;
    return !probe.recorded ? 1 : probe.combined == 0 ? 2 : 0;
}

void nh_stepper_free(nh_stepper *st)
{
    if (!st)
        return;
    if (st->type->destroy)
        st->type->destroy(st);
    for (int i = 0; i < st->n_inner; ++i)
        nh_stepper_free(st->inner[i]);
    nh_solver_free(st->solver);
    nh_step_history_free(&st->history);
    free(st->workspace);
    free(st);
}

nh_solver_stats nh_stepper_solver_stats(const nh_stepper *st)
{
    nh_solver_stats total = st->solver ? nh_solver_get_stats(st->solver) : (nh_solver_stats){0, 0, 0};
    for (int i = 0; i < st->n_inner; ++i) {
        nh_solver_stats_add(&total, nh_stepper_solver_stats(st->inner[i]), 1);
    }
    return total;
}

const nh_method_spec *nh_stepper_method(const nh_stepper *st) { return &st->method; }
const nh_system *nh_stepper_system(const nh_stepper *st) { return st->sys; }
double nh_stepper_param(const nh_stepper *st, int index) { return st->params.value[index]; }
const char *nh_stepper_param_text(const nh_stepper *st, int index) { return st->params.text[index]; }
nh_solver *nh_stepper_solver(const nh_stepper *st) { return st->solver; }
nh_solver_kind nh_stepper_solver_kind(const nh_stepper *st) { return st->solver_kind; }
int nh_stepper_carried_dim(const nh_stepper *st) { return st->carried_dim; }
double *nh_stepper_workspace(const nh_stepper *st) { return st->workspace; }
void *nh_stepper_data(const nh_stepper *st) { return st->impl; }
void nh_stepper_set_data(nh_stepper *st, void *data) { st->impl = data; }
