/* The stepper's layout (methods-private): built-in methods read these fields directly; the public
 * API (method.h) offers the same through accessors, and plugins use those. */
#ifndef NHENS_METHODS_STEPPER_H
#define NHENS_METHODS_STEPPER_H

#include "nhens/method.h"

enum { NH_MAX_INNER_STEPPERS = 4 };

struct nh_stepper {
    const nh_method_type *type;
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
};

#endif
