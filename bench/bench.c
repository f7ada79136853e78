/* nhens benchmarks: prints one JSON document with ns/step per method and solver on the quartic
 * (n = 3) and the pendulum CVT, ensemble throughput with 1 and 2 threads, and peak memory for
 * N = 100 and N = 10 000. The machine is noisy: every figure is the median of several repeats, and
 * the ratios compare runs interleaved in the same process.
 * The guard: every figure that can regress is also a ratio measured in the same run (an explicit or
 * linearly implicit method over a bare C loop of its own formulas on the quartic, from bare_loops.c, and
 * over the same formulas through the system's interface; KINSOL over the built-in Newton; a composition
 * over its stages of the inner method; 2 threads over 1);
 * --check compares them with a committed baseline and fails when one is worse by more than 2x (a lockstep
 * ratio: more than max(its target, 1.25x its baseline)). Beside
 * each two-thread speed-up, the speed-up of copies of DLA^{0,1}'s bare loop measured interleaved with it:
 * the machine's ceiling at that moment.
 * The lockstep rows: each explicit method's lockstep ceiling on the quartic and the CVT (lockstep_loops.h,
 * structure-of-arrays, 8, 16 and 32 trajectories in lockstep, compiled for the lane kernels' instruction set)
 * against its scalar loop, nhens' lane stepper and nhens' ensemble with its lanes and with one, side by side in
 * process CPU time; nhens over the lockstep loop is guarded with a target (ratio_bound), the rest reported. A
 * lockstep loop whose final states are not its scalar loop's bit for bit fails the run.
 * usage: nhens_bench [--quick] [--only lockstep] [--check BASELINE.json] [--write-baseline FILE] */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/method_type.h"
#include "nhens/registry.h"

#include "bare_loops.h"
#include "cvt_formulas.h"
#include "cvt_loops.h"
#include "lockstep_loops.h"

typedef struct bench_settings {
    int repeats;
    long steps_explicit, steps_implicit;
    long steps_lockstep;        /* steps of each trajectory of the lockstep comparison */
    double ensemble_T;          /* base horizon of the scaling runs */
    const nh_registry *reg;     /* the built-in systems and methods */
} bench_settings;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* The process's CPU time: the clock of every one-thread timing (methods, loops, lockstep rows). On a shared
 * machine the wall clock also counts the time the process waits for a core (docs/decisions/0021-lanes.md); the
 * scaling runs, whose threads run at once, use the wall clock. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, compare_doubles);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int make(const bench_settings *b, nh_system *s, const char *system, const char *param, nh_method_spec *m,
                const char *method)
{
    nh_error err;
    const char *over[1] = {param};
    if (nh_system_init(s, nh_registry_find_system(b->reg, system), NULL, over, 1, &err) ||
        nh_method_spec_parse(b->reg, m, method, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* The fixed state every timing starts from: trajectory 0 of seed 1 on the energy shell. */
static void start_state(const nh_system *s, double energy, double *q, double *v)
{
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, 1, 0);
    nh_energy_shell_sample(s, energy, &rng, q, v);
}

/* One timed repeat: ns per step of one trajectory from start_state, and the solver's iterations per
 * step. */
static double time_trajectory(nh_stepper *st, const nh_system *s, double energy, long steps, double *iterations)
{
    double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS];
    start_state(s, energy, q, v);
    nh_stepper_start(st, q, v, carried);
    const long before = nh_stepper_solver_stats(st).iterations;
    double t0 = cpu_seconds();
    for (long k = 0; k < steps; ++k)
        if (nh_stepper_step(st, 0.1, q, v, carried))
            break;
    const double ns = (cpu_seconds() - t0) / steps * 1e9;
    *iterations = (double)(nh_stepper_solver_stats(st).iterations - before) / steps;
    return ns;
}

/* How a reference loop runs: its bare formulas, or the same through the system's interface. */
enum { BARE = 0, THROUGH_INTERFACE = 1, LOOP_KINDS = 2 };

static void run_loop(const bare_loop *loop, int kind, const nh_system *quartic, double *q, double *v, long steps)
{
    if (kind == THROUGH_INTERFACE)
        loop->run_interface(quartic, q, v, 0.1, steps);
    else
        loop->run(q, v, 0.1, steps);
}

/* ns per step of `loop` run as `kind` from start_state (quartic n = 3, H = 3.06). */
static double time_bare_loop(const bare_loop *loop, int kind, const nh_system *quartic, long steps)
{
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    start_state(quartic, 3.06, q, v);
    double t0 = cpu_seconds();
    run_loop(loop, kind, quartic, q, v, steps);
    const double ns = (cpu_seconds() - t0) / steps * 1e9;
    volatile double sink = q[0] + v[0]; /* the result is used: the loop cannot be optimised away */
    (void)sink;
    return ns;
}

/* Median ns per step with each of `kinds` solvers, the repeats interleaved (kind 0, kind 1, kind 0, ...)
 * so that the machine's drift affects both alike; iterations per step of the last repeat. With a bare
 * loop (s is the quartic n = 3), it and then its run through the interface take their turns after them
 * in every repeat, for the same number of steps, and bare_ns[BARE], bare_ns[THROUGH_INTERFACE] are their
 * medians. */
static int ns_per_step(const nh_system *s, const nh_method_spec *m, const nh_solver_kind *kinds, int n_kinds,
                       double energy, long steps, int repeats, double *ns, double *iterations, const bare_loop *bare,
                       double bare_ns[LOOP_KINDS])
{
    nh_error err;
    nh_stepper *st[2] = {NULL, NULL};
    double times[2][16], bare_times[LOOP_KINDS][16];
    for (int k = 0; k < n_kinds; ++k)
        if (!(st[k] = nh_stepper_create(m, s, kinds[k], &err))) {
            nh_stepper_free(st[0]);
            return 1;
        }
    for (int r = 0; r < repeats; ++r) {
        for (int k = 0; k < n_kinds; ++k)
            times[k][r] = time_trajectory(st[k], s, energy, steps, &iterations[k]);
        for (int kind = 0; bare && kind < LOOP_KINDS; ++kind)
            bare_times[kind][r] = time_bare_loop(bare, kind, s, steps);
    }
    for (int k = 0; k < n_kinds; ++k) {
        ns[k] = median(times[k], repeats);
        nh_stepper_free(st[k]);
    }
    for (int kind = 0; bare && kind < LOOP_KINDS; ++kind)
        bare_ns[kind] = median(bare_times[kind], repeats);
    return 0;
}

/* Steps for about `budget` seconds per repeat, from a 50-step probe (the D* methods are 100x slower). */
static long steps_for_budget(const nh_system *s, const nh_method_spec *m, double energy, long cap, double budget)
{
    const nh_solver_kind newton = NH_SOLVER_NEWTON;
    double probe = -1, iterations;
    ns_per_step(s, m, &newton, 1, energy, 50, 1, &probe, &iterations, NULL, NULL);
    long steps = probe > 0 ? (long)(budget * 1e9 / probe) : cap;
    return steps < 50 ? 50 : steps > cap ? cap : steps;
}

/* The largest difference of q and v between nhens' method and its loop run as `kind` after 100 steps
 * from start_state: the same formulas, so round-off only (a chaotic system: it grows slowly with the steps). */
static double bare_loop_difference(const bench_settings *b, const bare_loop *loop, int kind)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    if (make(b, &s, "quartic", "n=3", &m, loop->method))
        return NAN;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], qb[NH_MAX_DIM], vb[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS], diff = 0;
    start_state(&s, 3.06, q, v);
    memcpy(qb, q, sizeof qb);
    memcpy(vb, v, sizeof vb);
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    if (!st)
        return NAN;
    nh_stepper_start(st, q, v, carried);
    for (long k = 0; k < 100; ++k)
        nh_stepper_step(st, 0.1, q, v, carried);
    nh_stepper_free(st);
    run_loop(loop, kind, &s, qb, vb, 100);
    for (int i = 0; i < s.n; ++i)
        diff = fmax(diff, fmax(fabs(q[i] - qb[i]), fabs(v[i] - vb[i])));
    return diff;
}

/* Each bare loop on its own (median ns per step), the same formulas through the system's interface
 * (interleaved with it) and each one's difference from nhens' method. */
static cJSON *bench_bare_loops(const bench_settings *b)
{
    nh_system s;
    nh_method_spec m;
    if (make(b, &s, "quartic", "n=3", &m, "dla01"))
        return NULL;
    int count;
    const bare_loop *loops = bare_loops(&count);
    cJSON *arr = cJSON_CreateArray();
    for (int k = 0; k < count; ++k) {
        double times[LOOP_KINDS][16];
        for (int r = 0; r < b->repeats; ++r)
            for (int kind = 0; kind < LOOP_KINDS; ++kind)
                times[kind][r] = time_bare_loop(&loops[k], kind, &s, b->steps_explicit);
        const double bare_ns = median(times[BARE], b->repeats), interface_ns = median(times[THROUGH_INTERFACE], b->repeats);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "method", loops[k].method);
        cJSON_AddStringToObject(o, "loop", loops[k].formulas);
        cJSON_AddNumberToObject(o, "ns_per_step", bare_ns);
        cJSON_AddNumberToObject(o, "max_difference_from_nhens_after_100_steps", bare_loop_difference(b, &loops[k], BARE));
        cJSON_AddNumberToObject(o, "through_interface_ns_per_step", interface_ns);
        cJSON_AddNumberToObject(o, "interface_over_bare", interface_ns / bare_ns);
        cJSON_AddNumberToObject(o, "through_interface_max_difference_from_nhens_after_100_steps",
                                bare_loop_difference(b, &loops[k], THROUGH_INTERFACE));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* One method's row: ns per step with Newton (and KINSOL, interleaved, for implicit methods), and for an
 * explicit or linearly implicit method on the quartic its bare loop and the same through the system's
 * interface, interleaved with it, and the method's ratios to both. */
static cJSON *bench_method(const char *system, const char *param, double energy, const char *name,
                           const bench_settings *b)
{
    nh_system s;
    nh_method_spec m;
    if (make(b, &s, system, param, &m, name))
        return NULL;
    const int implicit = (nh_method_spec_flags(&m) & NH_METHOD_IMPLICIT) != 0;
    const bare_loop *bare = strcmp(system, "quartic") == 0 && strcmp(param, "n=3") == 0 ? bare_loop_for(name) : NULL;
    long steps = steps_for_budget(&s, &m, energy, implicit ? b->steps_implicit : b->steps_explicit,
                                  b->repeats > 3 ? 0.1 : 0.02);
    const nh_solver_kind kinds[2] = {NH_SOLVER_NEWTON, NH_SOLVER_KINSOL};
    double ns[2], iterations[2], bare_ns[LOOP_KINDS] = {0};
    if (ns_per_step(&s, &m, kinds, implicit ? 2 : 1, energy, steps, b->repeats, ns, iterations,
                    bare, bare_ns))
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", name);
    cJSON_AddNumberToObject(o, "steps_timed", (double)steps);
    cJSON_AddNumberToObject(o, "ns_per_step", ns[0]);
    cJSON_AddNumberToObject(o, "steps_per_second", 1e9 / ns[0]);
    if (bare) {
        cJSON_AddNumberToObject(o, "bare_loop_ns_per_step_alongside", bare_ns[BARE]);
        cJSON_AddNumberToObject(o, "over_bare_loop", ns[0] / bare_ns[BARE]);
        cJSON_AddNumberToObject(o, "interface_loop_ns_per_step_alongside", bare_ns[THROUGH_INTERFACE]);
        cJSON_AddNumberToObject(o, "over_interface_loop", ns[0] / bare_ns[THROUGH_INTERFACE]);
    }
    if (implicit) {
        cJSON_AddStringToObject(o, "solver_of_ns_per_step", "newton");
        cJSON_AddNumberToObject(o, "newton_iterations_per_step", iterations[0]);
        cJSON_AddNumberToObject(o, "ns_per_step_kinsol", ns[1]);
        cJSON_AddNumberToObject(o, "kinsol_iterations_per_step", iterations[1]);
        cJSON_AddNumberToObject(o, "kinsol_over_newton", ns[1] / ns[0]);
    }
    return o;
}

/* A composition of `stages` steps of its inner method against that method, on the quartic: their
 * repeats alternate, the inner method taking `stages` times the steps, and over_stages is the
 * composition's median ns per step over `stages` times the inner method's. */
static cJSON *bench_composition(const char *composition, const char *inner, int stages, const bench_settings *b)
{
    nh_system s;
    nh_method_spec m[2];
    nh_stepper *st[2] = {NULL, NULL};
    double times[2][16], iterations[2], ns[2];
    nh_error err;
    if (make(b, &s, "quartic", "n=3", &m[0], composition) || make(b, &s, "quartic", "n=3", &m[1], inner))
        return NULL;
    for (int k = 0; k < 2; ++k)
        if (!(st[k] = nh_stepper_create(&m[k], &s, NH_SOLVER_NEWTON, &err))) {
            fprintf(stderr, "bench: %s\n", err.msg);
            nh_stepper_free(st[0]);
            return NULL;
        }
    const long steps = steps_for_budget(&s, &m[0], 3.06, b->steps_implicit, b->repeats > 3 ? 0.1 : 0.02);
    for (int r = 0; r < b->repeats; ++r)
        for (int k = 0; k < 2; ++k)
            times[k][r] = time_trajectory(st[k], &s, 3.06, k ? stages * steps : steps, &iterations[k]);
    for (int k = 0; k < 2; ++k) {
        ns[k] = median(times[k], b->repeats);
        nh_stepper_free(st[k]);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", composition);
    cJSON_AddStringToObject(o, "inner", inner);
    cJSON_AddNumberToObject(o, "stages", stages);
    cJSON_AddNumberToObject(o, "ns_per_step", ns[0]);
    cJSON_AddNumberToObject(o, "inner_ns_per_step_alongside", ns[1]);
    cJSON_AddNumberToObject(o, "newton_iterations_per_step", iterations[0]);
    cJSON_AddNumberToObject(o, "inner_newton_iterations_per_step", iterations[1]);
    cJSON_AddNumberToObject(o, "over_stages", ns[0] / (stages * ns[1]));
    return o;
}

/* The compositions the bench guards, against their stages of the inner method: at their default (newmark,
 * whose steps on the quartic are linear: the composition's own overhead), and the triple jump of dla (an
 * implicit inner method: the stages' histories). */
static const struct {
    const char *method, *inner;
    int stages;
} COMPOSITIONS[] = {{"triple-jump", "newmark", 3}, {"compose", "newmark", 2}, {"triple-jump:inner=dla", "dla", 3}};

static cJSON *bench_compositions(const bench_settings *b)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof COMPOSITIONS / sizeof COMPOSITIONS[0]; ++i) {
        cJSON *o = bench_composition(COMPOSITIONS[i].method, COMPOSITIONS[i].inner, COMPOSITIONS[i].stages, b);
        if (o)
            cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *bench_methods(const char *system, const char *param, double energy, const bench_settings *b)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = -1; i < nh_registry_method_count(b->reg); ++i) {   /* every registered method at its defaults, and DLA^0.4 */
        cJSON *o = bench_method(system, param, energy, i < 0 ? "dla:alpha=0.4" : nh_registry_method_at(b->reg, i)->name, b);
        if (o)
            cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* Every observer's name but the latitude's and the global error's, comma-separated: what the lockstep rows
 * record (a run recording the latitude steps its lanes one step at a time, for the section crossing test, and
 * one recording the global error uses one lane: nh_run_lanes). */
static const char *observers_of_lanes(char *buf, size_t size)
{
    const nh_observer_table *t = nh_observer_table_builtin();
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < nh_observer_count(t); ++i)
        if (i != nh_observer_event() && i != nh_observer_reference() && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "", nh_observer_at(t, i)->name);
    return buf;
}

/* Seconds of an ensemble of `method` on `system` (param, energy) as nhens runs it: n trajectories of seed 1,
 * h = 0.1, T, output every `every` steps, `threads` threads, `lanes` lanes (0: the default, nh_lanes_default),
 * recording `observe` (NULL: every observer that applies); -1 after a message when it fails. *lanes_used (if
 * given): the lanes it used. */
static double ensemble_seconds_of(const bench_settings *b, const char *system, const char *param, double energy,
                                  const char *method, int threads, int lanes, long n, double T, long every,
                                  const char *observe, int *lanes_used, double (*clock)(void))
{
    nh_system s;
    nh_method_spec m;
    if (make(b, &s, system, param, &m, method))
        return -1;
    nh_run_config cfg = {.system = &s, .method = m, .solver = NH_SOLVER_NEWTON, .h = 0.1, .T = T, .every = every,
                         .ensemble = n, .seed = 1, .threads = threads, .lanes = lanes, .energy = energy,
                         .fit_window_start = 0.5, .observe = observe};
    nh_run_result *res = nh_run_result_create();
    nh_error err = {0};
    double t0 = clock();
    if (!res || nh_run_ensemble(&cfg, res, &err)) {
        fprintf(stderr, "bench: %s\n", res ? err.msg : "out of memory");
        nh_run_result_free(res);
        return -1;
    }
    double dt = clock() - t0;
    if (lanes_used)
        *lanes_used = nh_run_lanes(&cfg, res);
    nh_run_result_free(res);
    return dt;
}

/* The quartic n = 3 at H = 3.06 with the default lanes (the scaling runs). */
static double ensemble_seconds(const bench_settings *b, const char *method, int threads, long n, double T, long every)
{
    return ensemble_seconds_of(b, "quartic", "n=3", 3.06, method, threads, 0, n, T, every, NULL, NULL, now_seconds);
}

/* The machine's own two-thread ceiling at the moment of a scaling run: `items` copies of the bare loop
 * `copies` (`steps` steps each from start_state) over `threads` threads, in seconds. The copies share
 * nothing, so two threads over one is what this machine's two cores give a perfectly parallel kernel
 * (on shared virtual machines it varies from run to run; docs/decisions/0017). */
static double parallel_bare_seconds(const bare_loop *copies, const nh_system *quartic, int threads, int items,
                                    long steps)
{
    double q0[NH_MAX_DIM], v0[NH_MAX_DIM], sum = 0.0;
    start_state(quartic, 3.06, q0, v0);
    const double t0 = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : sum)
    for (int i = 0; i < items; ++i) {
        double q[NH_MAX_DIM], v[NH_MAX_DIM];
        memcpy(q, q0, sizeof q);
        memcpy(v, v0, sizeof v);
        copies->run(q, v, 0.1, steps);
        sum += q[0];
    }
    const double seconds = now_seconds() - t0;
    volatile double sink = sum; /* the results are used: the loops cannot be optimised away */
    (void)sink;
    return seconds;
}

/* The horizon of a scaling run: T = 2000 for dla01 (2000 output times) and 100 for dd, so that a
 * one-thread run lasts a few tenths of a second. Shorter runs measure thread start-up. A longer dla01 run
 * is a different load, not a longer measurement of the same one: its many more output times'
 * accumulators fit the caches less well. */
static double scaling_horizon(const char *method, const bench_settings *b)
{
    return (strcmp(method, "dla01") == 0 ? 100 : 5) * b->ensemble_T;
}

static cJSON *bench_scaling(const char *method, const bench_settings *b)
{
    const double T = scaling_horizon(method, b);
    const long n = 200;
    nh_system quartic;
    nh_method_spec m;
    if (make(b, &quartic, "quartic", "n=3", &m, method))
        return NULL;
    /* DLA^{0,1}'s bare loop's copies: as many as trajectories, together as long as the first one-thread run */
    const bare_loop *copies = bare_loop_for("dla01");
    const double bare_ns = time_bare_loop(copies, BARE, &quartic, 100000);
    /* More repeats than the other figures: a repeat (two ensembles, two bare-loop runs) is short,
     * and the speed-up is the figure the host's noise moves most. */
    enum { MAX_SCALING_REPEATS = 16 };
    const int reps = 2 * b->repeats - 1 < MAX_SCALING_REPEATS ? 2 * b->repeats - 1 : MAX_SCALING_REPEATS;
    double one[MAX_SCALING_REPEATS], two[MAX_SCALING_REPEATS], speedups[MAX_SCALING_REPEATS],
        ceilings[MAX_SCALING_REPEATS], lane_gains[MAX_SCALING_REPEATS];
    long bare_steps = 0;
    for (int r = 0; r < reps; ++r) { /* interleaved, so drift in machine load hits all six */
        one[r] = ensemble_seconds(b, method, 1, n, T, 10);
        two[r] = ensemble_seconds(b, method, 2, n, T, 10);
        /* one thread, --lanes 1 over the default lanes, in process CPU time as the other one-thread figures */
        lane_gains[r] = ensemble_seconds_of(b, "quartic", "n=3", 3.06, method, 1, 1, n, T, 10, NULL, NULL, cpu_seconds) /
                        ensemble_seconds_of(b, "quartic", "n=3", 3.06, method, 1, 0, n, T, 10, NULL, NULL, cpu_seconds);
        if (!bare_steps)
            bare_steps = (long)fmax(1000.0, one[0] / (double)n / (bare_ns * 1e-9));
        const double bare_one = parallel_bare_seconds(copies, &quartic, 1, (int)n, bare_steps);
        const double bare_two = parallel_bare_seconds(copies, &quartic, 2, (int)n, bare_steps);
        speedups[r] = one[r] / two[r]; /* each pair side by side, as the ceiling's */
        ceilings[r] = bare_one / bare_two;
    }
    const double t1 = median(one, reps), t2 = median(two, reps), steps = n * (T / 0.1);
    const double speedup = median(speedups, reps), ceiling = median(ceilings, reps);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", method);
    cJSON_AddNumberToObject(o, "trajectories", (double)n);
    cJSON_AddNumberToObject(o, "trajectory_steps", steps);
    cJSON_AddNumberToObject(o, "steps_per_second_1_thread", steps / t1);
    cJSON_AddNumberToObject(o, "steps_per_second_2_threads", steps / t2);
    cJSON_AddNumberToObject(o, "speedup_2_threads", speedup);
    cJSON_AddNumberToObject(o, "bare_loop_speedup_2_threads", ceiling);
    cJSON_AddNumberToObject(o, "parallel_efficiency", speedup / ceiling);
    cJSON_AddNumberToObject(o, "lanes_speedup", median(lane_gains, reps));
    return o;
}


/* The lockstep ceiling of a system: LOCKSTEP_MAX_LANES trajectories (trajectories 0.. of seed 1 on the system's
 * energy, as nhens' ensembles draw them), each advanced `steps` steps by the system's scalar bare loop, by the
 * lockstep loop of each lane count (compiled for the instruction set of nhens' lane kernels), and by nhens'
 * ensemble path with one thread, with its default lanes and with one lane (--lanes 1), the six interleaved in
 * every repeat. States are stored trajectory after trajectory (trajectory j at [j * dim]). */
enum { LOCKSTEP_TRAJECTORIES = LOCKSTEP_MAX_LANES, LOCKSTEP_STATE = BARE_DIM * LOCKSTEP_TRAJECTORIES };
/* nhens' ensemble records every 50th step: the full bench's 50 000 steps give the default study's
 * about 1000 output rows, and the quick bench observes as densely. */
enum { LOCKSTEP_EVERY = 50 };
/* At least this many repeats: the guarded ratios' bound is 1.25x their baseline (ratio_bound) */
enum { LOCKSTEP_REPEATS = 5 };

/* A system of the lockstep rows: its bench row's parameters, its scalar loops, the section and ratio names. */
typedef struct lockstep_system {
    const char *name, *param;
    double energy;
    int dim;
    const char *section, *ratio;               /* "lockstep_quartic", "over_lockstep" */
    const bare_loop *(*scalar_loop)(const char *method);
} lockstep_system;

static const lockstep_system LOCKSTEP_SYSTEMS[] = {
    {"quartic", "n=3", 3.06, BARE_DIM, "lockstep_quartic", "over_lockstep", bare_loop_for},
    {"cvt", "eps=0.1", 6.0, CVT_DIM, "lockstep_cvt", "over_lockstep_cvt", cvt_bare_loop_for},
};
enum { LOCKSTEP_SYSTEM_COUNT = sizeof LOCKSTEP_SYSTEMS / sizeof LOCKSTEP_SYSTEMS[0] };

/* The system whose lockstep ratio is `ratio`, or NULL. */
static const lockstep_system *lockstep_system_of_ratio(const char *ratio, size_t length)
{
    for (int k = 0; k < LOCKSTEP_SYSTEM_COUNT; ++k)
        if (strlen(LOCKSTEP_SYSTEMS[k].ratio) == length && strncmp(LOCKSTEP_SYSTEMS[k].ratio, ratio, length) == 0)
            return &LOCKSTEP_SYSTEMS[k];
    return NULL;
}

/* The system as nhens builds it, checked against what the loops assume (dimension, eps, unit mass). */
static int lockstep_system_make(const bench_settings *b, const lockstep_system *sys, const char *method, nh_system *s)
{
    nh_method_spec m;
    if (make(b, s, sys->name, sys->param, &m, method))
        return 1;
    int same = s->n == sys->dim && s->m == 1;
    for (int i = 0; same && i < s->n; ++i)
        same = s->inv_mass[i] == 1.0;
    if (same && strcmp(sys->name, "cvt") == 0)
        same = s->params.value[0] == CVT_LOOP_EPS;
    if (!same)
        fprintf(stderr, "nhens_bench: the %s (%s) is not the system of its bench loops\n", sys->name, sys->param);
    return !same;
}

static int lockstep_start(const nh_system *s, double energy, double *q, double *v)
{
    const int n = s->n;
    for (int j = 0; j < LOCKSTEP_TRAJECTORIES; ++j) {
        double qj[NH_MAX_DIM], vj[NH_MAX_DIM];
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, 1, (uint64_t)j);
        if (nh_energy_shell_sample(s, energy, &rng, qj, vj))
            return 1;
        memcpy(q + j * n, qj, (size_t)n * sizeof *q);
        memcpy(v + j * n, vj, (size_t)n * sizeof *v);
    }
    return 0;
}

/* ns per trajectory-step of the scalar loop from (q0, v0), one trajectory after another; final states
 * in (q, v). */
static double time_scalar_trajectories(const bare_loop *loop, int dim, const double *q0, const double *v0, double *q,
                                       double *v, long steps)
{
    memcpy(q, q0, (size_t)(dim * LOCKSTEP_TRAJECTORIES) * sizeof *q);
    memcpy(v, v0, (size_t)(dim * LOCKSTEP_TRAJECTORIES) * sizeof *v);
    const double t0 = cpu_seconds();
    for (int j = 0; j < LOCKSTEP_TRAJECTORIES; ++j)
        loop->run(q + j * dim, v + j * dim, 0.1, steps);
    return (cpu_seconds() - t0) / ((double)steps * LOCKSTEP_TRAJECTORIES) * 1e9;
}

/* The same with `run`, batches of `lanes` trajectories copied into and out of structure-of-arrays form
 * (inside the timing: a batched engine pays it too); the fastest of LOCKSTEP_TRIES runs, as a ceiling is (a
 * quick row's loop runs for about a millisecond, which one interruption can double). */
enum { LOCKSTEP_TRIES = 3 };
static double lockstep_seconds(void (*run)(double *, double *, double, long), int lanes, int dim, const double *q0,
                               const double *v0, double *q, double *v, long steps)
{
    double qs[LOCKSTEP_STATE], vs[LOCKSTEP_STATE];
    const double t0 = cpu_seconds();
    for (int first = 0; first < LOCKSTEP_TRAJECTORIES; first += lanes) {
        for (int l = 0; l < lanes; ++l)
            for (int i = 0; i < dim; ++i) {
                qs[i * lanes + l] = q0[(first + l) * dim + i];
                vs[i * lanes + l] = v0[(first + l) * dim + i];
            }
        run(qs, vs, 0.1, steps);
        for (int l = 0; l < lanes; ++l)
            for (int i = 0; i < dim; ++i) {
                q[(first + l) * dim + i] = qs[i * lanes + l];
                v[(first + l) * dim + i] = vs[i * lanes + l];
            }
    }
    return cpu_seconds() - t0;
}

static double time_lockstep_trajectories(void (*run)(double *, double *, double, long), int lanes, int dim,
                                         const double *q0, const double *v0, double *q, double *v, long steps)
{
    double fastest = INFINITY;
    for (int attempt = 0; attempt < LOCKSTEP_TRIES; ++attempt)
        fastest = fmin(fastest, lockstep_seconds(run, lanes, dim, q0, v0, q, v, steps));
    return fastest / ((double)steps * LOCKSTEP_TRAJECTORIES) * 1e9;
}

/* The first trajectory whose final state differs in any bit, or -1. */
static int first_differing_trajectory(int dim, const double *q, const double *v, const double *q_ref,
                                      const double *v_ref)
{
    for (int j = 0; j < LOCKSTEP_TRAJECTORIES; ++j)
        if (memcmp(q + j * dim, q_ref + j * dim, (size_t)dim * sizeof *q) ||
            memcmp(v + j * dim, v_ref + j * dim, (size_t)dim * sizeof *v))
            return j;
    return -1;
}

/* One repeat's times, ns per trajectory-step: scalar, each lane count (and the same loops for SSE2), nhens'
 * lane stepper alone, nhens' ensemble with its default lanes and with one lane. */
typedef struct lockstep_times {
    double scalar, lockstep[LOCKSTEP_WIDTHS], lockstep_sse2[LOCKSTEP_WIDTHS], stepper, nhens, nhens_one_lane;
    int lanes;                  /* the lanes nhens' ensemble used */
} lockstep_times;

/* ns per trajectory-step of nhens' lane stepper alone (nhens/lanes.h, the kernel's default lanes and instruction set):
 * the trajectories started by the scalar stepper, loaded into lanes, advanced `steps` steps in one call and read
 * back, with nothing observed; -1 when it cannot be made. What separates it from the lockstep loop is its
 * kernel's formulas (generic in the system), what separates the ensemble from it is the engine's work. */
static double time_lane_stepper(const bench_settings *b, const lockstep_system *sys, const char *method,
                                const double *q0, const double *v0, long steps)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    if (make(b, &s, sys->name, sys->param, &m, method))
        return -1;
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    const int preferred = nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON);
    const int lanes = preferred < LOCKSTEP_TRAJECTORIES ? preferred : LOCKSTEP_TRAJECTORIES;
    nh_lane_stepper *ls = st ? nh_lane_stepper_create(st, lanes, NH_LANE_ISA_AUTO, &err) : NULL;
    double seconds = -1;
    if (ls) {
        int status[NH_MAX_LANES];
        const double t0 = cpu_seconds();
        for (int first = 0; first < LOCKSTEP_TRAJECTORIES; first += lanes) {
            for (int l = 0; l < lanes; ++l) {
                double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS];
                memcpy(q, q0 + (first + l) * sys->dim, (size_t)sys->dim * sizeof *q);
                memcpy(v, v0 + (first + l) * sys->dim, (size_t)sys->dim * sizeof *v);
                nh_stepper_start(st, q, v, carried);
                nh_lane_stepper_load(ls, l, st, q, v, carried);
            }
            nh_lane_stepper_advance(ls, 0.1, steps, status);
        }
        seconds = cpu_seconds() - t0;
    }
    nh_lane_stepper_free(ls);
    nh_stepper_free(st);
    return seconds < 0 ? -1 : seconds / ((double)steps * LOCKSTEP_TRAJECTORIES) * 1e9;
}

/* One repeat of the eleven, interleaved (process CPU time); -1 (with a message) when a lockstep loop's final states are not the
 * scalar loop's bit for bit or nhens' ensemble fails, else 0. */
static int lockstep_repeat(const bench_settings *b, const lockstep_system *sys, const lockstep_loop *lock,
                           const lockstep_loop *lock_sse2, const double *q0, const double *v0, long steps,
                           lockstep_times *t)
{
    double q_ref[LOCKSTEP_STATE], v_ref[LOCKSTEP_STATE], q[LOCKSTEP_STATE], v[LOCKSTEP_STATE];
    t->scalar = time_scalar_trajectories(sys->scalar_loop(lock->method), sys->dim, q0, v0, q_ref, v_ref, steps);
    for (int sse2 = 0; sse2 < 2; ++sse2)
        for (int w = 0; w < LOCKSTEP_WIDTHS; ++w) {
            const lockstep_loop *loop = sse2 ? lock_sse2 : lock;
            *(sse2 ? &t->lockstep_sse2[w] : &t->lockstep[w]) =
                time_lockstep_trajectories(loop->run[w], lockstep_lanes(w), sys->dim, q0, v0, q, v, steps);
            const int j = first_differing_trajectory(sys->dim, q, v, q_ref, v_ref);
            if (j >= 0) {
                fprintf(stderr, "nhens_bench: the lockstep loop of %s on the %s with %d lanes%s differs from its scalar "
                                "loop in the final state of trajectory %d after %ld steps (they must be equal bit for bit)\n",
                        lock->method, sys->name, lockstep_lanes(w), sse2 ? " (SSE2)" : "", j, steps);
                return -1;
            }
        }
    t->stepper = time_lane_stepper(b, sys, lock->method, q0, v0, steps);
    const double trajectory_steps = (double)steps * LOCKSTEP_TRAJECTORIES;
    char observe[512];
    observers_of_lanes(observe, sizeof observe);
    for (int one_lane = 0; one_lane < 2; ++one_lane) {
        int used;
        const double seconds = ensemble_seconds_of(b, sys->name, sys->param, sys->energy, lock->method, 1,
                                                   one_lane ? 1 : 0, LOCKSTEP_TRAJECTORIES, (double)steps * 0.1,
                                                   LOCKSTEP_EVERY, observe, &used, cpu_seconds);
        if (!one_lane)
            t->lanes = used;
        if (seconds < 0)
            return -1;
        *(one_lane ? &t->nhens_one_lane : &t->nhens) = seconds / trajectory_steps * 1e9;
    }
    return 0;
}

/* The row's medians and its ratios: the system's ratio (over_lockstep...) is the median over repeats of nhens
 * over the fastest lane count of the same repeat (side by side), and likewise for each lane count, for the
 * scalar loop and for nhens with one lane. */
static void add_lockstep_figures(cJSON *o, const lockstep_system *sys, const lockstep_times *t, int repeats)
{
    double x[16], ratio[16], speedup[16], one_lane[16], lane_gain[16], stepper[16];
    char key[64];
    for (int r = 0; r < repeats; ++r)
        x[r] = t[r].scalar;
    cJSON_AddNumberToObject(o, "scalar_bare_ns_per_trajectory_step", median(x, repeats));
    for (int w = 0; w < LOCKSTEP_WIDTHS; ++w) {
        for (int r = 0; r < repeats; ++r) {
            x[r] = t[r].lockstep[w];
            ratio[r] = t[r].nhens / t[r].lockstep[w];
        }
        snprintf(key, sizeof key, "lockstep_%d_ns_per_trajectory_step", lockstep_lanes(w));
        cJSON_AddNumberToObject(o, key, median(x, repeats));
        snprintf(key, sizeof key, "nhens_over_lockstep_%d", lockstep_lanes(w));
        cJSON_AddNumberToObject(o, key, median(ratio, repeats));
    }
    for (int r = 0; r < repeats; ++r) {
        x[r] = t[r].lockstep_sse2[0];
        for (int w = 1; w < LOCKSTEP_WIDTHS; ++w)
            x[r] = fmin(x[r], t[r].lockstep_sse2[w]);
        ratio[r] = t[r].nhens / x[r];
    }
    cJSON_AddNumberToObject(o, "fastest_sse2_lockstep_ns_per_trajectory_step", median(x, repeats));
    cJSON_AddNumberToObject(o, "nhens_over_sse2_lockstep", median(ratio, repeats));
    for (int r = 0; r < repeats; ++r)
        x[r] = t[r].stepper;
    cJSON_AddNumberToObject(o, "lane_stepper_ns_per_trajectory_step", median(x, repeats));
    for (int r = 0; r < repeats; ++r)
        x[r] = t[r].nhens;
    cJSON_AddNumberToObject(o, "nhens_ensemble_ns_per_trajectory_step", median(x, repeats));
    for (int r = 0; r < repeats; ++r)
        x[r] = t[r].nhens_one_lane;
    cJSON_AddNumberToObject(o, "nhens_one_lane_ns_per_trajectory_step", median(x, repeats));
    for (int r = 0; r < repeats; ++r) {
        double fastest = t[r].lockstep[0];
        for (int w = 1; w < LOCKSTEP_WIDTHS; ++w)
            fastest = fmin(fastest, t[r].lockstep[w]);
        ratio[r] = t[r].nhens / fastest;
        speedup[r] = t[r].scalar / fastest;
        one_lane[r] = t[r].nhens_one_lane / fastest;
        lane_gain[r] = t[r].nhens_one_lane / t[r].nhens;
        stepper[r] = t[r].stepper / fastest;
    }
    cJSON_AddNumberToObject(o, "lane_stepper_over_lockstep", median(stepper, repeats));
    cJSON_AddNumberToObject(o, "scalar_over_lockstep", median(speedup, repeats));
    cJSON_AddNumberToObject(o, "one_lane_over_lockstep", median(one_lane, repeats));
    cJSON_AddNumberToObject(o, "one_lane_over_lanes", median(lane_gain, repeats));
    cJSON_AddNumberToObject(o, sys->ratio, median(ratio, repeats));
}

/* The largest difference of q and v between nhens' stepper (recentred after every step, as the engine does)
 * and the system's scalar loop after 100 steps from trajectory 0: the same formulas, so round-off only. */
static double scalar_loop_difference(const bench_settings *b, const nh_system *s, const char *method,
                                     const bare_loop *loop, const double *q0, const double *v0)
{
    nh_method_spec m;
    nh_error err;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], qb[NH_MAX_DIM], vb[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS], diff = 0;
    nh_stepper *st = nh_method_spec_parse(b->reg, &m, method, &err) ? NULL : nh_stepper_create(&m, s, NH_SOLVER_NEWTON, &err);
    if (!st)
        return NAN;
    memcpy(q, q0, (size_t)s->n * sizeof *q);
    memcpy(v, v0, (size_t)s->n * sizeof *v);
    memcpy(qb, q0, (size_t)s->n * sizeof *q);
    memcpy(vb, v0, (size_t)s->n * sizeof *v);
    nh_stepper_start(st, q, v, carried);
    for (long k = 0; k < 100; ++k) {
        nh_stepper_step(st, 0.1, q, v, carried);
        nh_stepper_recentre(st, q);
    }
    nh_stepper_free(st);
    loop->run(qb, vb, 0.1, 100);
    for (int i = 0; i < s->n; ++i)
        diff = fmax(diff, fmax(fabs(q[i] - qb[i]), fabs(v[i] - vb[i])));
    return diff;
}

/* One method's lockstep row; NULL after a message when a lockstep loop is not bit for bit its scalar loop
 * (or nhens' ensemble fails): the ceiling of formulas that give other bits is no ceiling. */
static cJSON *bench_lockstep_method(const bench_settings *b, const lockstep_system *sys, const lockstep_loop *lock,
                                    const lockstep_loop *lock_sse2)
{
    double q0[LOCKSTEP_STATE], v0[LOCKSTEP_STATE];
    lockstep_times t[16];
    nh_system s;
    const long steps = b->steps_lockstep;
    const int repeats = b->repeats > LOCKSTEP_REPEATS ? b->repeats : LOCKSTEP_REPEATS;
    if (lockstep_system_make(b, sys, lock->method, &s) || lockstep_start(&s, sys->energy, q0, v0))
        return NULL;
    for (int r = 0; r < repeats; ++r)
        if (lockstep_repeat(b, sys, lock, lock_sse2, q0, v0, steps, &t[r]))
            return NULL;
    char observe[512];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", lock->method);
    cJSON_AddStringToObject(o, "system", sys->name);
    cJSON_AddStringToObject(o, "param", sys->param);
    cJSON_AddNumberToObject(o, "energy", sys->energy);
    cJSON_AddStringToObject(o, "isa", nh_lane_isa_name(nh_lane_isa_best()));
    cJSON_AddNumberToObject(o, "nhens_lanes", t[0].lanes);
    cJSON_AddStringToObject(o, "nhens_observes", observers_of_lanes(observe, sizeof observe));
    cJSON_AddNumberToObject(o, "trajectories", LOCKSTEP_TRAJECTORIES);
    cJSON_AddNumberToObject(o, "steps", (double)steps);
    cJSON_AddNumberToObject(o, "nhens_every", LOCKSTEP_EVERY);
    cJSON_AddBoolToObject(o, "lockstep_equals_scalar_bit_for_bit", 1);
    cJSON_AddNumberToObject(o, "scalar_max_difference_from_nhens_after_100_steps",
                            scalar_loop_difference(b, &s, lock->method, sys->scalar_loop(lock->method), q0, v0));
    cJSON_AddNumberToObject(o, "repeats", repeats);
    add_lockstep_figures(o, sys, t, repeats);
    return o;
}

/* The lockstep row of `method` on `sys`; NULL when it has no lockstep loop or its loop is not bit for bit
 * its scalar loop. */
static cJSON *bench_lockstep_for(const lockstep_system *sys, const char *method, const bench_settings *b)
{
    int count;
    const lockstep_loop *loops = lockstep_loops(sys->name, NH_LANE_ISA_AUTO, &count);
    const lockstep_loop *sse2 = lockstep_loops(sys->name, NH_LANE_ISA_SSE2, &count);
    for (int k = 0; loops && sse2 && k < count; ++k)
        if (strcmp(loops[k].method, method) == 0)
            return bench_lockstep_method(b, sys, &loops[k], &sse2[k]);
    return NULL;
}

/* Every lockstep row of `sys`; *identical is 0 when a loop's states were not its scalar loop's (its row is
 * left out). */
static cJSON *bench_lockstep(const lockstep_system *sys, const bench_settings *b, int *identical)
{
    int count;
    const lockstep_loop *loops = lockstep_loops(sys->name, NH_LANE_ISA_AUTO, &count);
    cJSON *arr = cJSON_CreateArray();
    for (int k = 0; loops && k < count; ++k) {
        cJSON *o = bench_lockstep_for(sys, loops[k].method, b);
        if (o)
            cJSON_AddItemToArray(arr, o);
        else
            *identical = 0;
    }
    return arr;
}

/* Peak resident memory (KiB) of the nhens program running one ensemble in a child process, as the child
 * reports it in its summary.json (performance.peak_rss_kib, its own VmHWM). wait4's ru_maxrss would also
 * count this benchmark's memory, which the spawned child shares until its exec. A child of an OpenMP
 * process cannot run OpenMP itself after a bare fork (libgomp is not fork-safe), so the child is a fresh
 * exec of the CLI that sits next to this benchmark. */
static long peak_memory_kib(const char *nhens_path, long n, double T)
{
    static const char out_dir[] = "/tmp/nhens-bench-memory";
    char nbuf[32], tbuf[32];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    snprintf(tbuf, sizeof tbuf, "%g", T);
    char *args[] = {(char *)nhens_path, "run", "--system", "quartic", "--param", "n=3", "--method", "dla01",
                    "--energy", "3.06", "--h", "0.1", "--T", tbuf, "--every", "1", "--ensemble", nbuf,
                    "--threads", "2", "--quiet", "--out", (char *)out_dir, NULL};
    fflush(stdout);
    pid_t pid;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, nhens_path, &actions, NULL, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    int status;
    if (rc != 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    nh_error err;
    size_t length;
    char path[sizeof out_dir + 16];
    snprintf(path, sizeof path, "%s/summary.json", out_dir);
    char *text = nh_read_file(path, (size_t)1 << 22, &length, &err);
    cJSON *summary = text ? cJSON_Parse(text) : NULL;
    const cJSON *peak = cJSON_GetObjectItem(cJSON_GetObjectItem(summary, "performance"), "peak_rss_kib");
    const long kib = cJSON_IsNumber(peak) ? (long)peak->valuedouble : -1;
    cJSON_Delete(summary);
    free(text);
    return kib;
}

static void nhens_next_to(const char *argv0, char *out, size_t len)
{
    const char *slash = strrchr(argv0, '/');
    int dir = slash ? (int)(slash - argv0) : 1;
    snprintf(out, len, "%.*s/nhens", dir, slash ? argv0 : ".");
}

/* The ratios named in each row of `rows` (an array of rows with a "method"), as "kind:method". */
static void add_row_ratios(cJSON *r, const cJSON *rows)
{
    char key[160];
    for (const cJSON *o = rows->child; o; o = o->next) {
        const char *name = cJSON_GetObjectItem(o, "method")->valuestring;
        for (const char *const *ratio = (const char *const[]){"kinsol_over_newton", "over_bare_loop", "over_interface_loop",
                                                                        "over_stages", NULL};
             *ratio; ++ratio) {
            const cJSON *value = cJSON_GetObjectItem(o, *ratio);
            snprintf(key, sizeof key, "%s:%s", *ratio, name);
            if (cJSON_IsNumber(value))
                cJSON_AddNumberToObject(r, key, value->valuedouble);
        }
    }
}

/* The run's guarded ratios: a method over the bare loop interleaved with it (explicit and linearly
 * implicit methods on the quartic), KINSOL over Newton (implicit methods on the quartic), a composition
 * over its stages of the inner method, nhens' ensemble over the lockstep loop, and the two-thread
 * speed-ups. */
static cJSON *collect_ratios(const cJSON *quartic, const cJSON *compositions,
                             cJSON *const lockstep[LOCKSTEP_SYSTEM_COUNT], const cJSON *scaling)
{
    cJSON *r = cJSON_CreateObject();
    char key[160];
    add_row_ratios(r, quartic);
    add_row_ratios(r, compositions);
    for (int k = 0; k < LOCKSTEP_SYSTEM_COUNT; ++k)
        for (const cJSON *o = lockstep[k]->child; o; o = o->next) {
            snprintf(key, sizeof key, "%s:%s", LOCKSTEP_SYSTEMS[k].ratio, cJSON_GetObjectItem(o, "method")->valuestring);
            cJSON_AddNumberToObject(r, key, cJSON_GetObjectItem(o, LOCKSTEP_SYSTEMS[k].ratio)->valuedouble);
        }
    for (const cJSON *o = scaling->child; o; o = o->next) {
        snprintf(key, sizeof key, "speedup_2_threads:%s", cJSON_GetObjectItem(o, "method")->valuestring);
        cJSON_AddNumberToObject(r, key, cJSON_GetObjectItem(o, "speedup_2_threads")->valuedouble);
    }
    return r;
}

/* The ratios the run reports but --check does not guard, as "kind:method", the kind suffixed with the system's
 * (_cvt) as its guarded lockstep ratio is: the scalar loop over the lockstep loop of the same formulas (the
 * compiler's gain from lanes, nothing of nhens'; docs/decisions/0019), nhens with one lane over nhens with its
 * lanes (what lanes give nhens), nhens' lane stepper alone over the lockstep loop (its kernel's share of the
 * guarded ratio) and nhens over the lockstep loop compiled for SSE2 (the ceiling of docs/decisions/0019;
 * docs/decisions/0021-lanes.md); and of each scaling run's method, one thread with --lanes 1 over its default lanes
 * (lanes_speedup: dd's batched Newton among them). */
static cJSON *collect_reported(cJSON *const lockstep[LOCKSTEP_SYSTEM_COUNT], const cJSON *scaling)
{
    static const char *const kinds[] = {"scalar_over_lockstep", "one_lane_over_lanes", "lane_stepper_over_lockstep",
                                        "nhens_over_sse2_lockstep"};
    cJSON *r = cJSON_CreateObject();
    char key[160];
    for (size_t kind = 0; kind < sizeof kinds / sizeof kinds[0]; ++kind)
        for (int k = 0; k < LOCKSTEP_SYSTEM_COUNT; ++k) {
            const char *suffix = LOCKSTEP_SYSTEMS[k].ratio + strlen("over_lockstep");
            for (const cJSON *o = lockstep[k]->child; o; o = o->next) {
                snprintf(key, sizeof key, "%s%s:%s", kinds[kind], suffix, cJSON_GetObjectItem(o, "method")->valuestring);
                cJSON_AddNumberToObject(r, key, cJSON_GetObjectItem(o, kinds[kind])->valuedouble);
            }
        }
    for (const cJSON *o = scaling->child; o; o = o->next) {
        snprintf(key, sizeof key, "lanes_speedup:%s", cJSON_GetObjectItem(o, "method")->valuestring);
        cJSON_AddNumberToObject(r, key, cJSON_GetObjectItem(o, "lanes_speedup")->valuedouble);
    }
    return r;
}

static int is_speedup(const char *key)
{
    return strncmp(key, "speedup_2_threads:", 18) == 0;
}

/* The measurement behind a guarded ratio "kind:method": a scaling run, a composition against its inner
 * method, a lockstep row, or a method's row on the quartic. */
static cJSON *measure_for_ratio(const char *key, const char *method, const bench_settings *b)
{
    if (is_speedup(key))
        return bench_scaling(method, b);
    const lockstep_system *sys = lockstep_system_of_ratio(key, (size_t)(method - 1 - key));
    if (sys)
        return bench_lockstep_for(sys, method, b);
    if (strncmp(key, "over_stages:", 12) == 0) {
        for (size_t i = 0; i < sizeof COMPOSITIONS / sizeof COMPOSITIONS[0]; ++i)
            if (strcmp(COMPOSITIONS[i].method, method) == 0)
                return bench_composition(method, COMPOSITIONS[i].inner, COMPOSITIONS[i].stages, b);
        return NULL;
    }
    return bench_method("quartic", "n=3", 3.06, method, b);
}

/* A guarded ratio measured again on its own ("kind:method" as in collect_ratios, the kind being the
 * name of the ratio in the measured row); NAN if it cannot be. */
static double remeasure_ratio(const char *key, const bench_settings *b)
{
    const char *colon = strchr(key, ':');
    if (!colon)
        return NAN;
    cJSON *o = measure_for_ratio(key, colon + 1, b);
    char kind[64];
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - key), key);
    const cJSON *value = cJSON_GetObjectItem(o, kind);
    const double ratio = cJSON_IsNumber(value) ? value->valuedouble : NAN;
    cJSON_Delete(o);
    return ratio;
}

/* The guard's rule (docs/decisions/0021-lanes.md). A speed-up fails below half its baseline, a cost ratio above
 * twice its baseline; a cost ratio with a target (the baseline's "targets": nhens over the lockstep loop, at
 * most 1.5) fails above max(target, TARGET_MARGIN x baseline): met, the target is the bound, and a ratio that
 * misses it may not grow by more than the margin, which is above the run-to-run spread of these ratios
 * (medians of side-by-side repeats). */
static const double TARGET_MARGIN = 1.25;

static double ratio_bound(int speedup, double baseline, const cJSON *target)
{
    if (speedup)
        return 0.5 * baseline;
    return cJSON_IsNumber(target) ? fmax(target->valuedouble, TARGET_MARGIN * baseline) : 2.0 * baseline;
}

static int regressed(int speedup, double got, double bound)
{
    return !(speedup ? got >= bound : got <= bound);
}

/* The targets --write-baseline writes (issue 51: nhens at most 1.5x the lockstep loop of dla01, lf, spark2 and
 * rk4 on the quartic and the CVT). */
static const double LOCKSTEP_TARGET = 1.5;

static cJSON *lockstep_targets(const cJSON *ratios)
{
    cJSON *t = cJSON_CreateObject();
    for (const cJSON *e = ratios->child; e; e = e->next) {
        const char *colon = strchr(e->string, ':');
        if (colon && lockstep_system_of_ratio(e->string, (size_t)(colon - e->string)))
            cJSON_AddNumberToObject(t, e->string, LOCKSTEP_TARGET);
    }
    return t;
}

/* A bare loop (or its run through the interface) differing from its method by more than round-off is not
 * the same formulas, and its ratio means nothing. After 100 steps of h = 0.1 on the chaotic quartic the
 * loops differ by 0 to 1.1e-15 (round-off amplified over t = 10); a wrong term differs by about h^2 = 1e-2. */
static const double BARE_LOOP_TOLERANCE = 1e-10;

static void check_difference(const char *what, const cJSON *row, const char *field, cJSON *failures)
{
    char line[256];
    const double diff = cJSON_GetObjectItem(row, field)->valuedouble;
    if (diff <= BARE_LOOP_TOLERANCE)
        return;
    snprintf(line, sizeof line, "%s of %s: differs from nhens by %.3g after 100 steps (allowed %.0e: round-off)", what,
             cJSON_GetObjectItem(row, "method")->valuestring, diff, BARE_LOOP_TOLERANCE);
    cJSON_AddItemToArray(failures, cJSON_CreateString(line));
    fprintf(stderr, "nhens_bench: %s\n", line);
}

/* The quartic's bare loops and their runs through the interface, and each lockstep system's scalar loops. */
static void check_bare_loops(const cJSON *root, cJSON *failures)
{
    static const char *const field[LOOP_KINDS] = {"max_difference_from_nhens_after_100_steps",
                                                  "through_interface_max_difference_from_nhens_after_100_steps"};
    static const char *const name[LOOP_KINDS] = {"bare loop", "loop through the system's interface"};
    const cJSON *loops = cJSON_GetObjectItem(root, "bare_loops");
    for (const cJSON *o = loops ? loops->child : NULL; o; o = o->next)
        for (int kind = 0; kind < LOOP_KINDS; ++kind)
            check_difference(name[kind], o, field[kind], failures);
    char what[64];
    for (int k = 0; k < LOCKSTEP_SYSTEM_COUNT; ++k) {
        snprintf(what, sizeof what, "scalar loop on the %s", LOCKSTEP_SYSTEMS[k].name);
        const cJSON *rows = cJSON_GetObjectItem(root, LOCKSTEP_SYSTEMS[k].section);
        for (const cJSON *o = rows ? rows->child : NULL; o; o = o->next)
            check_difference(what, o, "scalar_max_difference_from_nhens_after_100_steps", failures);
    }
}

/* Every ratio of the baseline against this run's, within its bound (ratio_bound). A ratio past its bound is measured twice more on its own, and the verdict is the median of the three:
 * one disturbed measurement (another process on a 2-core machine) does not fail the run, a real
 * regression, present in at least two of three, does. The bare loops are checked first (check_bare_loops). */
enum { GUARD_MEASUREMENTS = 3 };
static int check_ratios(const cJSON *ratios, const cJSON *baseline, const char *baseline_path, const bench_settings *b,
                        const cJSON *root, int only_lockstep, cJSON *report)
{
    const cJSON *expected = cJSON_GetObjectItem(baseline, "ratios"), *targets = cJSON_GetObjectItem(baseline, "targets");
    cJSON *failures = cJSON_AddArrayToObject(report, "failures");
    check_bare_loops(root, failures);
    cJSON_AddStringToObject(report, "baseline", baseline_path);
    cJSON_AddStringToObject(report, "rule", "fails when a cost ratio exceeds 2x its baseline, or max(target, 1.25x baseline) when "
                                            "the baseline gives it a target, or a speed-up falls below half of it, in the median of "
                                            "three measurements (the second and third only when the first is past the bound)");
    cJSON *remeasured = cJSON_AddArrayToObject(report, "remeasured");
    for (const cJSON *e = expected ? expected->child : NULL; e; e = e->next) {
        const cJSON *got = cJSON_GetObjectItem(ratios, e->string);
        const int speedup = is_speedup(e->string);
        const double bound = ratio_bound(speedup, e->valuedouble, cJSON_GetObjectItem(targets, e->string));
        char line[320];
        if (speedup && sysconf(_SC_NPROCESSORS_ONLN) < 2)
            continue; /* one core: there is no speed-up to guard */
        const char *colon = strchr(e->string, ':');
        if (only_lockstep && !(colon && lockstep_system_of_ratio(e->string, (size_t)(colon - e->string))))
            continue; /* --only lockstep: the other rows were not measured */
        if (!cJSON_IsNumber(got)) {
            snprintf(line, sizeof line, "%s: not measured by this run (a baseline names ratios that nhens_bench measures)",
                     e->string);
        } else if (regressed(speedup, got->valuedouble, bound)) {
            double values[GUARD_MEASUREMENTS] = {got->valuedouble};
            for (int k = 1; k < GUARD_MEASUREMENTS; ++k) {
                values[k] = remeasure_ratio(e->string, b);
                if (isnan(values[k]))   /* not measured counts as regressed */
                    values[k] = speedup ? 0.0 : INFINITY;
            }
            cJSON *entry = cJSON_CreateObject();
            cJSON_AddStringToObject(entry, "ratio", e->string);
            cJSON_AddItemToObject(entry, "measurements", cJSON_CreateDoubleArray(values, GUARD_MEASUREMENTS));
            cJSON_AddItemToArray(remeasured, entry);
            double sorted[GUARD_MEASUREMENTS];
            memcpy(sorted, values, sizeof sorted);
            const double verdict = median(sorted, GUARD_MEASUREMENTS);
            if (!regressed(speedup, verdict, bound)) {
                fprintf(stderr, "nhens_bench: %s: %.3g against a bound of %.3g (baseline %.3g), within it when measured "
                                "again (%.3g, %.3g)\n", e->string, got->valuedouble, bound, e->valuedouble, values[1], values[2]);
                continue;
            }
            snprintf(line, sizeof line, "%s: %.3g (median of %.3g, %.3g, %.3g) against a bound of %.3g (baseline %.3g)",
                     e->string, verdict, got->valuedouble, values[1], values[2], bound, e->valuedouble);
        } else {
            continue;
        }
        cJSON_AddItemToArray(failures, cJSON_CreateString(line));
        fprintf(stderr, "nhens_bench: regression: %s\n", line);
    }
    const int ok = cJSON_GetArraySize(failures) == 0;
    cJSON_AddBoolToObject(report, "passed", ok);
    return ok ? 0 : 1;
}

/* The baseline of --check, read before anything is measured; NULL, with a message, when the file cannot be
 * read or has no "ratios" object of numbers. */
static cJSON *load_baseline(const char *path)
{
    nh_error err;
    size_t length;
    char *text = nh_read_file(path, (size_t)1 << 20, &length, &err);
    if (!text) {
        fprintf(stderr, "nhens_bench: %s\n", err.msg);
        return NULL;
    }
    cJSON *base = cJSON_Parse(text);
    free(text);
    const cJSON *ratios = cJSON_GetObjectItem(base, "ratios"), *targets = cJSON_GetObjectItem(base, "targets");
    int numbers = cJSON_IsObject(ratios) && (!targets || cJSON_IsObject(targets));
    for (const cJSON *e = numbers ? ratios->child : NULL; e; e = e->next)
        numbers &= cJSON_IsNumber(e) && e->valuedouble > 0;
    for (const cJSON *e = numbers && targets ? targets->child : NULL; e; e = e->next)   /* a target bounds a ratio */
        numbers &= cJSON_IsNumber(e) && e->valuedouble > 0 && cJSON_IsNumber(cJSON_GetObjectItem(ratios, e->string)) &&
                   !is_speedup(e->string);
    if (!numbers) {
        fprintf(stderr, "nhens_bench: %s is not a baseline: allowed is a JSON object whose \"ratios\" object maps "
                        "names to positive numbers and whose optional \"targets\" object maps some of those names "
                        "(cost ratios, not speed-ups) to positive numbers (written by --write-baseline)\n", path);
        cJSON_Delete(base);
        return NULL;
    }
    return base;
}

static int print_text(FILE *f, const void *text)
{
    return fputs(text, f) < 0 || fputc('\n', f) == EOF;
}

/* The baseline file, whole or absent (nh_write_file): the guarded ratios, their targets (lockstep_targets), and
 * the reported ratios for the record. */
static int write_baseline(const cJSON *ratios, const cJSON *reported, const char *path)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "about", "ratios guarded by nhens_bench --check and ratios reported, not guarded "
                                          "(written by --write-baseline)");
    cJSON_AddItemToObject(doc, "ratios", cJSON_Duplicate(ratios, 1));
    cJSON_AddItemToObject(doc, "targets", lockstep_targets(ratios));
    cJSON_AddItemToObject(doc, "reported", cJSON_Duplicate(reported, 1));
    char *text = cJSON_Print(doc);
    nh_error err;
    const int bad = !text || nh_write_file(path, print_text, text, &err) != NH_OK;
    if (bad)
        fprintf(stderr, "nhens_bench: %s\n", text ? err.msg : "out of memory");
    free(text);
    cJSON_Delete(doc);
    return bad;
}

static const char USAGE[] =
    "usage: nhens_bench [--quick] [--only lockstep] [--check BASELINE.json] [--write-baseline FILE]";

static const char HELP[] =
    "Times every method on the quartic (n = 3, H = 3.06) and the CVT (eps = 0.1, H = 6) with both solvers,\n"
    "the bare and interface loops, the compositions, 1- and 2-thread ensembles, the lockstep loops of the\n"
    "quartic and the CVT against nhens' lanes, and peak memory, and prints one JSON document on stdout\n"
    "(medians of interleaved repeats; docs/PERFORMANCE.md).\n"
    "  --quick                 fewer steps and repeats (under a minute)\n"
    "  --only lockstep         only the lockstep rows (quartic and CVT); --check then checks only their ratios\n"
    "  --check BASELINE.json   compare the run's ratios with the baseline's; exit 1 when one regresses by\n"
    "                          more than 2x, or a lockstep ratio exceeds max(its target, 1.25x its baseline)\n"
    "                          (exit 2 at once for a baseline that cannot be read)\n"
    "  --write-baseline FILE   write the run's ratios and the lockstep targets (1.5) as a baseline (whole or\n"
    "                          not at all)\n"
    "  --help                  this text\n"
    "Exit 1 also when a lockstep loop's final states differ in any bit from its scalar loop's.\n";

int main(int argc, char **argv)
{
    int quick = 0, only_lockstep = 0;
    const char *check = NULL, *baseline_out = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("%s\n%s", USAGE, HELP);
            return 0;
        } else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            if (strcmp(argv[++i], "lockstep") != 0) {
                fprintf(stderr, "nhens_bench: --only '%s': allowed is 'lockstep' (the lockstep rows alone); %s\n", argv[i],
                        USAGE);
                return 2;
            }
            only_lockstep = 1;
        }
        else if (!strcmp(argv[i], "--check") && i + 1 < argc)
            check = argv[++i];
        else if (!strcmp(argv[i], "--write-baseline") && i + 1 < argc)
            baseline_out = argv[++i];
        else {
            fprintf(stderr, "nhens_bench: unknown argument '%s' (or a missing value); %s; --help explains them\n",
                    argv[i], USAGE);
            return 2;
        }
    }
    cJSON *baseline = check ? load_baseline(check) : NULL;
    if (check && !baseline)
        return 2;
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    if (!reg) {
        fprintf(stderr, "nhens_bench: %s\n", err.msg);
        cJSON_Delete(baseline);
        return 1;
    }
    bench_settings b = quick ? (bench_settings){3, 20000, 4000, 10000, 10.0, reg}
                             : (bench_settings){5, 200000, 40000, 50000, 20.0, reg};
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "nhens_version", NH_VERSION);
    cJSON_AddStringToObject(root, "statistic", "median of repeats");
    cJSON_AddNumberToObject(root, "repeats", b.repeats);
    cJSON_AddNumberToObject(root, "h", 0.1);
    cJSON *quartic, *compositions, *scaling;
    if (only_lockstep) {
        cJSON_AddStringToObject(root, "only", "lockstep");
        quartic = cJSON_AddArrayToObject(root, "quartic_n3_E3.06");
        compositions = cJSON_AddArrayToObject(root, "compositions_quartic");
        scaling = cJSON_AddArrayToObject(root, "ensemble_scaling_quartic");
    } else {
        cJSON_AddItemToObject(root, "bare_loops", bench_bare_loops(&b));
        quartic = bench_methods("quartic", "n=3", 3.06, &b);
        cJSON_AddItemToObject(root, "quartic_n3_E3.06", quartic);
        cJSON_AddItemToObject(root, "cvt_eps0.1_E6", bench_methods("cvt", "eps=0.1", 6.0, &b));
        compositions = bench_compositions(&b);
        cJSON_AddItemToObject(root, "compositions_quartic", compositions);
        scaling = cJSON_AddArrayToObject(root, "ensemble_scaling_quartic");
        cJSON_AddItemToArray(scaling, bench_scaling("dla01", &b));
        cJSON_AddItemToArray(scaling, bench_scaling("dd", &b));
        cJSON *mem = cJSON_AddObjectToObject(root, "peak_memory_kib");
        cJSON_AddStringToObject(mem, "run", "quartic n=3, dla01, h=0.1, T=100, every=1 (1001 output times), 2 threads");
        char nhens_path[4096];
        nhens_next_to(argv[0], nhens_path, sizeof nhens_path);
        cJSON_AddNumberToObject(mem, "N_100", (double)peak_memory_kib(nhens_path, 100, 100.0));
        cJSON_AddNumberToObject(mem, "N_10000", (double)peak_memory_kib(nhens_path, 10000, 100.0));
    }
    int identical = 1;
    cJSON *lockstep[LOCKSTEP_SYSTEM_COUNT];
    for (int k = 0; k < LOCKSTEP_SYSTEM_COUNT; ++k) {
        lockstep[k] = bench_lockstep(&LOCKSTEP_SYSTEMS[k], &b, &identical);
        cJSON_AddItemToObject(root, LOCKSTEP_SYSTEMS[k].section, lockstep[k]);
    }
    cJSON *ratios = collect_ratios(quartic, compositions, lockstep, scaling);
    cJSON_AddItemToObject(root, "ratios", ratios);
    cJSON_AddItemToObject(root, "targets", lockstep_targets(ratios));
    cJSON *reported = collect_reported(lockstep, scaling);
    cJSON_AddItemToObject(root, "reported", reported);
    int status = identical ? 0 : 1;
    if (check) {
        cJSON *report = cJSON_AddObjectToObject(root, "check");
        status |= check_ratios(ratios, baseline, check, &b, root, only_lockstep, report);
        if (!identical) {
            cJSON_AddItemToArray(cJSON_GetObjectItem(report, "failures"),
                                 cJSON_CreateString("a lockstep row was not measured: its loop differs from its scalar loop or nhens' ensemble failed (stderr says which)"));
            cJSON_ReplaceItemInObject(report, "passed", cJSON_CreateFalse());
        }
    }
    if (baseline_out && write_baseline(ratios, reported, baseline_out))
        status = 1;
    char *text = cJSON_Print(root);
    puts(text);
    free(text);
    cJSON_Delete(root);
    cJSON_Delete(baseline);
    nh_registry_free(reg);
    return status;
}
