/* The bench's lockstep loops: the formulas of a system's scalar bare loops (bare_loops.c for the quartic n = 3,
 * cvt_loops.c for the CVT) with L trajectories advanced together. The state is structure-of-arrays (component
 * i of lane l at [i * L + l]) and every loop over lanes is innermost, with L a compile-time constant, so that
 * the compiler vectorises across trajectories. Within a lane the operations are those of the scalar loop in
 * the same order (no sum runs over lanes), so each trajectory's final state is bit for bit the scalar loop's;
 * nhens_bench checks it. They are the ceiling of any implementation of the same formulas that batches
 * trajectories. Each system's loops are compiled once per instruction set of nhens' lane kernels (sse2, avx2,
 * avx512, with the flags of those kernels: CMakeLists.txt's NHENS_LANE_FLAGS_*), so that nhens is compared
 * with the ceiling on the vectors it uses. */
#ifndef NHENS_BENCH_LOCKSTEP_LOOPS_H
#define NHENS_BENCH_LOCKSTEP_LOOPS_H

#include "bare_loops.h"
#include "nhens/lanes.h"

enum { LOCKSTEP_WIDTHS = 3, LOCKSTEP_MAX_LANES = 32 };

/* The lane counts, in the order of lockstep_loop.run: 8, 16, 32. */
int lockstep_lanes(int width);

typedef struct lockstep_loop {
    const char *method;       /* the registered method; its scalar loop is the system's bare loop of it */
    /* `steps` steps of size h of lockstep_lanes(w) trajectories, q and v of dim x L entries in place */
    void (*run[LOCKSTEP_WIDTHS])(double *q, double *v, double h, long steps);
} lockstep_loop;

typedef struct lockstep_set {
    int count;
    const lockstep_loop *loops;
} lockstep_set;

/* The lockstep loops of `system` ("quartic": n = 3, or "cvt": eps = 0.1) compiled for `isa` (AUTO: the
 * instruction set nhens' lane kernels use on this CPU, nh_lane_isa_best), *count of them; NULL for another
 * system or an instruction set the CPU lacks. */
const lockstep_loop *lockstep_loops(const char *system, nh_lane_isa isa, int *count);

/* For the loops' sources: method_L, the method's lockstep loop with L lanes (method_lanes(q, v, h, steps, L)
 * inlined with L a constant), and LOCKSTEP_SET, the includer's name for the set of the four methods. */
#define LOCKSTEP_WIDTH(method, lanes)                                                                  \
    static void method##_##lanes(double *q, double *v, double h, long steps)                           \
    {                                                                                                  \
        method##_lanes(q, v, h, steps, lanes);                                                         \
    }
#define LOCKSTEP_METHOD(method) LOCKSTEP_WIDTH(method, 8) LOCKSTEP_WIDTH(method, 16) LOCKSTEP_WIDTH(method, 32)
#define LOCKSTEP_ENTRY(method) {#method, {method##_8, method##_16, method##_32}}
#define LOCKSTEP_METHODS_AND_SET(a, b, c, d)                                                           \
    LOCKSTEP_METHOD(a) LOCKSTEP_METHOD(b) LOCKSTEP_METHOD(c) LOCKSTEP_METHOD(d)                         \
    static const lockstep_loop LOOPS[] = {LOCKSTEP_ENTRY(a), LOCKSTEP_ENTRY(b), LOCKSTEP_ENTRY(c),      \
                                          LOCKSTEP_ENTRY(d)};                                          \
    const lockstep_set LOCKSTEP_SET = {(int)(sizeof LOOPS / sizeof LOOPS[0]), LOOPS};

#endif
