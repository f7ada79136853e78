/* The stepper's layout (methods-private): built-in methods read these fields directly; the public
 * API (method.h) offers the same through accessors, and plugins use those. */
#ifndef NHENS_METHODS_STEPPER_H
#define NHENS_METHODS_STEPPER_H

#include "nhens/method_type.h"

#include <math.h>

enum { NH_MAX_INNER_STEPPERS = 4, NH_HISTORY_POINTS = 6 };

/* A method's step (nh_method_type.step), or a step kernel of it (kernels.h). */
typedef int (*nh_step_fn)(nh_stepper *st, double h, double *q, double *v, double *carried);

/* The warm start's memory: the solver's unknowns at the last solved steps of one trajectory, newest
 * first, all with step h, and the (q, v) the newest step returned. Like a Newton matrix kept by the
 * solver it only changes where a solve starts, and nh_stepper_start clears it. */
typedef struct nh_step_history {
    int count;              /* consecutive steps recorded (at most NH_HISTORY_POINTS) */
    int dim;                /* the solver's unknowns (0: the method solves nothing) */
    double h;
    double *solution;       /* NH_HISTORY_POINTS x dim (newmark records q1 here, but its guess recomputes it:
                             * what recentring moves is q and v below) */
    double *q, *v;          /* n each */
} nh_step_history;

struct nh_stepper {
    const nh_method_type *type;
    nh_step_fn step;            /* type->step, or the step kernel of type for sys (kernels.h) */
    nh_method_spec method;
    nh_param_set params;        /* = method.params, kept beside type for the method files */
    const nh_system *sys;
    nh_solver_kind solver_kind;
    nh_solver *solver;          /* NULL for explicit and linearly implicit methods */
    int carried_dim;
    double *workspace;          /* workspace_size doubles, or NULL */
    void *impl;                 /* owned by the method's create/destroy */
    nh_stepper *inner[NH_MAX_INNER_STEPPERS];
    int n_inner;
    nh_step_history history;
    unsigned long trajectory;   /* counts the starts of this stepper (and of its outer one): what a method
                                 * keeps of its own last step is valid only within the same trajectory */
    int recentres;              /* nh_stepper_recentre moves coordinates: a built-in method, whose inner
                                 * steppers all recentre (a plugin cannot say what it keeps) */
    unsigned char kind[NH_MAX_DIM]; /* the system's coordinate kinds (nh_stepper_recentre) ... */
    double turns[NH_MAX_DIM];   /* ... the whole turns taken off each angle since the trajectory's start ... */
    double offset[NH_MAX_DIM];  /* ... and the integers taken off each ignorable coordinate */
    /* A method that keeps coordinates of its last step outside the history moves coordinate i of them as
     * the stepper moved q_i, by nh_coordinate_moved(x, high, low); NULL: it keeps none. */
    void (*move_kept)(nh_stepper *st, int i, double high, double low);
};

/* Whether a method is one of the built-in ones (methods/registry.c). */
int nh_method_is_builtin(const nh_method_type *type);

/* (x - high) - low: a coordinate moved by high + low (a turn in two parts, or an integer and 0), the same
 * bits wherever a stepper moves a kept copy of it. */
double nh_coordinate_moved(double x, double high, double low);

/* Recentring (nh_stepper_recentre) moves a coordinate beyond this, 2 pi */
#define NH_RECENTRE_LIMIT (2.0 * M_PI)
/* Whether a coordinate of this kind (nh_coordinate_kind) at x is recentred: beyond 2 pi, finite, ignorable or
 * an angle below 2^20 (beyond, each turn would be inexact). */
int nh_recentres(unsigned char kind, double x);
/* One turn (an angle: *turns counts it) or the nearest integer (an ignorable coordinate: *offset adds it) off
 * *x, which is beyond 2 pi; the amount moved is high + low. */
void nh_recentre_once(unsigned char kind, double *x, double *turns, double *offset, double *high, double *low);

/* Before a step from (q, v) with step h: the number of solutions recorded for it (at most
 * NH_HISTORY_POINTS; *past points to them, newest first, history.dim apart). They count only while the
 * steps used h and the newest returned exactly (q, v); otherwise 0, and the recorded sequence starts
 * again. */
int nh_stepper_history(nh_stepper *st, double h, const double *q, const double *v, const double **past);
/* After a step solved for x and returned (q, v): x joins the history (a history of dim 0 records only
 * (q, v), which is how a composition knows that its next step continues). */
void nh_stepper_remember(nh_stepper *st, const double *x, const double *q, const double *v);

/* Histories kept outside a stepper (a composition keeps one per stage, and swaps it into the inner
 * stepper for that stage's step): allocated empty for dim unknowns and n coordinates, and freed. */
int nh_step_history_init(nh_step_history *history, int dim, int n, nh_error *err);
void nh_step_history_free(nh_step_history *history);
/* Exchange st's history with *other (pointers only). */
void nh_step_history_swap(nh_stepper *st, nh_step_history *other);
/* The recorded steps continue at (q, v), although the newest did not return it: a composition's stage
 * k starts one outer step after the previous stage k, so its solutions stay equally spaced in time
 * while the other stages move the state in between. */
void nh_step_history_resume(nh_step_history *history, int n, const double *q, const double *v);

#endif
