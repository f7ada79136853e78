/* The round-off and failure sweep: every implicit method (flag implicit) on every system start of the
 * table below, with both solvers, a few trajectories of N steps each, stepped as a run steps them (angles
 * wrapped between steps). Per case it prints the failed trajectories with both solvers, whether the two
 * backends failed at the same steps, and for an energy-preserving method
 *   c = max_k |H_k - H_0| / (u sqrt(N) S),   u = 2^-53, S = max_k (|T_k| + |V_k|),
 * with N the implicit steps taken (the nonlinear solves: a triple jump's three per step),
 * Brouwer's law with its constant (docs/METHODS.md, "Round-off"). Not timed: it measures numbers, not speed.
 * --check exits 1 when an energy method's c exceeds --bound or a trajectory fails before it has left the
 * flow: a failure counts as the method's own (docs/METHODS.md §11) only when the trajectory's energy, or
 * its driver's energy, was already off by DEPARTED S.
 * usage: nhens_sweep [--steps N] [--trajectories K] [--bound C] [--check] [--only SYSTEM] */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nhens/ensemble.h"
#include "nhens/method_type.h"
#include "nhens/registry.h"

typedef struct sweep_start {
    const char *label;      /* printed name */
    const char *system;
    const char *param;      /* one override, or NULL */
    const char *preset;     /* a state preset (perturbed for trajectories > 0), or NULL: the shell below */
    double energy;
} sweep_start;

static const sweep_start STARTS[] = {
    {"quartic H=3.06", "quartic", "n=3", NULL, 3.06},
    {"hcvt H=1", "hcvt", NULL, NULL, 1.0},
    {"mvparticle H=1", "mvparticle", NULL, NULL, 1.0},
    {"dlparticle H=1", "dlparticle", NULL, NULL, 1.0},
    {"disk H=1", "disk", NULL, NULL, 1.0},
    {"vdisk H=1", "vdisk", NULL, NULL, 1.0},
    {"robot H=1", "robot", NULL, NULL, 1.0},
    {"sleigh H=1", "sleigh", NULL, NULL, 1.0},
    {"suslov H=1", "suslov", NULL, NULL, 1.0},
    {"cvt eps=0 oscillating", "cvt", "eps=0", "oscillating", 0.0},
    {"cvt eps=0.1 rotating", "cvt", "eps=0.1", "rotating", 0.0},
    {"cvt eps=0.5 rotating", "cvt", "eps=0.5", "rotating", 0.0},
    {"cvt eps=0.4 H=2 (gearbox)", "cvt", "eps=0.4", NULL, 2.0},
    {"knife eps=0 fig4", "knife", "eps=0", "modin2020-fig4", 0.0},
    {"knife eps=0.3 H=1", "knife", "eps=0.3", NULL, 1.0},
};
enum { N_STARTS = sizeof STARTS / sizeof STARTS[0], MAX_CASES = 512, MAX_TRAJECTORIES = 16 };

/* A failure is the method's own when, before it, the trajectory has left the flow: its energy is off by
 * this fraction of its initial S, or its driver's energy (which the exact flow of a coupled system keeps) by this
 * fraction of its initial size (at least 1e-3 of the initial S). */
static const double DEPARTED = 0.1;

static const double STEP = 0.1, UNIT_ROUNDOFF = 0x1p-53;

typedef struct sweep_result {
    char method[48];            /* the method's spec */
    int start;                  /* index in STARTS */
    int energy;                 /* the method claims energy preservation */
    int failed[2];              /* trajectories failed, per solver (0 kinsol, 1 newton) */
    long fail_step[2][MAX_TRAJECTORIES];   /* the step of each trajectory's failure, 0: none */
    double departure[2][MAX_TRAJECTORIES]; /* ... and how far it had left the flow by then (fraction of S) */
    double c[2];                /* Brouwer constant per solver (NaN: not an energy method or no step) */
    double scale;               /* the largest S of the case's completed trajectories */
    int skipped;                /* the method does not serve the system */
} sweep_result;

typedef struct sweep_settings {
    long steps;
    int trajectories;
    double bound;
    int check;
    const char *only;
    const nh_registry *reg;
} sweep_settings;

static int make_system(const sweep_start *st, const nh_registry *reg, nh_system *s)
{
    nh_error err;
    const nh_system_type *type = nh_registry_find_system(reg, st->system);
    const nh_preset *preset = st->preset ? nh_system_find_preset(type, st->preset) : NULL;
    const char *over[1] = {st->param};
    return nh_system_init(s, type, preset, over, st->param ? 1 : 0, &err);
}

static int start_state(const sweep_start *st, const nh_system *s, int index, double *q, double *v)
{
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, 1, (uint64_t)index);
    if (!st->preset)
        return nh_energy_shell_sample(s, st->energy, &rng, q, v);
    const nh_preset *p = nh_system_find_preset(s->type, st->preset);
    double change;
    return index == 0 ? nh_preset_state(s, p, q, v, &change) : nh_perturbed_state(s, p, 1e-2, &rng, q, v);
}

/* What one trajectory measured: the step of its failure (0: none), max |H - H0|, max (|T| + |V|), and
 * the largest departure from the flow, max(|H - H0| / S0, |h - h0| / max(|h0|, 1e-3 S0)) (S0: |T| + |V|
 * at the start; h: the driver energy, where the system has one). */
typedef struct trajectory_result {
    long failed, solves;
    double dh, scale, departure;
} trajectory_result;

static double driver_energy(const nh_system *s, const double *q, const double *v)
{
    return s->type->driver_energy ? s->type->driver_energy(s, q, v) : 0.0;
}

static trajectory_result run_trajectory(nh_stepper *stepper, const nh_system *s, const sweep_start *st, int index,
                                        long steps)
{
    double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS] = {0}, drift = 0.0;
    trajectory_result r = {0};
    if (start_state(st, s, index, q, v) || nh_stepper_start(stepper, q, v, carried)) {
        r.failed = -1;
        return r;
    }
    const long solves0 = nh_stepper_solver_stats(stepper).solves;
    const double h0 = nh_energy(s, q, v), driver0 = driver_energy(s, q, v), kinetic0 = nh_kinetic_energy(s, q, v);
    const double scale0 = fabs(kinetic0) + fabs(h0 - kinetic0);
    for (long k = 1; k <= steps && !r.failed; ++k) {
        if (nh_stepper_step(stepper, STEP, q, v, carried)) {
            r.failed = k;
            break;
        }
        nh_stepper_recentre(stepper, q);
        const double kinetic = nh_kinetic_energy(s, q, v), energy = nh_energy(s, q, v);
        r.scale = fmax(r.scale, fabs(kinetic) + fabs(energy - kinetic));
        r.dh = fmax(r.dh, fabs(energy - h0));
        drift = fmax(drift, fabs(driver_energy(s, q, v) - driver0));
    }
    r.departure = fmax(r.dh / scale0, drift / fmax(fabs(driver0), 1e-3 * scale0));
    r.solves = nh_stepper_solver_stats(stepper).solves - solves0;
    return r;
}

static void run_case(const sweep_settings *cfg, const nh_method_spec *spec, const nh_system *s, sweep_result *r)
{
    nh_error err;
    for (int solver = 0; solver < 2; ++solver) {
        nh_stepper *stepper = nh_stepper_create(spec, s, solver ? NH_SOLVER_NEWTON : NH_SOLVER_KINSOL, &err);
        r->c[solver] = NAN;
        if (!stepper) {
            r->skipped = 1;
            return;
        }
        double worst = NAN;
        for (int i = 0; i < cfg->trajectories; ++i) {
            const trajectory_result t = run_trajectory(stepper, s, &STARTS[r->start], i, cfg->steps);
            r->fail_step[solver][i] = t.failed;
            r->departure[solver][i] = t.departure;
            r->failed[solver] += t.failed != 0;
            const double n = (double)(t.solves > cfg->steps ? t.solves : cfg->steps);
            const double c = t.dh / (UNIT_ROUNDOFF * sqrt(n) * t.scale);
            if (!t.failed && t.scale > 0 && !(c <= worst))   /* (NaN worst: the first completed trajectory) */
                worst = c;
            if (!t.failed && t.scale > r->scale)
                r->scale = t.scale;
        }
        r->c[solver] = r->energy ? worst : NAN;
        nh_stepper_free(stepper);
    }
}

/* Whether every failed trajectory of the case had left the flow first (DEPARTED); the smallest departure of
 * a failed trajectory into *least. */
static int failures_are_the_methods_own(const sweep_settings *cfg, const sweep_result *r, double *least)
{
    *least = INFINITY;
    for (int solver = 0; solver < 2; ++solver)
        for (int i = 0; i < cfg->trajectories; ++i)
            if (r->fail_step[solver][i])
                *least = fmin(*least, r->departure[solver][i]);
    return !(*least < DEPARTED);
}

/* The row of one case; returns 1 when --check fails it. */
static int print_case(const sweep_settings *cfg, const sweep_result *r)
{
    const char *method = r->method, *start = STARTS[r->start].label;
    int same = 1;
    for (int i = 0; i < cfg->trajectories; ++i)
        same &= r->fail_step[0][i] == r->fail_step[1][i];
    char c[64] = "-";
    if (r->energy && r->scale > 0)
        snprintf(c, sizeof c, "%.2f / %.2f (S %.3g)", r->c[0], r->c[1], r->scale);
    double least;
    const int failed = r->failed[0] || r->failed[1], own = failures_are_the_methods_own(cfg, r, &least);
    const int bad = failed && !own;
    const int over = r->energy && !failed && !(r->c[0] <= cfg->bound && r->c[1] <= cfg->bound);
    char note[200] = "";
    int len = failed ? snprintf(note, sizeof note, "%s: had left the flow by %.2g first; at steps",
                                own ? "method's own" : "UNEXPECTED FAILURE", least) : 0;
    for (int i = 0; failed && i < cfg->trajectories && len < (int)sizeof note - 40; ++i)
        len += snprintf(note + len, sizeof note - (size_t)len, "%s %ld/%ld", i ? "," : "", r->fail_step[0][i],
                        r->fail_step[1][i]);
    printf("| %-21s | %-26s | %d / %d | %-4s | %-24s | %s\n", method, start, r->failed[0], r->failed[1],
           same ? "same" : "diff", c, over ? "ABOVE BOUND" : note);
    return bad || over;
}

static int parse(int argc, char **argv, sweep_settings *cfg)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--check"))
            cfg->check = 1;
        else if (!strcmp(a, "--steps") && next && (cfg->steps = strtol(next, &end, 10)) > 0 && !*end)
            ++i;
        else if (!strcmp(a, "--trajectories") && next && (cfg->trajectories = (int)strtol(next, &end, 10)) > 0 &&
                 cfg->trajectories <= MAX_TRAJECTORIES && !*end)
            ++i;
        else if (!strcmp(a, "--bound") && next && (cfg->bound = strtod(next, &end)) > 0 && !*end)
            ++i;
        else if (!strcmp(a, "--only") && next)
            cfg->only = argv[++i];
        else {
            fprintf(stderr, "nhens_sweep: bad argument '%s'\nusage: nhens_sweep [--steps N] [--trajectories K (1-%d)] "
                            "[--bound C] [--check] [--only SYSTEM]\n", a, MAX_TRAJECTORIES);
            return 1;
        }
    }
    return 0;
}

/* Compositions of energy methods (of the one-step ones: the D* methods carry their rho), beside every
 * registered method at its defaults. */
static const char *const COMPOSITIONS[] = {"triple-jump:inner=dd", "compose:inner=dd,coeffs=0.25/0.5/0.25",
                                           "triple-jump:inner=gonzalez-f"};
enum { N_COMPOSITIONS = sizeof COMPOSITIONS / sizeof COMPOSITIONS[0] };

/* The spec of method m: registered method m, then the compositions. */
static int method_spec(const nh_registry *reg, int m, nh_method_spec *spec, char *text, size_t len)
{
    nh_error err;
    const int registered = nh_registry_method_count(reg);
    snprintf(text, len, "%s", m < registered ? nh_registry_method_at(reg, m)->name : COMPOSITIONS[m - registered]);
    return nh_method_spec_parse(reg, spec, text, &err);
}

/* The cases: every implicit method that serves the start's system. */
static int list_cases(const sweep_settings *cfg, sweep_result *cases)
{
    int count = 0;
    for (int st = 0; st < N_STARTS; ++st) {
        nh_system s;
        if ((cfg->only && strcmp(cfg->only, STARTS[st].system)) || make_system(&STARTS[st], cfg->reg, &s))
            continue;
        for (int m = 0; m < nh_registry_method_count(cfg->reg) + N_COMPOSITIONS && count < MAX_CASES; ++m) {
            nh_method_spec spec;
            nh_error err;
            sweep_result *r = &cases[count];
            if (method_spec(cfg->reg, m, &spec, r->method, sizeof r->method))
                continue;
            const unsigned flags = nh_method_spec_flags(&spec);
            if (!(flags & NH_METHOD_IMPLICIT) || nh_method_spec_check(&spec, &s, &err))
                continue;
            r->start = st;
            r->energy = !!(flags & NH_METHOD_PRESERVES_ENERGY);
            ++count;
        }
    }
    return count;
}

int main(int argc, char **argv)
{
    nh_error err;
    sweep_settings cfg = {.steps = 10000, .trajectories = 2, .bound = 10.0};
    if (parse(argc, argv, &cfg))
        return 2;
    nh_registry *reg = nh_registry_create(&err);
    if (!reg) {
        fprintf(stderr, "nhens_sweep: %s\n", err.msg);
        return 2;
    }
    cfg.reg = reg;
    sweep_result *cases = calloc(MAX_CASES, sizeof *cases);
    if (!cases) {
        fprintf(stderr, "nhens_sweep: out of memory\n");
        nh_registry_free(reg);
        return 2;
    }
    const int count = list_cases(&cfg, cases);
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < count; ++i) {
        nh_system s;
        nh_method_spec spec;
        make_system(&STARTS[cases[i].start], reg, &s);
        nh_error parse_err;
        if (nh_method_spec_parse(reg, &spec, cases[i].method, &parse_err) == NH_OK)
            run_case(&cfg, &spec, &s, &cases[i]);
    }
    printf("%ld steps of h = %g, %d trajectories per case; failed kinsol / newton; c = max|dH| / (u sqrt(N) S), "
           "N the solves, S = max(|T| + |V|)\n", cfg.steps, STEP, cfg.trajectories);
    printf("| method                | start                      | failed | steps | c (kinsol / newton) | note\n");
    int bad = 0;
    for (int i = 0; i < count; ++i)
        if (!cases[i].skipped)
            bad += print_case(&cfg, &cases[i]);
    nh_registry_free(reg);
    free(cases);
    printf("%d of %d cases outside the expectations\n", bad, count);
    return cfg.check && bad ? 1 : 0;
}
