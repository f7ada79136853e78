/* Integration methods, as their authors see them (a plugin's or a built-in's; users call method.h): the
 * descriptor nh_method_type with its configuration-time and run-time callbacks, the inner-method parser of
 * composite methods, and what a step reads of its stepper (parameters, solver, workspace, its own data, inner
 * steppers). docs/guide/extending.md shows a complete method plugin. */
#ifndef NHENS_METHOD_TYPE_H
#define NHENS_METHOD_TYPE_H

#include "nhens/method.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* The descriptor. Configuration-time callbacks (flags, order, accepts, sizes) receive the configured
 * method `self`, run-time callbacks (create, start, step, destroy) its stepper; none receives bare
 * parameters, so one function can serve several descriptors by reading self->type->data. */
struct nh_method_type {
    const char *name;
    const char *summary;
    const char *reference;
    int n_params;
    const nh_param_def *params;
    const void *data;       /* descriptor-specific constants (e.g. which discrete gradient), or NULL */
    /* Flags and order: functions of the configured method, or (when NULL) the constants below. */
    unsigned (*flags)(const nh_method_spec *self);
    int (*order)(const nh_method_spec *self);
    unsigned fixed_flags;
    int fixed_order;
    /* Refuse a system the method cannot serve beyond what the flags say (NULL: serves all). */
    int (*accepts)(const nh_method_spec *self, const nh_system *sys, nh_error *err);
    /* Unknowns of the nonlinear solve for this system; NULL or 0: never calls the solver. */
    int (*solver_dim)(const nh_method_spec *self, const nh_system *sys);
    /* Doubles of per-stepper scratch (nh_stepper_workspace), allocated once in create (NULL: none). */
    long (*workspace_size)(const nh_method_spec *self, const nh_system *sys);
    /* Doubles carried between steps (NULL: none). */
    int (*carried_dim)(const nh_method_spec *self, const nh_system *sys);
    /* Initialise carried state from (q, v) on D (NULL: nothing to do). */
    int (*start)(nh_stepper *st, const double *q, const double *v, double *carried);
    int (*step)(nh_stepper *st, double h, double *q, double *v, double *carried);
    /* Set-up beyond the solver and workspace (e.g. inner steppers, nh_stepper_set_data), and its
     * release (both NULL when not needed). Inner steppers made with nh_stepper_create_inner are
     * freed with their owner. */
    int (*create)(nh_stepper *st, nh_error *err);
    void (*destroy)(nh_stepper *st);
};

/* The inner method of a composite method (a text parameter such as inner=): "NAME/k=v/k=v", the '/' standing for
 * the ':' and ',' of a spec, which the outer spec "outer:inner=NAME/k=v,..." already uses; looked up in the
 * registry of the outer method `self`. The built-in compositions and adjoint read inner= with it. A method
 * author combines the inner method's flags and order in the outer's flags and order functions
 * (docs/guide/extending.md, "Flags of a composite method"). */
int nh_method_spec_parse_inner(const nh_method_spec *self, const char *text, nh_method_spec *inner, nh_error *err);

/* Accessors for method implementations. */
double nh_stepper_param(const nh_stepper *st, int index);
const char *nh_stepper_param_text(const nh_stepper *st, int index);
/* The stepper's own solver (NULL when solver_dim is 0) and the backend chosen at create. */
nh_solver *nh_stepper_solver(const nh_stepper *st);
nh_solver_kind nh_stepper_solver_kind(const nh_stepper *st);
double *nh_stepper_workspace(const nh_stepper *st);
void *nh_stepper_data(const nh_stepper *st);
void nh_stepper_set_data(nh_stepper *st, void *data);
/* A stepper for `spec` on the same system and solver backend, owned by `outer` (freed with it, its
 * solver statistics counted in outer's). */
nh_stepper *nh_stepper_create_inner(nh_stepper *outer, const nh_method_spec *spec, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
