/* nhens benchmarks: prints one JSON document with ns/step per method and solver on the quartic
 * (n = 3) and the pendulum CVT, ensemble throughput with 1 and 2 threads, and peak memory for
 * N = 100 and N = 10 000. The machine is noisy: every figure is the median of several repeats, and
 * the ratios compare runs interleaved in the same process.
 * usage: nhens_bench [--quick] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

#include "nhens/ensemble.h"
#include "nhens/registry.h"

/* The built-in registry, made once and kept for the process (the benchmark's only shared state). */
static const nh_registry *bench_registry(void)
{
    static nh_registry *reg;
    nh_error err;
    if (!reg && !(reg = nh_registry_create(&err)))
        fprintf(stderr, "bench: %s\n", err.msg);
    return reg;
}

typedef struct bench_settings {
    int repeats;
    long steps_explicit, steps_implicit;
    double ensemble_T;   /* base horizon of the scaling runs */
} bench_settings;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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

static int make(nh_system *s, const char *system, const char *param, nh_method_spec *m, const char *method)
{
    nh_error err;
    const char *over[1] = {param};
    if (nh_system_init(s, nh_registry_find_system(bench_registry(), system), NULL, over, 1, &err) ||
        nh_method_spec_parse(bench_registry(), m, method, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    return 0;
}

/* Median ns per step of one trajectory from a fixed shell state. */
static double ns_per_step(const nh_system *s, const nh_method_spec *m, nh_solver_kind kind, double energy,
                          long steps, int repeats)
{
    nh_error err;
    nh_stepper *st = nh_stepper_create(m, s, kind, &err);
    if (!st)
        return -1;
    double times[16];
    for (int r = 0; r < repeats; ++r) {
        double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS];
        nh_pcg32 rng;
        nh_pcg32_for_trajectory(&rng, 1, 0);
        nh_energy_shell_sample(s, energy, &rng, q, v);
        nh_stepper_start(st, q, v, carried);
        double t0 = now_seconds();
        for (long k = 0; k < steps; ++k)
            if (nh_stepper_step(st, 0.1, q, v, carried))
                break;
        times[r] = (now_seconds() - t0) / steps * 1e9;
    }
    nh_stepper_free(st);
    return median(times, repeats);
}

/* Steps for about `budget` seconds per repeat, from a 50-step probe (the D* methods are 100x slower). */
static long steps_for_budget(const nh_system *s, const nh_method_spec *m, double energy, long cap, double budget)
{
    double probe = ns_per_step(s, m, NH_SOLVER_NEWTON, energy, 50, 1);
    long steps = probe > 0 ? (long)(budget * 1e9 / probe) : cap;
    return steps < 50 ? 50 : steps > cap ? cap : steps;
}

static cJSON *bench_methods(const char *system, const char *param, double energy, const bench_settings *b)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = -1; i < nh_registry_method_count(bench_registry()); ++i) {   /* every registered method at its defaults, and DLA^0.4 */
        const char *name = i < 0 ? "dla:alpha=0.4" : nh_registry_method_at(bench_registry(), i)->name;
        nh_system s;
        nh_method_spec m;
        if (make(&s, system, param, &m, name))
            continue;
        int implicit = (nh_method_spec_flags(&m) & NH_METHOD_IMPLICIT) != 0;
        long steps = steps_for_budget(&s, &m, energy, implicit ? b->steps_implicit : b->steps_explicit,
                                      b->repeats > 3 ? 0.1 : 0.02);

        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "method", name);
        cJSON_AddNumberToObject(o, "steps_timed", (double)steps);
        double newton = ns_per_step(&s, &m, NH_SOLVER_NEWTON, energy, steps, b->repeats);
        cJSON_AddNumberToObject(o, "ns_per_step", newton);
        cJSON_AddNumberToObject(o, "steps_per_second", 1e9 / newton);
        if (implicit) {
            double kinsol = ns_per_step(&s, &m, NH_SOLVER_KINSOL, energy, steps, b->repeats);
            cJSON_AddStringToObject(o, "solver_of_ns_per_step", "newton");
            cJSON_AddNumberToObject(o, "ns_per_step_kinsol", kinsol);
            cJSON_AddNumberToObject(o, "kinsol_over_newton", kinsol / newton);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static double ensemble_seconds(const char *method, int threads, long n, double T, long every)
{
    nh_system s;
    nh_method_spec m;
    if (make(&s, "quartic", "n=3", &m, method))
        return -1;
    nh_run_config cfg = {.system = &s, .method = m, .solver = NH_SOLVER_NEWTON, .h = 0.1, .T = T, .every = every,
                         .ensemble = n, .seed = 1, .threads = threads, .energy = 3.06, .fit_window_start = 0.5};
    nh_run_result res;
    nh_error err;
    double t0 = now_seconds();
    if (nh_run_ensemble(&cfg, &res, &err)) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    double dt = now_seconds() - t0;
    nh_run_result_free(&res);
    return dt;
}

/* T is chosen per method so that one run lasts about 0.5 s: shorter runs measure thread start-up. */
static cJSON *bench_scaling(const char *method, double T, const bench_settings *b)
{
    const long n = 64;
    double one[8], two[8];
    for (int r = 0; r < b->repeats && r < 8; ++r) { /* interleaved, so drift in machine load hits both */
        one[r] = ensemble_seconds(method, 1, n, T, 10);
        two[r] = ensemble_seconds(method, 2, n, T, 10);
    }
    int reps = b->repeats < 8 ? b->repeats : 8;
    double t1 = median(one, reps), t2 = median(two, reps), steps = n * (T / 0.1);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "method", method);
    cJSON_AddNumberToObject(o, "trajectories", (double)n);
    cJSON_AddNumberToObject(o, "trajectory_steps", steps);
    cJSON_AddNumberToObject(o, "steps_per_second_1_thread", steps / t1);
    cJSON_AddNumberToObject(o, "steps_per_second_2_threads", steps / t2);
    cJSON_AddNumberToObject(o, "speedup_2_threads", t1 / t2);
    return o;
}

/* Peak resident memory (KiB) of the nhens program running one ensemble in a child process. A child
 * of an OpenMP process cannot run OpenMP itself after a bare fork (libgomp is not fork-safe), so
 * the child is a fresh exec of the CLI that sits next to this benchmark. */
static long peak_memory_kib(const char *nhens_path, long n, double T)
{
    char nbuf[32], tbuf[32];
    snprintf(nbuf, sizeof nbuf, "%ld", n);
    snprintf(tbuf, sizeof tbuf, "%g", T);
    char *args[] = {(char *)nhens_path, "run", "--system", "quartic", "--param", "n=3", "--method", "dla01",
                    "--energy", "3.06", "--h", "0.1", "--T", tbuf, "--every", "1", "--ensemble", nbuf,
                    "--threads", "2", "--quiet", "--out", "/tmp/nhens-bench-memory", NULL};
    fflush(stdout);
    pid_t pid;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, nhens_path, &actions, NULL, args, environ);
    posix_spawn_file_actions_destroy(&actions);
    int status;
    struct rusage ru;
    if (rc != 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return ru.ru_maxrss;
}

static void nhens_next_to(const char *argv0, char *out, size_t len)
{
    const char *slash = strrchr(argv0, '/');
    int dir = slash ? (int)(slash - argv0) : 1;
    snprintf(out, len, "%.*s/nhens", dir, slash ? argv0 : ".");
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    bench_settings b = quick ? (bench_settings){3, 20000, 4000, 10.0} : (bench_settings){5, 200000, 40000, 100.0};
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "nhens_version", NH_VERSION);
    cJSON_AddStringToObject(root, "statistic", "median of repeats");
    cJSON_AddNumberToObject(root, "repeats", b.repeats);
    cJSON_AddNumberToObject(root, "h", 0.1);
    cJSON_AddItemToObject(root, "quartic_n3_E3.06", bench_methods("quartic", "n=3", 3.06, &b));
    cJSON_AddItemToObject(root, "cvt_eps0.1_E6", bench_methods("cvt", "eps=0.1", 6.0, &b));
    cJSON *scaling = cJSON_AddArrayToObject(root, "ensemble_scaling_quartic");
    cJSON_AddItemToArray(scaling, bench_scaling("dla01", 50 * b.ensemble_T, &b));
    cJSON_AddItemToArray(scaling, bench_scaling("dd", 5 * b.ensemble_T, &b));
    cJSON *mem = cJSON_AddObjectToObject(root, "peak_memory_kib");
    cJSON_AddStringToObject(mem, "run", "quartic n=3, dla01, h=0.1, T=100, every=1 (1001 output times), 2 threads");
    char nhens_path[4096];
    nhens_next_to(argv[0], nhens_path, sizeof nhens_path);
    cJSON_AddNumberToObject(mem, "N_100", (double)peak_memory_kib(nhens_path, 100, 100.0));
    cJSON_AddNumberToObject(mem, "N_10000", (double)peak_memory_kib(nhens_path, 10000, 100.0));
    char *text = cJSON_Print(root);
    puts(text);
    free(text);
    cJSON_Delete(root);
    return 0;
}
