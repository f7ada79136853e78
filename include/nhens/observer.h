/* Observers of a plugin: a quantity of the state (a momentum, a heading) that a run records like the built-in
 * observers of nhens/stats.h, with their streaming statistics, quantiles, sample paths, figures and
 * per-trajectory reductions. A plugin adds one with nh_registry_add_observer (nhens/registry.h):
 *
 *     static void momentum(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
 *                          const nh_initial_values *init, double *out)
 *     {
 *         for (int i = 0; i < 3; ++i)
 *             out[i] = v[i];
 *     }
 *     static const nh_observer_type momentum_observer = {"p", "momentum (p_x, p_y, p_z)", 3, momentum, NULL, NULL};
 *
 * An observer of dimension d > 1 records d components named NAME_1 .. NAME_d; one of dimension 1 is NAME. */
#ifndef NHENS_OBSERVER_H
#define NHENS_OBSERVER_H

#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* What a trajectory carries from t = 0 (after any burn-in) to every observer. */
typedef struct nh_initial_values {
    double energy;
    double driver_energy;   /* 0 for systems without a driver */
} nh_initial_values;

/* The longest observer name, and the most components one observer has. */
enum { NH_OBSERVER_NAME_MAX = 24, NH_OBSERVER_MAX_DIM = 16 };

typedef struct nh_observer_type nh_observer_type;
struct nh_observer_type {
    const char *name;   /* 1-24 characters: a letter, then letters, digits or '_'; unique among the observers */
    const char *help;   /* one line for `nhens list` */
    int dim;            /* values it writes: 1 .. NH_OBSERVER_MAX_DIM */
    /* out[0 .. dim-1] at the state (q, v) of system s (v on D_q); init holds H and the driver energy at t = 0. It
     * is called from many threads at once, so it writes only out. A value that is not finite fails the
     * trajectory, as a non-finite built-in value does. */
    void (*value)(const nh_observer_type *self, const nh_system *s, const double *q, const double *v,
                  const nh_initial_values *init, double *out);
    int (*applies)(const nh_observer_type *self, const nh_system *s); /* NULL: every system; else 0 for a system it
                                                                         does not serve (it is then not recorded) */
    const void *data;   /* the plugin's own, for value and applies */
};

/* Whether `name` is an observer name (the rule above); the registry refuses a descriptor that is not: a
 * NULL value, a dimension outside 1 .. NH_OBSERVER_MAX_DIM, no help text. */
int nh_observer_name_ok(const char *name);
int nh_observer_type_check(const nh_observer_type *type, nh_error *err);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
