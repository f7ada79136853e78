/* The observers of a run: the one table that decides what is measured at each output time and
 * which timeseries columns it produces. Later observers (driver/passenger energy, latitude) are
 * new rows here. */
#include "nhens/stats.h"

#include <math.h>

static double energy_error(const nh_system *s, const double *q, const double *v, const nh_initial_values *init)
{
    return nh_energy(s, q, v) - init->energy;
}

static double relative_energy_error(const nh_system *s, const double *q, const double *v,
                                    const nh_initial_values *init)
{
    double scale = fabs(init->energy) > 0.0 ? fabs(init->energy) : 1.0;
    return (nh_energy(s, q, v) - init->energy) / scale;
}

static double constraint_residual(const nh_system *s, const double *q, const double *v,
                                  const nh_initial_values *init)
{
    (void)init;
    return nh_constraint_residual(s, q, v);
}

static const nh_observer observers[] = {
    {"dH", "energy error H(t) - H(0)", energy_error, 3,
     {{"dH_mean", NH_STAT_MEAN}, {"dH_var", NH_STAT_VARIANCE}, {"dH_absmax", NH_STAT_ABSMAX}}},
    {"rel_energy", "relative energy error (H(t) - H(0)) / |H(0)| (divided by 1 if H(0) = 0)",
     relative_energy_error, 1, {{"rel_energy_absmax", NH_STAT_ABSMAX}}},
    {"constraint", "constraint residual |A(q) v|", constraint_residual, 2,
     {{"constraint_max", NH_STAT_ABSMAX}, {"constraint_rms", NH_STAT_RMS}}},
};

int nh_observer_count(void)
{
    return (int)(sizeof observers / sizeof observers[0]);
}

const nh_observer *nh_observer_at(int i)
{
    return (i >= 0 && i < nh_observer_count()) ? &observers[i] : NULL;
}

int nh_observer_column_count(void)
{
    int total = 0;
    for (int i = 0; i < nh_observer_count(); ++i)
        total += observers[i].n_columns;
    return total;
}

void nh_initial_values_compute(const nh_system *s, const double *q, const double *v, nh_initial_values *init)
{
    init->energy = nh_energy(s, q, v);
}

void nh_observe(const nh_system *s, const double *q, const double *v, const nh_initial_values *init,
                double *values)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        values[i] = observers[i].value(s, q, v, init);
}
