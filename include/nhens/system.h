/* Mechanical systems: a const descriptor (vtable) per system plus an instance built from parameter
 * overrides. Conventions (docs/DESIGN.md): L = 1/2 v^T M v - V(q), constraints A(q) v = 0, equations
 * M v' = -grad V + A^T lambda. M is constant and diagonal for every system that sets `mass`
 * (NULL means the identity). Matrices are row-major. The derivative of A enters only through two
 * contractions, which each system writes out sparsely:
 *   constraint_jacobian_velocity:  out (m x n) = d(A(q) u)/dq
 *   constraint_jacobian_multiplier: out (n x n) = d(A(q)^T lam)/dq
 * Systems know nothing of methods. */
#ifndef NHENS_SYSTEM_H
#define NHENS_SYSTEM_H

#include "nhens/core.h"
#include "nhens/params.h"
#include "nhens/pcg.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_system nh_system;

/* A preset is either one initial state printed in a paper (dim = n, q, v) or, with dim = 0, an
 * energy shell of a paper's ensemble study (shell_energy, default ensemble size). */
typedef struct nh_preset {
    const char *name;
    const char *description;    /* which figure / initial condition of which seed */
    const char *param_overrides;/* e.g. "n=2"; applied before user overrides are checked */
    int dim;                    /* n that q and v have; 0 for an energy-shell preset */
    double q[NH_MAX_DIM];
    double v[NH_MAX_DIM];
    double shell_energy;
    long shell_ensemble;
} nh_preset;

static inline int nh_preset_is_shell(const nh_preset *p)
{
    return p->dim == 0;
}

enum nh_system_flags {
    /* A depends only on coordinates that the constraint force does not move ("CVT-type",
     * docs/METHODS.md Sect. 0): DLA^{0,1} is then linearly implicit. */
    NH_SYS_CVT_TYPE = 1u << 0,
    /* A(q) is affine in q, so its second derivatives vanish and d(A u)/dq does not depend on q (the
     * quartic, A = [1, 0, w]). genfun's analytic Newton matrix then skips the differences of d(A v)/dq
     * that stand in for them. `nhens check` verifies the declaration. */
    NH_SYS_AFFINE_CONSTRAINT = 1u << 1
};

/* What nh_system_type.coordinate_kinds says of a coordinate. */
enum nh_coordinate_kind {
    NH_COORDINATE_PLAIN = 0,      /* its value matters */
    NH_COORDINATE_ANGLE = 1,      /* V, A, M(q) and the basis are 2 pi-periodic in it */
    NH_COORDINATE_IGNORABLE = 2   /* V, A, M(q) and the basis do not depend on it */
};

/* The engine never calls a system's callbacks with an output array that overlaps an input, so they may
 * declare their array parameters restrict. */
typedef struct nh_system_type {
    const char *name;
    const char *summary;
    const char *reference;
    int n_params;
    const nh_param_def *params;
    unsigned flags;
    int n_presets;
    const nh_preset *presets;

    void (*dimensions)(const double *par, int *n, int *m);
    void (*mass)(const nh_system *s, double *diag);                 /* NULL: identity */
    double (*potential)(const nh_system *s, const double *q);
    void (*potential_gradient)(const nh_system *s, const double *q, double *grad);
    void (*potential_hessian)(const nh_system *s, const double *q, double *hess);
    void (*constraint)(const nh_system *s, const double *q, double *a);
    void (*constraint_jacobian_velocity)(const nh_system *s, const double *q, const double *u, double *out);
    void (*constraint_jacobian_multiplier)(const nh_system *s, const double *q, const double *lam, double *out);
    /* Draw q from the system's configuration distribution for energy-shell sampling. */
    void (*sample_configuration)(const nh_system *s, nh_pcg32 *rng, double *q);
    /* Infimum of V over the support of that distribution: the lowest reachable energy shell. */
    double (*minimum_energy)(const nh_system *s);
    /* Optional D* form (Celledoni et al. 2019, Sect. 2.2.1): an adapted basis X_1..X_r (r = n - m) of D_q,
     * X (n x r, X[i*r + a] = X_a^i) and its derivative dX[(i*r + a)*n + j] = d X_a^i / d q_j.
     * The Hamiltonian H(q, rho) = 1/2 rho^T g^-1 rho + V, g = X^T M X, the velocity v = X g^-1 rho and
     * the brackets C_ab^c rho_c = p^T [X_a, X_b] all follow from X and dX (methods/dstar.c). */
    void (*adapted_basis)(const nh_system *s, const double *q, double *x, double *dx);
    /* Optional, for the nonholonomically coupled systems of Modin & Verdier 2020 (eq. 7): the driver energy
     * h = 1/2 xi'^2 + V(xi); the passenger energy (eq. 6) is H - h. */
    double (*driver_energy)(const nh_system *s, const double *q, const double *v);
    /* Optional, nonholonomically coupled systems (Modin & Verdier 2020, Sect. 2.1): q = (x, xi) with the driver xi
     * last; at driver angle xi, the unit kernel vector k(xi) of A(xi) (n - 1 entries), kappa (rows x (n - 1),
     * K = kappa^T kappa) and f of U(x) = 1/2 x^T K x - f^T x. The reduced vector is u = (kappa x, v),
     * v = x'^T k(xi), and obeys eq. 10 (see nh_reduced_vector). */
    void (*coupled_structure)(const nh_system *s, double xi, double *k, double *kappa, int *kappa_rows, double *f);
    /* Optional configuration-dependent mass matrix (e.g. the Chaplygin sleigh): M(q) (n x n, SPD) and
     * dM[(i*n + j)*n + k] = d M_ij / d q_k. When set, `mass` is ignored and only methods flagged
     * NH_METHOD_GENERAL_MASS serve the system. */
    void (*mass_matrix)(const nh_system *s, const double *q, double *m);
    void (*mass_matrix_derivative)(const nh_system *s, const double *q, double *dm);
    /* Optional: a reduced (Euler-Poincare) system on a Lie algebra, e.g. the Suslov problem on so(3).
     * v is the algebra element, q a dummy coordinate that never moves, and the equations are
     * d/dt (M v) = ad*_v (M v) + A^T lam with (ad*_v p)_i = p . [v, e_i]; this is the bracket [u, w]. */
    void (*lie_bracket)(const nh_system *s, const double *u, const double *w, double *out);
    /* Optional, with adapted_basis: the entries of X and dX that may be nonzero at some q, as 1s in
     * x_mask (n r) and dx_mask (n r n), which the caller zeroes. A system that declares its pattern
     * writes every entry of the pattern in adapted_basis, zeros included, and no other entry: the caller
     * keeps the rest zero (nh_adapted_basis clears the arrays first), and the D* steppers then neither
     * clear nor scan the full arrays at each frame. `nhens check` verifies the declaration. */
    void (*adapted_basis_pattern)(const nh_system *s, unsigned char *x_mask, unsigned char *dx_mask);
    /* Optional: the coordinates whose size does not matter, as nh_coordinate_kind values in kind (n
     * entries, which the caller sets to NH_COORDINATE_PLAIN): an angle (V, A, the mass matrix and the
     * adapted basis are 2 pi-periodic in it) or an ignorable coordinate (none of them depends on it: the
     * position of a rolling or sliding body whose potential does not read it). A long run keeps such a
     * coordinate within [-2 pi, 2 pi], by whole turns or by whole units (nh_stepper_recentre), so that it
     * keeps the digits of a bounded one. `nhens check` verifies the declaration. */
    void (*coordinate_kinds)(const nh_system *s, unsigned char *kind);
} nh_system_type;

struct nh_system {
    const nh_system_type *type;
    nh_param_set params;
    int n, m;
    double mass[NH_MAX_DIM];
    double inv_mass[NH_MAX_DIM];
    void *data;     /* the user's state for the callbacks (NULL after nh_system_init; never freed by nhens) */
};

/* What a step reads of its system: n, m, the callbacks and M^-1, with the invariant 1 <= n <= NH_MAX_DIM
 * stated to the compiler (it lets gcc see that fixed-size work arrays filled in loops over n are written).
 * Code on a step's path reads the system through these accessors: the step kernels (methods/kernels.h)
 * compile the explicit steps again with each of them defined as one built-in system's constant. */
static inline int nh_dim(const nh_system *s)
{
    if (s->n < 1 || s->n > NH_MAX_DIM)
        __builtin_unreachable();
    return s->n;
}

static inline int nh_constraint_count(const nh_system *s)
{
    return s->m;
}

static inline const nh_system_type *nh_type(const nh_system *s)
{
    return s->type;
}

/* M^-1's diagonal for a constant mass (NULL `mass`: the identity) */
static inline const double *nh_inv_mass(const nh_system *s)
{
    return s->inv_mass;
}

/* The built-in systems (the registry, registry.h, starts with these). */
int nh_builtin_system_count(void);
const nh_system_type *nh_builtin_system_at(int i);

/* NH_OK if the descriptor has every callback that is not marked optional above (and an optional one's
 * partner: mass_matrix with mass_matrix_derivative, adapted_basis_pattern with adapted_basis), at most
 * NH_MAX_PARAMS parameters, and the definitions and presets its counts promise; else NH_ERR_INPUT with a
 * message that names the system and what is wrong. */
int nh_system_type_check(const nh_system_type *type, nh_error *err);

/* Build an instance (refused, as nh_system_type_check says, for an incomplete descriptor): defaults, then the preset's overrides (if preset != NULL), then `overrides`
 * (array of "name=value"). A user override that contradicts the preset is refused. */
int nh_system_init(nh_system *s, const nh_system_type *type, const nh_preset *preset,
                   const char *const *overrides, int n_overrides, nh_error *err);
const nh_preset *nh_system_find_preset(const nh_system_type *type, const char *name);
double nh_system_param(const nh_system *s, int index);

static inline int nh_has_variable_mass(const nh_system *s)
{
    return nh_type(s)->mass_matrix != NULL;
}

static inline int nh_is_reduced(const nh_system *s)
{
    return nh_type(s)->lie_bracket != NULL;
}

/* The loops over the m constraints, inlined with m a constant 1 (the quartic, the CVTs, the knife edge)
 * or m: the same operations, without a loop of one iteration per coordinate. `call` is a macro of m
 * that expands to a call of an always-inline function. */
#define NH_WITH_CONSTRAINT_COUNT(m, call) ((m) == 1 ? call(1) : call(m))

/* Mechanics shared by every method and observer (systems/mechanics.c). */
double nh_energy(const nh_system *s, const double *q, const double *v);
double nh_kinetic_energy(const nh_system *s, const double *q, const double *v);
/* X and dX at q (the system's adapted_basis) into arrays of any content: cleared first when the system
 * declares its pattern and so writes only the pattern's entries. */
void nh_adapted_basis(const nh_system *s, const double *q, double *x, double *dx);
/* M(q) as a full n x n matrix (the constant diagonal for most systems). */
void nh_mass_matrix(const nh_system *s, const double *q, double *m);
/* out = M(q)^-1 rhs; 1 if M(q) is not SPD. */
int nh_mass_solve(const nh_system *s, const double *q, const double *rhs, double *out);
/* Euclidean norm of A(q) v. */
double nh_constraint_residual(const nh_system *s, const double *q, const double *v);
/* C = A M(q)^-1 A^T (m x m), a = A(q). */
void nh_constraint_gram(const nh_system *s, const double *q, const double *a, double *c);
/* Curvature term (DA(q)[v]) v (m entries). */
void nh_constraint_curvature(const nh_system *s, const double *q, const double *v, double *out);
/* M-orthogonal projection of a velocity onto ker A(q); 1 if C is singular. */
int nh_project_velocity(const nh_system *s, const double *q, const double *w, double *out);
/* Continuous multiplier lambda*(q, v) = C^-1 [A M^-1 grad V - (DA[v]) v]. */
int nh_exact_multiplier(const nh_system *s, const double *q, const double *v, double *lam);
/* The same with a = A(q) and grad = grad V(q) already at hand. */
int nh_exact_multiplier_from(const nh_system *s, const double *q, const double *v, const double *a,
                             const double *grad, double *lam);
/* Reduced vector u = (kappa x, x'^T k(xi)) of a coupled system (Modin & Verdier 2020, eq. 9); returns its length
 * (kappa rows + 1), or 0 for a system without the coupled structure. */
int nh_reduced_vector(const nh_system *s, const double *q, const double *v, double *u);
/* Driver state (xi, xi') of a coupled system (the driver is the last coordinate, Modin & Verdier 2020, Sect. 2.1):
 * the phase-plane point on which Poincare sections of the driver are taken. Returns 0 for systems
 * without the coupled structure. */
int nh_driver_state(const nh_system *s, const double *q, const double *v, double *xi, double *xi_dot);

/* Index-1 ODE right-hand side: dq = v, dv = M^-1(-grad V + A^T lambda*); lam (may be NULL)
 * receives lambda*. */
int nh_index1_rhs(const nh_system *s, const double *q, const double *v, double *dq, double *dv, double *lam);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
