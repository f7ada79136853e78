/* The bench's reference loops: each explicit or linearly implicit method's formulas written out by hand
 * for the quartic n = 3 (q = (x, w1..w3, z1..z3), M = I, one constraint x' + sum w_i z_i' = 0 whose row
 * A = [1, 0, w] depends on w only), the dimension a constant and nothing called. They are the practical
 * limit of any implementation of the same formulas; nhens_bench times each method against its own loop
 * and checks that the two give the same trajectory to round-off.
 * Beside each, the same formulas through the system's interface: every quantity of the system from its
 * descriptor's callbacks (grad V, the dense row A(q), d(A u)/dq), the dimension read at run time, M^-1
 * from s->inv_mass, for a system with one constraint. What separates these from the bare loops is the
 * interface's cost, which any code built on nh_system pays; what separates nhens' methods from these is
 * the methods' own. */
#ifndef NHENS_BENCH_BARE_LOOPS_H
#define NHENS_BENCH_BARE_LOOPS_H

#include "nhens/system.h"

enum { BARE_DIM = 7 };

typedef struct bare_loop {
    const char *method;       /* the registered method whose formulas it is */
    const char *formulas;     /* where they come from */
    /* `steps` steps of size h from (q, v), in place; a method carrying a multiplier starts it as nhens does */
    void (*run)(double *q, double *v, double h, long steps);
    /* the same steps through the interface of s (one constraint) */
    void (*run_interface)(const nh_system *s, double *q, double *v, double h, long steps);
} bare_loop;

/* The loops through the interface (interface_loops.c). */
void interface_dla01(const nh_system *s, double *q, double *v, double h, long steps);
void interface_lf(const nh_system *s, double *q, double *v, double h, long steps);
void interface_spark2(const nh_system *s, double *q, double *v, double h, long steps);
void interface_rk4(const nh_system *s, double *q, double *v, double h, long steps);

/* The loop of `method` (its registered name), or NULL when the bench has none. */
const bare_loop *bare_loop_for(const char *method);

/* Every loop, for the report: *count of them. */
const bare_loop *bare_loops(int *count);

#endif
