/* The observers of a run: the one table that decides what is measured at each output time and which
 * timeseries columns it produces. Its first rows are the built-in observers (a new built-in is a row of
 * BUILTIN_OBSERVERS); a run's table adds a row per component of each plugin observer (nhens/observer.h). */
#include "nhens/reference.h"
#include "nhens/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* States being observed together (a lane batch's at one output row, or one state): their values at t = 0 and the
 * energies that several built-in observers share, each computed once per state, when first asked for (the same
 * calls as computing them per observer, so the same bits). A built-in's formula fills out[j] for every state j
 * with the scalar formula's operations in its order, in loops over the states that vectorise. */
enum { OBSERVE_BATCH = 32 };
typedef struct observed_states {
    const nh_system *s;
    int count;
    const double *const *q, *const *v;
    double energy0[OBSERVE_BATCH], driver_energy0[OBSERVE_BATCH];   /* init's */
    double energy[OBSERVE_BATCH], driver_energy[OBSERVE_BATCH];
    int have_energy, have_driver_energy;
} observed_states;

static const double *energies(observed_states *st)
{
    for (int j = 0; !st->have_energy && j < st->count; ++j)
        st->energy[j] = nh_energy(st->s, st->q[j], st->v[j]);
    st->have_energy = 1;
    return st->energy;
}

static const double *driver_energies(observed_states *st)
{
    for (int j = 0; !st->have_driver_energy && j < st->count; ++j)
        st->driver_energy[j] = st->s->type->driver_energy(st->s, st->q[j], st->v[j]);
    st->have_driver_energy = 1;
    return st->driver_energy;
}

static void energy_error_of(observed_states *st, double *out)
{
    const double *e = energies(st), *e0 = st->energy0;
    for (int j = 0; j < st->count; ++j)
        out[j] = e[j] - e0[j];
}

static void relative_energy_error_of(observed_states *st, double *out)
{
    const double *e = energies(st), *e0 = st->energy0;
    for (int j = 0; j < st->count; ++j) {
        const double scale = fabs(e0[j]) > 0.0 ? fabs(e0[j]) : 1.0;
        out[j] = (e[j] - e0[j]) / scale;
    }
}

static void constraint_residual_of(observed_states *st, double *out)
{
    for (int j = 0; j < st->count; ++j)
        out[j] = nh_constraint_residual(st->s, st->q[j], st->v[j]);
}

static void driver_energy_error_of(observed_states *st, double *out)
{
    const double *d = driver_energies(st), *d0 = st->driver_energy0;
    for (int j = 0; j < st->count; ++j)
        out[j] = d[j] - d0[j];
}

static void passenger_energy_error_of(observed_states *st, double *out)
{
    const double *e = energies(st), *d = driver_energies(st), *e0 = st->energy0, *d0 = st->driver_energy0;
    for (int j = 0; j < st->count; ++j)
        out[j] = (e[j] - d[j]) - (e0[j] - d0[j]);
}

/* The rows' value functions (nh_observer.value): the formula above for one state. */
#define VALUE_OF_ONE_STATE(name)                                                                                   \
    static double name(const nh_system *s, const double *q, const double *v, const nh_initial_values *init)       \
    {                                                                                                              \
        observed_states st = {.s = s, .count = 1, .q = &q, .v = &v, .energy0 = {init->energy},                     \
                              .driver_energy0 = {init->driver_energy}};                                            \
        double value;                                                                                              \
        name##_of(&st, &value);                                                                                    \
        return value;                                                                                              \
    }
VALUE_OF_ONE_STATE(energy_error)
VALUE_OF_ONE_STATE(relative_energy_error)
VALUE_OF_ONE_STATE(constraint_residual)
VALUE_OF_ONE_STATE(driver_energy_error)
VALUE_OF_ONE_STATE(passenger_energy_error)
#undef VALUE_OF_ONE_STATE

static int has_driver(const nh_system *s)
{
    return s->type->driver_energy != NULL;
}

/* The built-in observers: the first rows of every run's table, so their indices are the same in all. */
#define BUILTIN_OBSERVERS \
        {"dH", "energy error H(t) - H(0)", energy_error, 3, \
         {{"dH_mean", NH_STAT_MEAN}, {"dH_var", NH_STAT_VARIANCE}, {"dH_absmax", NH_STAT_ABSMAX}}, NULL, 0, 1, "|dH|", \
         "dH_absmax", "H(t) − H(0)", "dH", 0, NULL, 0}, \
        {"rel_energy", "relative energy error (H(t) - H(0)) / |H(0)| (divided by 1 if H(0) = 0)", \
         relative_energy_error, 1, {{"rel_energy_absmax", NH_STAT_ABSMAX}}, NULL, 0, 0, "|dH|/|H0|", "rel_energy_absmax", \
         "(H(t) − H(0)) / |H(0)|", NULL, 0, NULL, 0}, \
        {"constraint", "constraint residual |A(q) v|", constraint_residual, 2, \
         {{"constraint_max", NH_STAT_ABSMAX}, {"constraint_rms", NH_STAT_RMS}}, NULL, 0, 0, "|A(q)v|", "constraint_max", "‖A(q)v‖", \
         "constraint", 0, NULL, 0}, \
        {"driver_energy", "driver energy error h(t) - h(0), Modin & Verdier 2020, eq. 7 (coupled systems)", \
         driver_energy_error, 2, {{"driver_dE_mean", NH_STAT_MEAN}, {"driver_dE_absmax", NH_STAT_ABSMAX}}, has_driver, 0, 0, \
         "|driver_energy error|", "driver_energy_absmax", "driver energy h(t) − h(0)", NULL, 0, NULL, 0}, \
        {"passenger_energy", "passenger energy error E(t) - E(0), Modin & Verdier 2020, eq. 6 (coupled systems)", \
         passenger_energy_error, 2, {{"passenger_dE_mean", NH_STAT_MEAN}, {"passenger_dE_absmax", NH_STAT_ABSMAX}}, \
         has_driver, 0, 0, "|passenger_energy error|", "passenger_energy_absmax", "passenger energy E(t) − E(0)", NULL, 0, NULL, 0}, \
        {"latitude", "latitude error at the driver's Poincare section (Modin & Verdier 2020, Sect. 3.2, Fig. 8; cvt, " \
         "hcvt); binned to the nearest output time, nan where no crossing fell; latitude_crossings counts the crossings of " \
         "each bin over the ensemble, so separate runs' bins combine as count-weighted means", NULL, 3, \
         {{"latitude_mean", NH_STAT_MEAN}, {"latitude_absmax", NH_STAT_ABSMAX}, {"latitude_crossings", NH_STAT_COUNT}}, nh_has_latitude, 1, 0, \
         "|latitude error|", "latitude_absmax", "latitude error (rad)", NULL, 0, NULL, 0}, \
        {"error", "global error |z(t) - z_ref(t)| / |z_ref(t)| of z = (q, v) against CVODE at rtol = atol = 1e-13 " \
         "integrated alongside each trajectory (opt-in: --observe all,error; work-precision panels)", NULL, 2, \
         {{"error_mean", NH_STAT_MEAN}, {"error_absmax", NH_STAT_ABSMAX}}, NULL, 0, 0, "|global error|", "error_absmax", \
         "‖z − z_ref‖ / ‖z_ref‖", "error", 1, NULL, 0},

static const nh_observer builtin_rows[] = {BUILTIN_OBSERVERS};
enum { N_BUILTIN = (int)(sizeof builtin_rows / sizeof builtin_rows[0]) };

/* The texts of a plugin observer's component (its name, columns, label and summary key). */
typedef struct component_text {
    char name[NH_OBSERVER_NAME_MAX + 8];
    char columns[3][NH_OBSERVER_NAME_MAX + 16];
    char label[NH_OBSERVER_NAME_MAX + 12];
} component_text;

struct nh_observer_table {
    int count;
    nh_observer entry[NH_MAX_OBSERVERS];
    component_text text[NH_MAX_OBSERVERS];   /* the rows of plugin observers point into these */
};

static const nh_observer_table builtin_table = {.count = N_BUILTIN, .entry = {BUILTIN_OBSERVERS}};

_Static_assert((int)N_BUILTIN <= (int)NH_MAX_OBSERVERS, "raise NH_MAX_OBSERVERS");
_Static_assert(sizeof(unsigned) * 8 >= NH_MAX_OBSERVERS, "observer masks are unsigned");

const nh_observer_table *nh_observer_table_builtin(void)
{
    return &builtin_table;
}

/* Whether `name` is taken in t: an observer's name or one of its columns. */
static int name_taken(const nh_observer_table *t, const char *name)
{
    for (int i = 0; i < t->count; ++i) {
        if (!strcmp(t->entry[i].name, name))
            return 1;
        for (int c = 0; c < t->entry[i].n_columns; ++c)
            if (!strcmp(t->entry[i].columns[c].name, name))
                return 1;
    }
    return 0;
}

/* Whether `name` names a plugin observer of t. */
static int group_taken(const nh_observer_table *t, const char *name)
{
    for (int i = 0; i < t->count; ++i)
        if (t->entry[i].plugin && !strcmp(t->entry[i].plugin->name, name))
            return 1;
    return 0;
}

/* Component `component` of plugin observer `type` as row t->count. */
static int add_component(nh_observer_table *t, const nh_observer_type *type, int component, nh_error *err)
{
    if (t->count == NH_MAX_OBSERVERS)
        return nh_fail(err, NH_ERR_INPUT, "observer '%s': too many observed values (at most %d, %d of them built in)",
                       type->name, NH_MAX_OBSERVERS, N_BUILTIN);
    component_text *tx = &t->text[t->count];
    char name[sizeof tx->name];
    if (type->dim == 1)
        snprintf(name, sizeof name, "%s", type->name);
    else
        snprintf(name, sizeof name, "%s_%d", type->name, component + 1);
    if (name_taken(t, name) || group_taken(t, name))
        return nh_fail(err, NH_ERR_INPUT, "observer '%s': the name '%s' is taken by another observer or column",
                       type->name, name);
    memcpy(tx->name, name, sizeof name);
    static const char *const suffix[3] = {"mean", "var", "absmax"};
    static const nh_stat_kind kind[3] = {NH_STAT_MEAN, NH_STAT_VARIANCE, NH_STAT_ABSMAX};
    nh_observer *o = &t->entry[t->count];
    *o = (nh_observer){.name = tx->name, .help = type->help, .n_columns = 3, .label = tx->label,
                       .extreme_key = tx->columns[2], .symbol = tx->name, .quantile_prefix = tx->name,
                       .plugin = type, .component = component};
    for (int c = 0; c < 3; ++c) {
        snprintf(tx->columns[c], sizeof tx->columns[c], "%s_%s", name, suffix[c]);
        o->columns[c] = (nh_column){tx->columns[c], kind[c]};
    }
    snprintf(tx->label, sizeof tx->label, "|%s|", name);
    ++t->count;
    return NH_OK;
}

nh_observer_table *nh_observer_table_create(const nh_observer_type *const *types, int n_types, nh_error *err)
{
    nh_observer_table *t = malloc(sizeof *t);
    if (!t) {
        nh_fail(err, NH_ERR_NOMEM, "out of memory for the observers");
        return NULL;
    }
    memcpy(t, &builtin_table, sizeof *t);
    for (int k = 0; k < n_types; ++k) {
        int rc = nh_observer_type_check(types[k], err);
        if (!rc && types[k]->dim > 1 && (name_taken(t, types[k]->name) || group_taken(t, types[k]->name)))
            rc = nh_fail(err, NH_ERR_INPUT, "observer '%s': the name '%s' is taken by another observer or column",
                         types[k]->name, types[k]->name);
        for (int c = 0; rc == NH_OK && c < types[k]->dim; ++c)
            rc = add_component(t, types[k], c, err);
        if (rc) {
            free(t);
            return NULL;
        }
    }
    return t;
}

void nh_observer_table_free(nh_observer_table *t)
{
    if (t != &builtin_table)
        free(t);
}

int nh_observer_index(const nh_observer_table *t, const char *name)
{
    for (int i = 0; i < t->count; ++i)
        if (strcmp(t->entry[i].name, name) == 0)
            return i;
    return -1;
}

int nh_observer_fitted(void)
{
    for (int i = 0; i < N_BUILTIN; ++i)
        if (builtin_rows[i].fitted)
            return i;
    __builtin_unreachable(); /* the table has one */
}

int nh_observer_event(void)
{
    for (int i = 0; i < N_BUILTIN; ++i)
        if (builtin_rows[i].event)
            return i;
    return -1;
}

int nh_observer_reference(void)
{
    for (int i = 0; i < N_BUILTIN; ++i)
        if (builtin_rows[i].versus_reference)
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
static unsigned all_observers(const nh_observer_table *t)
{
    unsigned mask = 0;
    for (int i = 0; i < t->count; ++i)
        if (!t->entry[i].versus_reference)
            mask |= 1u << i;
    return mask;
}

/* The names a selection may use: "all", every observer, and each plugin observer of several components. */
static int selectable_names(const nh_observer_table *t, const char **names)
{
    int n = 0;
    names[n++] = "all";
    for (int i = 0; i < t->count; ++i) {
        const nh_observer *o = &t->entry[i];
        if (o->plugin && o->plugin->dim > 1 && o->component == 0)
            names[n++] = o->plugin->name;
        names[n++] = o->name;
    }
    return n;
}

/* The mask of the word p[0..len): an observer, or every component of a plugin observer; 0 when unknown. */
static unsigned word_mask(const nh_observer_table *t, const char *p, size_t len)
{
    unsigned mask = 0;
    for (int i = 0; i < t->count; ++i) {
        const nh_observer *o = &t->entry[i];
        const char *group = o->plugin ? o->plugin->name : o->name;
        if ((strlen(o->name) == len && !strncmp(o->name, p, len)) || (strlen(group) == len && !strncmp(group, p, len)))
            mask |= 1u << i;
    }
    return mask;
}

int nh_observer_select(const nh_observer_table *t, const char *list, unsigned *mask, nh_error *err)
{
    *mask = 0;
    if (!list || strcmp(list, "all") == 0) {
        *mask = all_observers(t);
        return NH_OK;
    }
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        const unsigned found = len == 3 && !strncmp(p, "all", 3) ? all_observers(t) : word_mask(t, p, len);
        if (!found) {
            const char *known[2 * NH_MAX_OBSERVERS + 1];
            const int n_known = selectable_names(t, known);
            char word[64], near[128], names[1024];
            snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
            nh_join_names(known, n_known, names, sizeof names);
            return nh_fail(err, NH_ERR_INPUT, "unknown observer '%.*s'%s; known observers: %s", (int)len, p,
                           nh_did_you_mean(word, known, n_known, near, sizeof near), names);
        }
        *mask |= found;
        p += len + (p[len] == ',');
    }
    *mask |= 1u << nh_observer_fitted();
    return NH_OK;
}

/* Whether row o applies to s. */
static int applies(const nh_observer *o, const nh_system *s)
{
    if (o->plugin)
        return !o->plugin->applies || o->plugin->applies(o->plugin, s);
    return !o->applies || o->applies(s);
}

unsigned nh_observer_mask(const nh_observer_table *t, const nh_system *s)
{
    unsigned mask = 0;
    for (int i = 0; i < t->count; ++i)
        if (applies(&t->entry[i], s))
            mask |= 1u << i;
    return mask;
}

int nh_observer_core(const nh_observer *o)
{
    return !o->plugin && !o->applies;
}

int nh_observer_count(const nh_observer_table *t)
{
    return t->count;
}

const nh_observer *nh_observer_at(const nh_observer_table *t, int i)
{
    return (i >= 0 && i < t->count) ? &t->entry[i] : NULL;
}

int nh_observer_column_count(const nh_observer_table *t)
{
    int total = 0;
    for (int i = 0; i < t->count; ++i)
        total += t->entry[i].n_columns;
    return total;
}

void nh_initial_values_compute(const nh_system *s, const double *q, const double *v, nh_initial_values *init)
{
    init->energy = nh_energy(s, q, v);
    init->driver_energy = s->type->driver_energy ? s->type->driver_energy(s, q, v) : 0.0;
}

/* The formula behind a built-in row's value function (NULL for a row computed by the driver). */
static void (*formula_of(const nh_observer *o))(observed_states *, double *)
{
    static const struct {
        double (*value)(const nh_system *, const double *, const double *, const nh_initial_values *);
        void (*formula)(observed_states *, double *);
    } formulas[] = {{energy_error, energy_error_of}, {relative_energy_error, relative_energy_error_of},
                    {constraint_residual, constraint_residual_of}, {driver_energy_error, driver_energy_error_of},
                    {passenger_energy_error, passenger_energy_error_of}};
    for (size_t k = 0; k < sizeof formulas / sizeof formulas[0]; ++k)
        if (o->value == formulas[k].value)
            return formulas[k].formula;
    return NULL;
}

/* Row i of t for the states of st into values[j][i] (a plugin observer's components from i on). */
static void observe_row(const nh_observer_table *t, int i, int applies_here, observed_states *st,
                        const nh_initial_values *const *init, double *const *values)
{
    const nh_observer *o = &t->entry[i];
    if (o->plugin) {
        for (int j = 0; o->component == 0 && j < st->count; ++j)
            if (applies_here)
                o->plugin->value(o->plugin, st->s, st->q[j], st->v[j], init[j], values[j] + i);
            else
                for (int c = 0; c < o->plugin->dim; ++c)
                    values[j][i + c] = 0.0;
        return;
    }
    void (*formula)(observed_states *, double *) = applies_here ? formula_of(o) : NULL;
    double out[OBSERVE_BATCH];
    for (int j = 0; j < st->count; ++j)   /* a row the driver computes (o->value NULL) reports 0 here */
        out[j] = formula ? 0.0 : o->value && applies_here ? o->value(st->s, st->q[j], st->v[j], init[j]) : 0.0;
    if (formula)
        formula(st, out);
    for (int j = 0; j < st->count; ++j)
        values[j][i] = out[j];
}

/* Observers that do not apply to the system report 0 (and are not written); a plugin observer writes its
 * components at once, from its first row, state by state. The built-in rows share the states' energies. */
void nh_observe_states(const nh_observer_table *t, unsigned applying, const nh_system *s, int count,
                       const double *const *q, const double *const *v, const nh_initial_values *const *init,
                       double *const *values)
{
    for (int first = 0; first < count; first += OBSERVE_BATCH) {
        observed_states st = {.s = s, .count = count - first < OBSERVE_BATCH ? count - first : OBSERVE_BATCH,
                              .q = q + first, .v = v + first};
        for (int j = 0; j < st.count; ++j) {
            st.energy0[j] = init[first + j]->energy;
            st.driver_energy0[j] = init[first + j]->driver_energy;
        }
        for (int i = 0; i < t->count; ++i)
            observe_row(t, i, (applying >> i) & 1u, &st, init + first, values + first);
    }
}

void nh_observe_applying(const nh_observer_table *t, unsigned applying, const nh_system *s, const double *q,
                         const double *v, const nh_initial_values *init, double *values)
{
    nh_observe_states(t, applying, s, 1, &q, &v, &init, &values);
}

void nh_observe(const nh_observer_table *t, const nh_system *s, const double *q, const double *v,
                const nh_initial_values *init, double *values)
{
    nh_observe_applying(t, nh_observer_mask(t, s), s, q, v, init, values);
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

int nh_column_label(const nh_observer_table *t, const char *column, char *buf, size_t len)
{
    if (!strcmp(column, "t") || !strcmp(column, "n_live")) {
        snprintf(buf, len, "%s", column[0] == 't' ? "t" : "trajectories in the statistics");
        return 0;
    }
    const int fitted = nh_observer_fitted();
    const nh_observer *observers = t->entry;
    char scaled[96];
    snprintf(scaled, sizeof scaled, "%s_var_scaled", observers[fitted].name);
    if (!strcmp(column, scaled)) {
        char var[160];
        statistic_label(NH_STAT_VARIANCE, observers[fitted].symbol, var, sizeof var);
        snprintf(buf, len, "%s / h^(2r)", var);
        return 0;
    }
    for (int i = 0; i < t->count; ++i)
        for (int c = 0; c < observers[i].n_columns; ++c)
            if (!strcmp(column, observers[i].columns[c].name)) {
                statistic_label(observers[i].columns[c].kind, observers[i].symbol, buf, len);
                return 0;
            }
    return -1;
}
