/* The observers of a run: the one table that decides what is measured at each output time and
 * which timeseries columns it produces. Later observers (driver/passenger energy, latitude) are
 * new rows here. */
#include "nhens/reference.h"
#include "nhens/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

static double driver_energy_error(const nh_system *s, const double *q, const double *v, const nh_initial_values *init)
{
    return s->type->driver_energy(s, q, v) - init->driver_energy;
}

static double passenger_energy_error(const nh_system *s, const double *q, const double *v,
                                     const nh_initial_values *init)
{
    return (nh_energy(s, q, v) - s->type->driver_energy(s, q, v)) - (init->energy - init->driver_energy);
}

static int has_driver(const nh_system *s)
{
    return s->type->driver_energy != NULL;
}

static const nh_observer observers[] = {
    {"dH", "energy error H(t) - H(0)", energy_error, 3,
     {{"dH_mean", NH_STAT_MEAN}, {"dH_var", NH_STAT_VARIANCE}, {"dH_absmax", NH_STAT_ABSMAX}}, NULL, 0, 1, "|dH|",
     "dH_absmax", "H(t) − H(0)", "dH", 0},
    {"rel_energy", "relative energy error (H(t) - H(0)) / |H(0)| (divided by 1 if H(0) = 0)",
     relative_energy_error, 1, {{"rel_energy_absmax", NH_STAT_ABSMAX}}, NULL, 0, 0, "|dH|/|H0|", "rel_energy_absmax",
     "(H(t) − H(0)) / |H(0)|", NULL, 0},
    {"constraint", "constraint residual |A(q) v|", constraint_residual, 2,
     {{"constraint_max", NH_STAT_ABSMAX}, {"constraint_rms", NH_STAT_RMS}}, NULL, 0, 0, "|A(q)v|", "constraint_max", "‖A(q)v‖",
     "constraint", 0},
    {"driver_energy", "driver energy error h(t) - h(0), Modin & Verdier 2020, eq. 7 (coupled systems)",
     driver_energy_error, 2, {{"driver_dE_mean", NH_STAT_MEAN}, {"driver_dE_absmax", NH_STAT_ABSMAX}}, has_driver, 0, 0,
     "|driver_energy error|", "driver_energy_absmax", "driver energy h(t) − h(0)", NULL, 0},
    {"passenger_energy", "passenger energy error E(t) - E(0), Modin & Verdier 2020, eq. 6 (coupled systems)",
     passenger_energy_error, 2, {{"passenger_dE_mean", NH_STAT_MEAN}, {"passenger_dE_absmax", NH_STAT_ABSMAX}},
     has_driver, 0, 0, "|passenger_energy error|", "passenger_energy_absmax", "passenger energy E(t) − E(0)", NULL, 0},
    {"latitude", "latitude error at the driver's Poincare section (Modin & Verdier 2020, Sect. 3.2, Fig. 8; cvt, "
     "hcvt); binned to the nearest output time, nan where no crossing fell; latitude_crossings counts the crossings of "
     "each bin over the ensemble, so separate runs' bins combine as count-weighted means", NULL, 3,
     {{"latitude_mean", NH_STAT_MEAN}, {"latitude_absmax", NH_STAT_ABSMAX}, {"latitude_crossings", NH_STAT_COUNT}}, nh_has_latitude, 1, 0,
     "|latitude error|", "latitude_absmax", "latitude error (rad)", NULL, 0},
    {"error", "global error |z(t) - z_ref(t)| / |z_ref(t)| of z = (q, v) against CVODE at rtol = atol = 1e-13 "
     "integrated alongside each trajectory (opt-in: --observe all,error; work-precision panels)", NULL, 2,
     {{"error_mean", NH_STAT_MEAN}, {"error_absmax", NH_STAT_ABSMAX}}, NULL, 0, 0, "|global error|", "error_absmax",
     "‖z − z_ref‖ / ‖z_ref‖", "error", 1},
};

_Static_assert(sizeof observers / sizeof observers[0] <= NH_MAX_OBSERVERS, "raise NH_MAX_OBSERVERS");

int nh_observer_index(const char *name)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        if (strcmp(observers[i].name, name) == 0)
            return i;
    return -1;
}

int nh_observer_fitted(void)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        if (observers[i].fitted)
            return i;
    __builtin_unreachable(); /* the table has one */
}

int nh_observer_event(void)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        if (observers[i].event)
            return i;
    return -1;
}

int nh_observer_reference(void)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        if (observers[i].versus_reference)
            return i;
    return -1;
}

double nh_global_error(int n, const double *q, const double *v, const double *q_ref, const double *v_ref)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < n; ++i) {
        diff += (q[i] - q_ref[i]) * (q[i] - q_ref[i]) + (v[i] - v_ref[i]) * (v[i] - v_ref[i]);
        norm += q_ref[i] * q_ref[i] + v_ref[i] * v_ref[i];
    }
    return sqrt(diff) / (norm > 0.0 ? sqrt(norm) : 1.0);
}

/* Every observer "all" stands for. */
static unsigned all_observers(void)
{
    unsigned mask = 0;
    for (int i = 0; i < nh_observer_count(); ++i)
        if (!observers[i].versus_reference)
            mask |= 1u << i;
    return mask;
}

static void observer_names(char *buf, size_t len)
{
    const char *names[NH_MAX_OBSERVERS];
    for (int i = 0; i < nh_observer_count(); ++i)
        names[i] = observers[i].name;
    nh_join_names(names, nh_observer_count(), buf, len);
}

int nh_observer_select(const char *list, unsigned *mask, nh_error *err)
{
    *mask = 0;
    if (!list || strcmp(list, "all") == 0) {
        *mask = all_observers();
        return NH_OK;
    }
    char names[512];
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        if (len == 3 && !strncmp(p, "all", 3)) {
            *mask |= all_observers();
            p += len + (p[len] == ',');
            continue;
        }
        for (int i = 0; i < nh_observer_count() && found < 0; ++i)
            if (strlen(observers[i].name) == len && strncmp(observers[i].name, p, len) == 0)
                found = i;
        if (found < 0) {
            const char *known[NH_MAX_OBSERVERS + 1] = {"all"};
            char word[64], near[128];
            for (int i = 0; i < nh_observer_count() && i < NH_MAX_OBSERVERS; ++i)
                known[i + 1] = observers[i].name;
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
            observer_names(names, sizeof names);
            return nh_fail(err, NH_ERR_INPUT, "unknown observer '%.*s'%s; known observers: all, %s", (int)len, p,
                           nh_did_you_mean(word, known, nh_observer_count() + 1, near, sizeof near), names);
        }
        *mask |= 1u << found;
        p += len + (p[len] == ',');
    }
    *mask |= 1u << nh_observer_fitted();
    return NH_OK;
}

unsigned nh_observer_mask(const nh_system *s)
{
    unsigned mask = 0;
    for (int i = 0; i < nh_observer_count(); ++i)
        if (!observers[i].applies || observers[i].applies(s))
            mask |= 1u << i;
    return mask;
}

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
    init->driver_energy = s->type->driver_energy ? s->type->driver_energy(s, q, v) : 0.0;
}

/* Observers that do not apply to the system report 0 (and are not written). */
void nh_observe(const nh_system *s, const double *q, const double *v, const nh_initial_values *init,
                double *values)
{
    for (int i = 0; i < nh_observer_count(); ++i)
        values[i] = observers[i].value && (!observers[i].applies || observers[i].applies(s))
                        ? observers[i].value(s, q, v, init)
                        : 0.0;
}

/* "Var(H(t) − H(0))" from the observer's symbol and the column's statistic. */
static void statistic_label(nh_stat_kind kind, const char *symbol, char *buf, size_t len)
{
    switch (kind) {
    case NH_STAT_MEAN: snprintf(buf, len, "mean of %s", symbol); break;
    case NH_STAT_VARIANCE: snprintf(buf, len, "Var(%s)", symbol); break;
    case NH_STAT_ABSMAX: snprintf(buf, len, "max |%s|", symbol); break;
    case NH_STAT_RMS: snprintf(buf, len, "rms of %s", symbol); break;
    case NH_STAT_COUNT: snprintf(buf, len, "samples of %s", symbol); break;
    }
}

int nh_column_label(const char *column, char *buf, size_t len)
{
    if (!strcmp(column, "t") || !strcmp(column, "n_live")) {
        snprintf(buf, len, "%s", column[0] == 't' ? "t" : "trajectories in the statistics");
        return 0;
    }
    const int fitted = nh_observer_fitted();
    char scaled[96];
    snprintf(scaled, sizeof scaled, "%s_var_scaled", observers[fitted].name);
    if (!strcmp(column, scaled)) {
        char var[160];
        statistic_label(NH_STAT_VARIANCE, observers[fitted].symbol, var, sizeof var);
        snprintf(buf, len, "%s / h^(2r)", var);
        return 0;
    }
    for (int i = 0; i < nh_observer_count(); ++i)
        for (int c = 0; c < observers[i].n_columns; ++c)
            if (!strcmp(column, observers[i].columns[c].name)) {
                statistic_label(observers[i].columns[c].kind, observers[i].symbol, buf, len);
                return 0;
            }
    return -1;
}
