/* The D* form's shared pieces (methods-private): the step context, the workspace and the frame of
 * methods/dstar.c, which owns the frames, the discrete gradients and the step, and the analytic Newton
 * matrix of methods/dstar_jacobian.c. */
#ifndef NHENS_DSTAR_INTERNAL_H
#define NHENS_DSTAR_INTERNAL_H

#include "nhens/system.h"
#include "qrdiff.h"

#include <stdint.h>

enum { N = NH_MAX_DIM, Z = 2 * NH_MAX_DIM, MAX_NODES = 16, DSTAR_MATRIX_NODES = 2 };
typedef enum { BASIS_SYSTEM, BASIS_QR, BASIS_QR_FD } basis_kind;
typedef enum { DG_AVF, DG_GONZALEZ, DG_ITOH_ABE } dg_kind;

/* Descriptor data: which basis and which discrete gradient. */
typedef struct dstar_variant {
    basis_kind basis;
    dg_kind gradient;
} dstar_variant;

typedef struct dstar_method {
    basis_kind basis;
    dg_kind gradient;
    int nodes;
    double node[MAX_NODES], weight[MAX_NODES];   /* Gauss-Legendre on [0, 1] */
    /* AVF's Newton matrix integrates c Hess H(z0 + c delta) with at most DSTAR_MATRIX_NODES of its own
     * Gauss-Legendre points (exact for a Hessian of degree 2 DSTAR_MATRIX_NODES - 2 along the segment; an
     * error of O(|delta|^4) otherwise, at most 1e-4 of the matrix's O(1) part on the built-in systems at
     * h = 0.1, which leaves the chord iterations per step unchanged: 3.04 on the quartic with 2 or 3
     * points, and 2 cost two thirds of 3) */
    int matrix_nodes;
    double matrix_node[MAX_NODES], matrix_weight[MAX_NODES];
} dstar_method;

/* The nonzero pattern of X or dX. Adapted bases are sparse (the quartic's dX has 3 nonzeros of 294), so
 * the frame's products run over a list of positions. The list is a superset of the nonzeros, kept in
 * the workspace across evaluations: the system's declared pattern, or else one that only grows, when one
 * branch-free pass finds a nonzero outside it. It stays in ascending position order, so every sum adds
 * the same nonzero terms in the same order whatever the pattern's history (a listed zero adds an exact
 * 0). */
typedef struct pattern_entry {
    int j, a, i, k;   /* dX: dX_a^j / dq_i = dx[k]; X: X_a^i = x[k] (j unused) */
} pattern_entry;

typedef struct pattern_header {   /* in the workspace, so it persists across steps */
    int count;      /* listed positions */
    int declared;   /* 1: the system's declared pattern (adapted_basis_pattern), listed once; the basis
                     * writes nothing outside it, so the frames neither clear nor scan the dense array */
} pattern_header;

typedef struct pattern {
    int size;              /* positions of the dense array */
    pattern_header *head;
    pattern_entry *entry;
    uint64_t *listed;      /* ~0 at listed positions, else 0 (a zeroed workspace is the empty pattern) */
} pattern;

/* The diagonal blocks of g = X^T M X. With M diagonal, columns a and b of X couple only through a row
 * with entries in both, so the connected columns form blocks that are factored and solved alone: the
 * chains of dependent operations shorten (the quartic's r = 6 splits into 1 + 1 + 1 + 3), and the
 * arithmetic on the nonzeros is that of one dense L D L^T solve, so the results do not depend on the
 * blocks. Found from X's listed pattern, again whenever it changes. */
typedef struct metric_blocks {
    int count;
    int start[N + 1];   /* block k: columns column[start[k] .. start[k + 1]), ascending */
    int column[N];
    int factor_size;    /* doubles of the blocks' factors in w->g_blocks (sum of size^2) */
    int term_count;     /* metric terms (constant diagonal M): w->metric_terms[0 .. term_count) */
} metric_blocks;

/* The entries (a, b) of d = -C rho = D - D^T that can be nonzero, row by row (b ascending, a != b):
 * D_ab = sum p_j dX_a^j/dq_i X_b^i needs a listed dX_a^j/dq_i and a listed X_b^i in the same row i, and d
 * is D's skew part (every pair for a reduced system, whose d comes from the brackets). Pi's rho rows sum
 * over these only (the quartic's d has 6 entries of 36), and D is summed only into them. The skipped
 * products are exact zeros, so the sums keep their bits. Listed again whenever X's or dX's pattern
 * changes. */
typedef struct structure_pairs {
    int start[N + 1];   /* row a: columns column[start[a] .. start[a + 1]) */
    int column[N * N];
    int x_row[N + 1];   /* row i of X: its listed entries x_nz.entry[x_row[i] .. x_row[i + 1]) */
    int lower_count;    /* the pairs with b < a, row by row, as slots of d: lower[k] = a r + b, upper[k] = b r + a */
    int lower[N * N / 2], upper[N * N / 2];
} structure_pairs;

/* One product X_a^i M_ii X_b^i (b <= a, one row i) of g = X^T M X, added into the lower triangle of its
 * block's factor at `slot` of w->g_blocks. Listed in the order of X's entries (a's entry, then b's), so
 * each entry of g sums its rows in ascending order, as the dense product X^T (M X) does: same bits. */
typedef struct metric_term {
    double mass;                  /* M_ii */
    int left, right, slot;        /* X_a^i = x[left], X_b^i = x[right] */
} metric_term;

/* The bases of a step's last few points for a QR basis (gonzalez-r), which costs as much as the rest of a
 * frame: a step reads the basis at q0 three times (the signs, rho0 and H(z0)), the
 * Newton matrix's midpoint is the residual's at the guess, and the end point is the last residual's.
 * Valid for one step (its signs are chosen at the step's start): emptied when the workspace is laid out
 * for a step. A slot's X (and dX) already scanned into the listed patterns is not scanned again. */
enum { BASIS_CACHE_SLOTS = 3 };
typedef struct basis_cache {
    int count, next;   /* slots filled; the slot the next miss overwrites */
    int with_dx[BASIS_CACHE_SLOTS], covered_x[BASIS_CACHE_SLOTS], covered_dx[BASIS_CACHE_SLOTS];
    double *q[BASIS_CACHE_SLOTS], *x[BASIS_CACHE_SLOTS], *dx[BASIS_CACHE_SLOTS];   /* n, n r, n r n */
} basis_cache;

/* The velocity v = X y of the frame at z1 of a step's last two Gonzalez residuals, keyed by z1: the
 * step's end point is the last residual's z1 (or, after a polishing step that made |F| grow, the one
 * before), whose frame then need not be computed again. Valid for one step, like the basis cache. */
enum { END_POINT_SLOTS = 2 };
typedef struct end_points {
    int count, next;
    double *z1[END_POINT_SLOTS], *v[END_POINT_SLOTS];   /* dim, n */
} end_points;

/* Scratch sized by n and r, carved from one block (the stepper's workspace, allocated once in create).
 * The frame functions (dstar.c) and the Newton matrix (dstar_jacobian.c) use it one after another, never
 * two at once, so one set suffices. */
typedef struct dstar_work {
    double *x, *dx;             /* adapted basis at a point, n r and its derivative n r n */
    double *xp, *xm;            /* QR-basis differences (gonzalez-r:fd=1), n r each */
    double *mass, *mx, *g;      /* M (n n), M X (n r), g = X^T M X (r r) */
    double *g_blocks;           /* the factored diagonal blocks of g (at most r r) */
    metric_blocks *blocks;
    metric_term *metric_terms;  /* at most n r (r + 1) / 2 */
    structure_pairs *pairs;     /* the entries of d that Pi's rho rows read */
    double *dm;                 /* dM (n n n), M(q) systems */
    double *d;                  /* D_ab (r r) */
    double *fd;                 /* nh_fd_jacobian scratch */
    /* the analytic Newton matrix (dstar_jacobian.c): dy/dq_k, d(dX y)/dq_k and the rest, one row per k */
    double *u, *s, *ydot, *pdot;   /* n n, n r, n r, n n */
    double *x_shift, *dx_shift;    /* the basis at q + d e_k (n r, n r n) */
    double *dd;                    /* d(dX)/dq_k at the listed entries of dX (n r n) */
    double *hqq, *ginv;            /* V_ik - p^T (d2X/dq_i dq_k) y (n n), g^-1 (r r) */
    double *hess, *dgrad, *jpi;    /* Hess H, d grad_bar H / dz1, d(Pi(z) G)/dz (dim dim each) */
    double *grads;                 /* Itoh-Abe: grad H at the points of its walk (n dim) */
    double *dmetric;               /* Itoh-Abe: d(g^-1)/dq_k of one k (r r) */
    pattern x_nz, dx_nz;        /* the nonzero patterns of X and dX */
    basis_cache cache;          /* QR bases only (no slots otherwise) */
    end_points ends;            /* Gonzalez: v at the residuals' last z1 */
    nh_qr_work *qr;             /* Householder QR with derivatives */
} dstar_work;

typedef struct dstar_step {
    const nh_system *sys;
    const dstar_method *method;
    dstar_work *w;
    double h;
    int r, dim;
    double signs[NH_MAX_CON];
    double z0[Z];
    double energy0;
} dstar_step;

/* Everything the D* form needs at one point z = (q, rho), computed once and shared by H, grad H and
 * Pi(z): the basis X (and dX when asked) in the workspace with their nonzero lists, y = g^-1 rho with
 * g = X^T M X, v = X y and p = M v. The workspace holds one frame: a frame is valid until the next
 * frame_at. */
typedef struct dstar_frame {
    const double *z;
    int x_count, dx_count;   /* listed entries of the workspace's X and dX patterns (dx_count 0 without dX) */
    double y[N], v[N], p[N];
} dstar_frame;

/* The adapted basis at q into x (n r) and, when dx is not NULL, dX into dx (n r n); non-zero when the
 * QR basis fails. */
int nh_dstar_basis_at(const dstar_step *c, const double *q, double *x, double *dx);
/* The frame at z (with dX when with_dx); non-zero when g is not positive definite there. */
int nh_dstar_frame_at(const dstar_step *c, const double *z, int with_dx, dstar_frame *f);
/* out (n) = X y at the frame (y: r entries), over X's nonzero list */
void nh_dstar_basis_times(const dstar_step *c, const dstar_frame *f, const double *y, double *out);
/* ginv (r r) = g^-1, with the g that the last frame left factored; row a is g^-1 e_a */
void nh_dstar_inverse_metric(const dstar_step *c, double *ginv);
double nh_dstar_frame_energy(const dstar_step *c, const dstar_frame *f);
/* grad H at a frame with dX */
void nh_dstar_frame_gradient(const dstar_step *c, const dstar_frame *f, double *grad);
/* d (r r) = -C rho = D - D^T, D_ab = sum p_j dX_a^j/dq_i X_b^i, at a frame with dX, exactly skew: at the
 * structure pairs (all of d for a reduced system), the entries nh_dstar_apply_pi reads */
void nh_dstar_structure_matrix(const dstar_step *c, const dstar_frame *f, double *d);
/* out = Pi(z) G with d from nh_dstar_structure_matrix at the frame of z */
void nh_dstar_apply_pi(const dstar_step *c, const dstar_frame *f, const double *d, const double *grad, double *out);
/* out = Pi(z) in for `cols` columns at once (in, out: dim rows of cols, row-major); each column's
 * arithmetic is nh_dstar_apply_pi's */
void nh_dstar_apply_pi_columns(const dstar_step *c, const dstar_frame *f, const double *d, const double *in,
                               int cols, double *out);
int nh_dstar_hamiltonian_at(const dstar_step *c, const double *z, double *value);
/* The Itoh-Abe discrete gradient (13) at (z0, z1) into out, walking `point` (Z doubles) from z0 one
 * coordinate at a time. With grads (n dim) not NULL, also grad H at each point after q_i moved, into row
 * i (frames with dX), and *last (when not NULL) = the frame at the q loop's end (q1, rho0), whose z is
 * `point`, which then holds (q1, rho0). Non-zero when a frame fails. */
int nh_dstar_itoh_abe_gradient(const dstar_step *c, const double *z1, double *point, double *out, double *grads,
                               dstar_frame *last);

/* Whether the analytic Newton matrix serves the step's system (constant diagonal mass, not reduced); the
 * others difference the residual. */
int nh_dstar_has_analytic_jacobian(const dstar_step *c);
/* jac (dim dim) = d residual / d z1 of the step (14) at z1; non-zero when a frame fails. With res not
 * NULL (Gonzalez and Itoh-Abe only, whose matrix is built from the residual's own discrete gradient and
 * midpoint frame: nh_dstar_shares_residual), also the residual there, bit for bit. */
int nh_dstar_analytic_jacobian(const dstar_step *c, const double *z1, double *jac, double *res);
/* Whether nh_dstar_analytic_jacobian can give the residual with the matrix */
int nh_dstar_shares_residual(const dstar_step *c);
/* res = (z1 - z0)/h - Pi(mid) G, the residual of (14), at the midpoint frame f whose structure matrix
 * nh_dstar_structure_matrix left in the workspace's d */
void nh_dstar_residual_at(const dstar_step *c, const double *z1, const dstar_frame *f, const double *grad,
                          double *res);

#endif
