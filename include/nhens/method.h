/* Integration methods: a const descriptor (vtable) per method, one registry table, and a stepper =
 * descriptor + parameter values + system + solver workspace, created once per worker (SUNDIALS-style
 * create / step / free). A step maps (q, v) on D (plus any carried state, e.g. the leap-frog
 * multiplier) to the next (q, v) and returns 0 (ok), > 0 (this step failed: recoverable) or < 0
 * (fatal). Methods never reach back into the driver and know nothing of statistics. */
#ifndef NHENS_METHOD_H
#define NHENS_METHOD_H

#include "nhens/core.h"
#include "nhens/params.h"
#include "nhens/solver.h"
#include "nhens/system.h"

enum nh_method_flags {
    NH_METHOD_IMPLICIT = 1u << 0,            /* nonlinear solve through the solver interface */
    NH_METHOD_LINEARLY_IMPLICIT = 1u << 1,   /* only small linear solves */
    NH_METHOD_PRESERVES_ENERGY = 1u << 2,    /* H to round-off */
    NH_METHOD_PRESERVES_CONSTRAINT = 1u << 3,/* A(q_k) v_k = 0 to round-off at the outputs */
    NH_METHOD_REVERSIBLE = 1u << 4,          /* Phi_h(rho Phi_h x) = rho x (seed 004 App. A) */
    NH_METHOD_CARRIES_STATE = 1u << 5,       /* state beyond (q, v) between steps */
    NH_METHOD_GENERAL_MASS = 1u << 6,        /* serves systems with a configuration-dependent M(q) */
    NH_METHOD_REDUCED = 1u << 7              /* serves reduced (Lie algebra) systems without configuration */
};

typedef struct nh_stepper nh_stepper;

typedef struct nh_method_type {
    const char *name;
    const char *summary;
    const char *reference;
    int n_params;
    const nh_param_def *params;
    /* Flags and order: functions of the parameters, or (when NULL) the constants below. */
    unsigned (*flags)(const nh_param_set *set);
    int (*order)(const nh_param_set *set);
    unsigned fixed_flags;
    int fixed_order;
    /* Refuse a system the method cannot serve (NULL: serves all). */
    int (*accepts)(const nh_param_set *set, const nh_system *sys, nh_error *err);
    /* Unknowns of the nonlinear solve for this system; 0: never calls the solver. */
    int (*solver_dim)(const nh_param_set *set, const nh_system *sys);
    /* Doubles carried between steps (NULL: none). */
    int (*carried_dim)(const nh_system *sys);
    /* Initialise carried state from (q, v) on D (NULL: nothing to do). */
    int (*start)(nh_stepper *st, const double *q, const double *v, double *carried);
    int (*step)(nh_stepper *st, double h, double *q, double *v, double *carried);
    /* Per-worker set-up beyond the solver (e.g. the inner steppers of a composition), and its
     * release (both NULL when not needed). */
    int (*create)(nh_stepper *st, nh_solver_kind solver, nh_error *err);
    void (*destroy)(nh_stepper *st);
} nh_method_type;

struct nh_stepper {
    const nh_method_type *type;
    nh_param_set params;
    const nh_system *sys;
    nh_solver *solver;      /* NULL for explicit and linearly implicit methods */
    int carried_dim;
    void *impl;             /* owned by the method's create/destroy */
};

/* A method name with its parameter values, e.g. parsed from "dla:alpha=0.4". */
typedef struct nh_method_spec {
    const nh_method_type *type;
    nh_param_set params;
} nh_method_spec;

int nh_method_count(void);
const nh_method_type *nh_method_at(int i);
const nh_method_type *nh_method_find(const char *name);

int nh_method_spec_parse(nh_method_spec *spec, const char *text, nh_error *err);
unsigned nh_method_spec_flags(const nh_method_spec *spec);
int nh_method_spec_order(const nh_method_spec *spec);
/* Can this method serve this system? Message names what is missing. */
int nh_method_spec_check(const nh_method_spec *spec, const nh_system *sys, nh_error *err);
/* "dla:alpha=0.5" */
void nh_method_spec_format(const nh_method_spec *spec, char *buf, size_t len);

nh_stepper *nh_stepper_create(const nh_method_spec *spec, const nh_system *sys, nh_solver_kind solver,
                              nh_error *err);
int nh_stepper_start(nh_stepper *st, const double *q, const double *v, double *carried);
/* One step; also turns a non-finite result into NH_STEP_NONFINITE. */
int nh_stepper_step(nh_stepper *st, double h, double *q, double *v, double *carried);
void nh_stepper_free(nh_stepper *st);

/* Flag names for `nhens list`: writes "implicit,reversible,..." */
void nh_method_flags_format(unsigned flags, char *buf, size_t len);

#endif
