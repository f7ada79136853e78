/* Lane-batched stepping: L trajectories of one configured method on one system advanced in lockstep, their
 * states structure-of-arrays (coordinate i of lane l at [i * L + l]), so that one pass of the step's formulas
 * serves L trajectories in the vector registers of the CPU. A lane kernel is a method's step written once with
 * a loop over lanes inside each of its lines; within a lane it performs the scalar step's operations in the
 * scalar step's order (no contraction into FMA, no sum over lanes, one implementation of each transcendental
 * function), so a trajectory ends in the same bits whatever the lane count, the lane it runs in and the CPU's
 * vector width (tests/methods/test_lanes.c). A lane that fails is reported by its status and may be refilled
 * with another trajectory without changing any other lane's bits.
 *
 * Kernels exist for the explicit and linearly implicit methods (dla01, lf, spark2, rk4 and newmark with
 * beta = 0) and for dla, idla and dd solved by the built-in Newton (NH_SOLVER_NEWTON: its iterations batched over
 * the lanes, each lane's the scalar solve's) on the quartic (2 and 3 pairs), the CVT and the knife edge, each with
 * unit mass; for any other pair nh_lane_stepper_create returns NULL and the caller steps its trajectories one by
 * one (nh_stepper_step), which gives the same bits. */
#ifndef NHENS_LANES_H
#define NHENS_LANES_H

#include "nhens/method.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum { NH_MAX_LANES = 32 };

/* The instruction sets a lane kernel is compiled for; AUTO picks the widest the CPU has. */
typedef enum nh_lane_isa { NH_LANE_ISA_AUTO = 0, NH_LANE_ISA_SSE2, NH_LANE_ISA_AVX2, NH_LANE_ISA_AVX512 } nh_lane_isa;

/* The widest instruction set of this CPU that this build of nhens has lane kernels for (sse2 is the floor), and
 * its name ("sse2", "avx2", "avx512"); whether the CPU can run kernels of `isa` and the build has them. */
nh_lane_isa nh_lane_isa_best(void);
const char *nh_lane_isa_name(nh_lane_isa isa);
int nh_lane_isa_supported(nh_lane_isa isa);
/* The lane count that runs fastest on this CPU for the explicit kernels (bench/: 32 with AVX-512, 16 with AVX2 or
 * SSE2). */
int nh_lanes_default(void);

typedef struct nh_lane_stepper nh_lane_stepper;

/* Whether (method, system) solved by `solver` has a lane kernel: the configured method (a newmark with beta = 0
 * only; an implicit method with NH_SOLVER_NEWTON only) on a system whose kernel matches its type, size and unit
 * mass. */
int nh_lane_kernel_exists(const nh_method_spec *method, const nh_system *sys, nh_solver_kind solver);
/* The lane count that runs fastest for (method, system, solver) on this CPU: nh_lanes_default(), or the kernel's
 * own count where it is smaller, and nh_lanes_default() when no kernel serves the triple. dla, idla and dd (the
 * batched Newton, whose per-lane matrices and slowest lane's iterations grow with the batch) take 16 lanes
 * (docs/guide/scaling.md has the measurements). */
int nh_lanes_default_for(const nh_method_spec *method, const nh_system *sys, nh_solver_kind solver);
/* `lanes` (1 .. NH_MAX_LANES) lanes of the method of `scalar` (a stepper of it, which starts each trajectory
 * before it is loaded: nh_stepper_start, and any burn-in) for isa (AUTO: nh_lane_isa_best()); NULL with
 * an empty err->msg when no kernel serves the pair (nh_lane_kernel_exists), NULL with a message when out of
 * memory, `lanes` is out of range or the CPU lacks the isa. Every lane starts inactive. */
nh_lane_stepper *nh_lane_stepper_create(const nh_stepper *scalar, int lanes, nh_lane_isa isa, nh_error *err);
void nh_lane_stepper_free(nh_lane_stepper *ls);
int nh_lane_stepper_lanes(const nh_lane_stepper *ls);
nh_lane_isa nh_lane_stepper_isa(const nh_lane_stepper *ls);
/* Lane `lane` takes the trajectory that `from` (a stepper of the same method and system) has started and
 * stepped to (q, v, carried): its state, what the method keeps of its last step and the turns and units
 * recentring has taken off its coordinates. The lane is active from then on. */
void nh_lane_stepper_load(nh_lane_stepper *ls, int lane, const nh_stepper *from, const double *q, const double *v,
                          const double *carried);
/* The lane's state (n doubles each; carried: nh_stepper_carried_dim doubles, or NULL). */
void nh_lane_stepper_state(const nh_lane_stepper *ls, int lane, double *q, double *v, double *carried);
/* The solver work (solves, iterations, failures) of the lane's trajectory since it was loaded: the scalar
 * stepper's counts for the same steps. */
nh_solver_stats nh_lane_stepper_solver_stats(const nh_lane_stepper *ls, int lane);
/* The lane no longer counts: its failures are not reported and its state is not read until it is loaded again. */
void nh_lane_stepper_retire(nh_lane_stepper *ls, int lane);
int nh_lane_stepper_active(const nh_lane_stepper *ls, int lane);
/* Up to `steps` steps of h of every lane, each followed by the recentring of nh_stepper_recentre; stops after
 * the first step in which an active lane fails. Returns the steps taken; status[l] (L entries) is then NH_OK,
 * or the failed lane's NH_STEP_* status (a step that gives a non-finite state is NH_STEP_NONFINITE). */
long nh_lane_stepper_advance(nh_lane_stepper *ls, double h, long steps, int *status);
/* One step of every lane without the recentring (nh_lane_stepper_advance's steps = 1 otherwise), for a caller
 * that reads the lanes' states in the frame of the step before (a section crossing test), then
 * nh_lane_stepper_recentre: together the same bits as nh_lane_stepper_advance. Returns whether an active lane
 * failed (status as above). */
int nh_lane_stepper_step_unrecentred(nh_lane_stepper *ls, double h, int *status);
void nh_lane_stepper_recentre(nh_lane_stepper *ls);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
