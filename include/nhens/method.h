/* Integration methods, as their users see them (a method author's side is method_type.h): a const descriptor per
 * method, listed in a registry (registry.h), configured as a method spec ("dla:alpha=0.4"), and an opaque
 * stepper = configured method + system + solver + workspace, created once per worker
 * (SUNDIALS-style create / step / free) and sized there by the system's n. A step maps (q, v) on D (plus any carried state, e.g. the leap-frog
 * multiplier) to the next (q, v) and returns 0 (ok), > 0 (this step failed: recoverable) or < 0
 * (fatal). Methods never reach back into the driver and know nothing of statistics. */
#ifndef NHENS_METHOD_H
#define NHENS_METHOD_H

#include "nhens/core.h"
#include "nhens/params.h"
#include "nhens/solver.h"
#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum nh_method_flags {
    NH_METHOD_IMPLICIT = 1u << 0,            /* nonlinear solve through the solver interface */
    NH_METHOD_LINEARLY_IMPLICIT = 1u << 1,   /* only small linear solves */
    NH_METHOD_PRESERVES_ENERGY = 1u << 2,    /* H to round-off */
    NH_METHOD_PRESERVES_CONSTRAINT = 1u << 3,/* A(q_k) v_k = 0 to round-off at the outputs */
    NH_METHOD_REVERSIBLE = 1u << 4,          /* Phi_h(rho Phi_h x) = rho x (Modin & Verdier 2020, App. A) */
    NH_METHOD_CARRIES_STATE = 1u << 5,       /* state beyond (q, v) between steps */
    NH_METHOD_GENERAL_MASS = 1u << 6,        /* serves systems with a configuration-dependent M(q) */
    NH_METHOD_REDUCED = 1u << 7              /* serves reduced (Lie algebra) systems without configuration */
};

typedef struct nh_stepper nh_stepper;
typedef struct nh_registry nh_registry;
typedef struct nh_method_type nh_method_type;

/* The orders a method may declare (a plugin's beyond them is refused: h^(2 order) scales the variance). */
enum { NH_MAX_METHOD_ORDER = 16 };

/* A configured method: descriptor + parameter values, e.g. parsed from "dla:alpha=0.4", and the
 * registry its names were looked up in (compositions look up their inner methods there). This is
 * the instance the configuration-time callbacks receive as `self`. */
typedef struct nh_method_spec {
    const nh_method_type *type;
    nh_param_set params;
    const nh_registry *registry;
} nh_method_spec;


int nh_method_spec_parse(const nh_registry *reg, nh_method_spec *spec, const char *text, nh_error *err);
/* Default parameters of a descriptor. */
void nh_method_spec_defaults(nh_method_spec *spec, const nh_method_type *type, const nh_registry *reg);
/* A descriptor's name ("dla", e.g. of nh_registry_method_at), and a configured method's. */
const char *nh_method_type_name(const nh_method_type *type);
const char *nh_method_spec_name(const nh_method_spec *spec);
unsigned nh_method_spec_flags(const nh_method_spec *spec);
int nh_method_spec_order(const nh_method_spec *spec);
/* Can this method serve this system? Checks the flags against what the system needs (M(q), reduced
 * form), then the method's own accepts; the message names what is missing and, when the registry is
 * known, lists the methods whose flags serve the system. */
int nh_method_spec_check(const nh_method_spec *spec, const nh_system *sys, nh_error *err);
/* System properties a method's flags must cover: NH_METHOD_GENERAL_MASS and/or NH_METHOD_REDUCED. */
unsigned nh_method_flags_required(const nh_system *sys);
/* "dla:alpha=0.5" */
void nh_method_spec_format(const nh_method_spec *spec, char *buf, size_t len);

/* ---- the stepper (opaque): create / start / step / free ---------------------------------------- */
nh_stepper *nh_stepper_create(const nh_method_spec *spec, const nh_system *sys, nh_solver_kind solver,
                              nh_error *err);
/* Start a trajectory at (q, v): initialise carried state and clear what the stepper remembers of earlier
 * steps (a Newton matrix kept across solves, and the solutions of the last steps, from which an implicit
 * step's solve starts while each step continues from the state the previous one returned with the same
 * h). A trajectory's steps therefore never depend on what the stepper integrated before its start. */
int nh_stepper_start(nh_stepper *st, const double *q, const double *v, double *carried);
/* One step; also turns a non-finite result into NH_STEP_NONFINITE. */
int nh_stepper_step(nh_stepper *st, double h, double *q, double *v, double *carried);
/* Between steps of a long run: every coordinate of q that the system declares an angle or ignorable
 * (coordinate_kinds) and that has left [-2 pi, 2 pi] is moved back, an angle by a whole turn (2 pi in two
 * parts, so the turn is exact to ~1e-32), an ignorable coordinate by the nearest integer (exactly); what
 * the stepper keeps of its last step moves with it, so the next step continues as if nothing had moved.
 * The state then evolves in a frame where a rotating angle or a rolling body's position is as precise as a
 * bounded coordinate. Returns the number of coordinates moved. Only the built-in methods take part (a
 * plugin method cannot declare what it keeps of a step): with a plugin method, or a composition of one,
 * nothing moves. An angle beyond 2^20 is left alone. nh_stepper_in_start_frame gives q back in the frame
 * of the trajectory's start. */
int nh_stepper_recentre(nh_stepper *st, double *q);
void nh_stepper_in_start_frame(const nh_stepper *st, const double *q, double *out);
void nh_stepper_free(nh_stepper *st);

/* The configured method and the system of a stepper. */
const nh_method_spec *nh_stepper_method(const nh_stepper *st);
const nh_system *nh_stepper_system(const nh_stepper *st);
/* For checking a method's Newton matrix (a plugin's too): the matrix the method gives its solver for the
 * step of size h from (q, v) on D, at the solve's initial guess, and forward differences of the
 * residual there, each *dim x *dim (NH_MAX_UNKNOWNS^2 doubles). The stepper is started at (q, v) and its
 * q and v are not changed. 0; 1 if the method has no solver of its own (explicit, linearly implicit,
 * a composition) or the step failed before its first solve; 2 if the problem's residual_and_jacobian
 * (solver.h) does not give the bits of its residual and jacobian there (the matrices are recorded). */
int nh_stepper_newton_matrices(nh_stepper *st, double h, const double *q, const double *v, double *analytic,
                               double *differences, int *dim);
/* Doubles carried between steps (size of the `carried` array start and step expect). */
int nh_stepper_carried_dim(const nh_stepper *st);
/* Solver statistics of the stepper and of every inner stepper, summed. */
nh_solver_stats nh_stepper_solver_stats(const nh_stepper *st);

/* Flag names for `nhens list`: writes "implicit,reversible,..." */
void nh_method_flags_format(unsigned flags, char *buf, size_t len);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
