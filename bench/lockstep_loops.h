/* The bench's lockstep loops: the formulas of bare_loops.c, for the quartic n = 3, with L trajectories
 * advanced together. The state is structure-of-arrays (component i of lane l at [i * L + l]) and every
 * loop over lanes is innermost, with L a compile-time constant, so that the compiler vectorises across
 * trajectories. Within a lane the operations are those of the scalar loop in the same order (no sum runs
 * over lanes), so each trajectory's final state is bit for bit the scalar loop's; nhens_bench checks it.
 * They are the ceiling of any implementation of the same formulas that batches trajectories. */
#ifndef NHENS_BENCH_LOCKSTEP_LOOPS_H
#define NHENS_BENCH_LOCKSTEP_LOOPS_H

#include "bare_loops.h"

enum { LOCKSTEP_WIDTHS = 3, LOCKSTEP_MAX_LANES = 32 };

/* The lane counts, in the order of lockstep_loop.run: 8, 16, 32. */
int lockstep_lanes(int width);

typedef struct lockstep_loop {
    const char *method;       /* the registered method; its scalar loop is bare_loop_for(method) */
    /* `steps` steps of size h of lockstep_lanes(w) trajectories, q and v of BARE_DIM x L entries in place */
    void (*run[LOCKSTEP_WIDTHS])(double *q, double *v, double h, long steps);
} lockstep_loop;

/* Every lockstep loop: *count of them. */
const lockstep_loop *lockstep_loops(int *count);

#endif
