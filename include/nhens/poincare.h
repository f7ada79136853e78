/* Poincare sections of the driver and the latitude integral of Modin & Verdier 2020, Sect. 3.2 / Fig. 8. The section
 * is xi = xi0 (mod 2 pi) crossed in the direction of xi0'; crossings inside a step are located on the
 * cubic Hermite interpolant of the step (exact for cubics, O(h^4): consistent with the methods' orders
 * <= 3, better than the nearest step), and the state there is interpolated the same way (positions with
 * their velocities, velocities with their index-1 accelerations). The latitude of the reduced vector u is
 * asin(a . u/|u|) against the axis a of the exact driver-period monodromy, computed once per trajectory
 * with CVODE at tolerance 1e-12. */
#ifndef NHENS_POINCARE_H
#define NHENS_POINCARE_H

#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

typedef struct nh_section_tracker {
    int active;
    double xi0, direction;
    double axis[3];
    double latitude0;
    double period;
} nh_section_tracker;

/* Sets up the tracker for a trajectory from (q0, v0) and the section xi = section (mod 2 pi; NAN: the
 * initial driver angle). For another section the exact flow (CVODE, 1e-12) carries the state to the first
 * crossing, where the monodromy and the reference latitude are taken. Inactive (0 returned) when the
 * system has no latitude integral or the driver does not reach or return to the section. */
int nh_section_start(nh_section_tracker *tr, const nh_system *s, const double *q0, const double *v0, double section);
/* After a step (qa, va) -> (qb, vb) of size h from time ta: 1 and the crossing time and latitude error
 * when the driver crossed the section in the step, else 0. */
int nh_section_crossing(const nh_section_tracker *tr, const nh_system *s, const double *qa, const double *va,
                        const double *qb, const double *vb, double ta, double h, double *t_cross, double *error);
double nh_latitude(const double *axis, const double *u);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
