/* Checks of a system descriptor, for authors of new systems (`nhens check --system S`) and for the
 * test suite, which runs them on every built-in system: every supplied derivative against central
 * differences, the declarations (an affine A, a CVT-type A that its constraint force does not move, the
 * adapted basis' pattern, the coordinate kinds), the adapted basis in ker A, the D* form against the full
 * vector field, the index-1 field keeping A(q) v = 0 and the energy, and every preset (a state on D_q with a
 * finite energy, as a run checks it; a shell above min V). Each check reports the worst relative error over
 * random states of the system's sampler and passes below its tolerance (stated per row). */
#ifndef NHENS_CHECK_H
#define NHENS_CHECK_H

#include "nhens/system.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

enum { NH_CHECK_MAX_ROWS = 16 };   /* all 16 rows used; 16 since version 0.5.0 */

typedef struct nh_check_row {
    const char *name;       /* "grad V vs differences of V" */
    int applies;            /* 0: the system does not supply what this row checks */
    double worst;           /* largest error found (relative where the tolerance says so) */
    double tolerance;
    int passed;
} nh_check_row;

typedef struct nh_check_report {
    nh_check_row rows[NH_CHECK_MAX_ROWS];
    int n_rows;
    int points;             /* random states checked */
    int failed;             /* rows that apply and did not pass */
} nh_check_report;

/* `points` random configurations (states on the energy shell min V + 3 for the field checks) from
 * the system's sampler with `seed`. Returns NH_OK when the checks ran (see report->failed), or an error
 * when no state could be drawn. */
int nh_system_check(const nh_system *s, int points, uint64_t seed, nh_check_report *report, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
