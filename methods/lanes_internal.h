/* The lane kernels' side of lanes.h (methods-private): the batch a kernel advances and the tables each
 * compiled kernel set exports. lane_steps.h writes the steps once; methods/CMakeLists generates one translation
 * unit per lane system (lane_system_*.h) and instruction set, which fixes the lane counts 4, 8, 16 and 32 at
 * compile time and serves any other count with the lane count read at run time. */
#ifndef NHENS_METHODS_LANES_INTERNAL_H
#define NHENS_METHODS_LANES_INTERNAL_H

#include "nhens/lanes.h"
#include "stepper.h"

/* A lane's status or flag: 64 bits, as wide as the doubles it is computed from, so that the loops that set it
 * vectorise. */
typedef long long lane_flag;

/* L lanes of one trajectory each, structure-of-arrays: component i of lane l at [i * L + l]. */
typedef struct nh_lane_batch {
    int lanes;
    const nh_system *sys;
    const double *system_par;   /* the system's parameter values */
    const double *method_par;   /* the method's (newmark's beta', alpha, discretisation) */
    double *q, *v;              /* n x L */
    double *carried;            /* lf's multiplier: 1 x L */
    double *grad, *a;           /* lf's end point: grad V and A at q, n x L each */
    double *turns, *offset;     /* n x L: recentring's turns of each angle and units of each ignorable coordinate */
    double *scratch;            /* NH_LANE_SCRATCH_ARRAYS x n x L: the copy of a step's start (lane_steps.h) */
    lane_flag *status;          /* L: NH_OK or the lane's failure in the last step */
    lane_flag *active;          /* L: 1 when the lane holds a trajectory */
    int span;                   /* the lanes an explicit kernel steps and every kernel's finite test covers: those up
                                   to the last active one, rounded up to NH_LANE_SPAN_QUANTUM (at most L); the
                                   lanes beyond hold no trajectory (the implicit kernels step all L) */
    unsigned char kind[NH_MAX_DIM];
    int recentred_kinds;        /* any coordinate is an angle or ignorable */
    int defer_recentring;       /* the caller recentres after the step (nh_lane_stepper_step_unrecentred) */
    int keeps_point;            /* lf: grad V and A at q are kept, and computed again when q is recentred */
    /* implicit methods (lane_newton.h) */
    double implicit_alpha;      /* dla's alpha (idla: 1/2; dd: not read) */
    double *history;            /* NH_LANE_HISTORY x (n + 1) x L: each lane's last solutions, newest first ... */
    double *history_h;          /* L: ... made with this step ... */
    lane_flag *history_count;   /* L: ... and how many (at most NH_LANE_HISTORY; nh_stepper_history's count) */
    double *newton;             /* NH_LANE_NEWTON_DOUBLES(n + 1) x L: the batched Newton's arrays */
    nh_solver_stats *solver;    /* L: each lane's solver work since its load */
    nh_stepper *fallback;       /* the scalar stepper of the steps a kernel leaves to it (nh_lane_scalar_step) */
} nh_lane_batch;

/* The span's unit: an AVX-512 vector of doubles. An ensemble's last trajectories fill the lowest lanes (the
 * engine fills free lanes in order), so that a worker's last round steps a vector or two, not all L lanes. */
enum { NH_LANE_SPAN_QUANTUM = 8 };

/* The solutions an implicit lane method keeps: its guess's quadratic reads three (NH_QUADRATIC_POINTS). */
enum { NH_LANE_HISTORY = 3 };
/* The batched Newton's workspace per lane for `dim` unknowns (lane_newton.h takes its arrays from it) */
#define NH_LANE_NEWTON_DOUBLES(dim) (24 * (dim) + 4 * (dim) * (dim))

/* The n x L arrays of the scratch: a fused kernel's copy of its step's start for the exact pass, q, v and lf's grad V
 * and A (4), and lf's multiplier (L values) */
enum { NH_LANE_SCRATCH_ARRAYS = 5 };

/* Steps of every lane, as nh_lane_stepper_advance. */
typedef long (*nh_lane_advance_fn)(nh_lane_batch *b, double h, long steps);

/* The lane methods, in the order of every kernel set's table. */
enum nh_lane_method {
    NH_LANE_DLA01, NH_LANE_LF, NH_LANE_SPARK2, NH_LANE_RK4, NH_LANE_NEWMARK0, NH_LANE_DLA, NH_LANE_DD, NH_LANE_METHODS
};
/* The compiled lane counts: 4, 8, 16, 32 and any (read at run time). */
enum { NH_LANE_WIDTHS = 5 };

typedef struct nh_lane_kernel_set {
    int (*matches)(const nh_system *sys);   /* the system is the one the set's formulas are */
    nh_lane_advance_fn advance[NH_LANE_METHODS][NH_LANE_WIDTHS];
} nh_lane_kernel_set;

/* The kernel sets of each instruction set (generated translation units), NULL-terminated lists. */
extern const nh_lane_kernel_set *const nh_lane_sets_sse2[];
extern const nh_lane_kernel_set *const nh_lane_sets_avx2[];
extern const nh_lane_kernel_set *const nh_lane_sets_avx512[];

/* The recentring of nh_stepper_recentre for lane l's coordinate i, which is beyond 2 pi (lanes.c); 1 when
 * it moved. */
int nh_lane_recentre_coordinate(nh_lane_batch *b, int i, int l);
/* One step of h of lane l by the scalar stepper b->fallback from the lane's state and step history (lanes.c):
 * the steps a batched Newton leaves to it (a history too short for its guess, a solve that failed). The lane's
 * state, history and solver work follow the step; returns its status. */
int nh_lane_scalar_step(nh_lane_batch *b, int l, double h);
/* lf's end point (grad V and A) of lane l from its q, through the system's callbacks (lanes.c) */
void nh_lane_keep_point(nh_lane_batch *b, int l);

#endif
