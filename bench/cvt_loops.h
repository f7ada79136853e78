/* The bench's bare loops of the CVT (cvt_loops.c): each method's formulas written out by hand for the CVT at
 * eps = 0.1 (cvt_formulas.h), the dimension a constant and nothing called but the shared sine and cosine, the
 * angle recentred as nhens recentres it. The scalar ceiling of the CVT's lockstep rows
 * (lockstep_loops.h), as bare_loops.c's loops are of the quartic's; run_interface is NULL. */
#ifndef NHENS_BENCH_CVT_LOOPS_H
#define NHENS_BENCH_CVT_LOOPS_H

#include "bare_loops.h"

/* The CVT loop of `method` (its registered name), or NULL when the bench has none. */
const bare_loop *cvt_bare_loop_for(const char *method);

#endif
