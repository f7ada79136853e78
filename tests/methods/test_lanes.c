/* Lane-batched stepping (include/nhens/lanes.h): every lane kernel gives each trajectory the bits of the scalar
 * stepper (nh_stepper_step and nh_stepper_recentre) at every lane count, in every lane, with every instruction
 * set the CPU has, through failures and refills; and the kernels are chosen exactly where they exist. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <string.h>

#include "helpers.h"
#include "method_fixtures.h"
#include "nhens/lanes.h"

enum { STEPS = 300, MAX_TRAJECTORIES = 2 * NH_MAX_LANES + 1, FAILING = 2, STIFF = 4, RESTING = 6 };
/* Trajectory STIFF's velocity factor: on the quartic with 3 pairs its steps are far from linear, so that Newton
 * fails from the history's guess at some steps (the scalar step then starts again from explicit Euler) and at
 * last for good (dla: 3 failed solves, the trajectory failing at step 125). */
static const double STIFF_FACTOR = 70.0;

/* A trajectory's end: its state after `steps` steps, or the step at which it failed and the status. */
typedef struct trajectory_end {
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    long failed_at;   /* 0: did not fail */
    int status;
    nh_solver_stats solver;   /* the trajectory's solves, iterations and failed solves */
} trajectory_end;

typedef struct lane_case {
    const char *system, *over;
    double energy;
} lane_case;

/* The systems with lane kernels, at parameters that exercise them: the quartic with 3 and 2 pairs, the CVT
 * with and without the perturbation (its driver rotates beyond 2 pi and is recentred many times), the knife
 * edge with and without it (x2 ignorable, xi an angle). */
static const lane_case CASES[] = {
    {"quartic", "n=3", 3.06}, {"quartic", "n=2", 1.535}, {"cvt", "eps=0", 6.0},
    {"cvt", "eps=0.4", 2.0},  {"knife", "eps=0", 2.0},   {"knife", "eps=0.3", 1.0},
};
static const char *const METHODS[] = {"dla01",           "lf",     "spark2", "rk4", "newmark", "newmark:alpha=0",
                                      "newmark:beta2=0.25,alpha=0.3", "newmark:disc=16,alpha=0.7",
                                      "dla", "dla:alpha=0.3", "idla", "dd"};
enum { N_METHODS = sizeof METHODS / sizeof METHODS[0] };
/* The compiled widths (4, 8, 16, 32) and widths read at run time (2, 3, 5) */
static const int WIDTHS[] = {2, 3, 4, 5, 8, 16, 32};

/* Trajectory j's start: energy-shell sample j, except trajectory FAILING, whose velocity of ~1e155 overflows
 * the quartic's cubic forces (every method fails it within a few steps; on the CVT and the knife edge, whose
 * forces are bounded, only some methods do), and trajectory RESTING, which starts at rest (on the quartic at its
 * equilibrium q = 0, where every step is zero and dd's steps are at round-off; a lane whose batched solve does not
 * converge there is stepped again by the scalar stepper, so that these steps' bits are the scalar step's either
 * way). */
static void start_of(const nh_system *s, double energy, int j, double *q, double *v)
{
    nh_pcg32 rng;
    nh_pcg32_for_trajectory(&rng, 7, (uint64_t)j);
    cr_assert(eq(int, nh_energy_shell_sample(s, energy, &rng, q, v), NH_OK));
    for (int i = 0; j == FAILING && i < s->n; ++i)
        v[i] *= 1e155;
    for (int i = 0; j == STIFF && i < s->n; ++i)
        v[i] *= STIFF_FACTOR;
    for (int i = 0; j == RESTING && i < s->n; ++i) {
        v[i] = 0.0;
        q[i] = strcmp(s->type->name, "quartic") == 0 ? 0.0 : q[i];
    }
}

static void scalar_end(nh_stepper *st, const nh_system *s, double energy, int j, trajectory_end *end)
{
    double carried[NH_MAX_UNKNOWNS] = {0};
    memset(end, 0, sizeof *end);
    start_of(s, energy, j, end->q, end->v);
    cr_assert(eq(int, nh_stepper_start(st, end->q, end->v, carried), NH_OK));
    const nh_solver_stats before = nh_stepper_solver_stats(st);
    for (long k = 1; k <= STEPS; ++k) {
        const int rc = nh_stepper_step(st, 0.1, end->q, end->v, carried);
        if (rc != NH_OK) {
            end->failed_at = k;
            end->status = rc;
            break;
        }
        nh_stepper_recentre(st, end->q);
    }
    end->solver = nh_stepper_solver_stats(st);
    nh_solver_stats_add(&end->solver, before, -1);
}

/* Trajectories 0 .. count-1 through `lanes` lanes, each lane refilled with the next trajectory as soon as
 * its own ends (after STEPS steps or a failure), so the lanes run at different steps; trajectory j goes into
 * lane (first_lane + j) mod lanes at first. */
typedef struct lane_run {
    nh_lane_stepper *ls;
    nh_stepper *starter;
    const nh_system *sys;
    double energy;
    int trajectory[NH_MAX_LANES];
    long done[NH_MAX_LANES];
} lane_run;

static int load_next(lane_run *r, int lane, int *next, int count)
{
    if (*next >= count) {
        nh_lane_stepper_retire(r->ls, lane);
        return 0;
    }
    double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS] = {0};
    start_of(r->sys, r->energy, *next, q, v);
    cr_assert(eq(int, nh_stepper_start(r->starter, q, v, carried), NH_OK));
    nh_lane_stepper_load(r->ls, lane, r->starter, q, v, carried);
    r->trajectory[lane] = (*next)++;
    r->done[lane] = 0;
    return 1;
}

static void lanes_end(lane_run *r, int count, int first_lane, trajectory_end *ends)
{
    const int lanes = nh_lane_stepper_lanes(r->ls);
    int next = 0, active = 0;
    for (int k = 0; k < lanes; ++k)
        active += load_next(r, (first_lane + k) % lanes, &next, count);
    while (active > 0) {
        long steps = STEPS;
        for (int l = 0; l < lanes; ++l)
            if (nh_lane_stepper_active(r->ls, l) && STEPS - r->done[l] < steps)
                steps = STEPS - r->done[l];
        int status[NH_MAX_LANES];
        const long taken = nh_lane_stepper_advance(r->ls, 0.1, steps, status);
        for (int l = 0; l < lanes; ++l) {
            if (!nh_lane_stepper_active(r->ls, l))
                continue;
            r->done[l] += taken;
            trajectory_end *end = &ends[r->trajectory[l]];
            if (status[l] == NH_OK && r->done[l] < STEPS)
                continue;
            memset(end, 0, sizeof *end);
            nh_lane_stepper_state(r->ls, l, end->q, end->v, NULL);
            end->solver = nh_lane_stepper_solver_stats(r->ls, l);
            if (status[l] != NH_OK) {
                end->failed_at = r->done[l];
                end->status = status[l];
                memset(end->q, 0, sizeof end->q);
                memset(end->v, 0, sizeof end->v);
            }
            active += load_next(r, l, &next, count) - 1;
        }
    }
}

static int same_end(const nh_system *s, const trajectory_end *a, const trajectory_end *b)
{
    if (memcmp(&a->solver, &b->solver, sizeof a->solver) != 0)
        return 0;
    if (a->failed_at || b->failed_at)
        return a->failed_at == b->failed_at && a->status == b->status;
    return memcmp(a->q, b->q, (size_t)s->n * sizeof(double)) == 0 &&
           memcmp(a->v, b->v, (size_t)s->n * sizeof(double)) == 0;
}

/* Every case, method, instruction set and width against the scalar ends; returns the comparisons made. */
static int compare_case(const lane_case *c, const char *method_text)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, c->system, c->over, NULL);
    make_method(&m, method_text);
    cr_assert(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON), "no lane kernel for %s on %s %s", method_text, c->system, c->over);
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s", err.msg);
    static trajectory_end scalar[MAX_TRAJECTORIES], lanes[MAX_TRAJECTORIES];
    for (int j = 0; j < MAX_TRAJECTORIES; ++j)
        scalar_end(st, &s, c->energy, j, &scalar[j]);
    if (strcmp(c->system, "quartic") == 0)
        cr_assert(ne(long, scalar[FAILING].failed_at, 0), "%s on the quartic: the overflowing start did not fail",
                  method_text);
    if (strcmp(c->over, "n=3") == 0 && nh_stepper_solver_stats(st).solves > 0)
        /* the last step's two failed solves (from the history's guess, then from explicit Euler's) and more */
        cr_assert(scalar[STIFF].solver.failures > 2 && scalar[STIFF].failed_at > 3,
                  "%s on the quartic: the stiff start's solves did not fail from the history's guess (%ld failed, "
                  "failed at step %ld)",
                  method_text, scalar[STIFF].solver.failures, scalar[STIFF].failed_at);
    int compared = 0;
    for (nh_lane_isa isa = NH_LANE_ISA_SSE2; isa <= nh_lane_isa_best(); ++isa)
        for (size_t w = 0; w < sizeof WIDTHS / sizeof WIDTHS[0]; ++w) {
            const int width = WIDTHS[w], count = 2 * width + 1;
            lane_run r = {.starter = st, .sys = &s, .energy = c->energy};
            r.ls = nh_lane_stepper_create(st, width, isa, &err);
            cr_assert(r.ls != NULL, "%s", err.msg);
            lanes_end(&r, count, width / 2, lanes);
            for (int j = 0; j < count; ++j, ++compared)
                cr_expect(same_end(&s, &scalar[j], &lanes[j]),
                          "%s on %s %s, %s, %d lanes: trajectory %d differs from the scalar stepper's (failed at "
                          "%ld / %ld)",
                          method_text, c->system, c->over, nh_lane_isa_name(isa), width, j, lanes[j].failed_at,
                          scalar[j].failed_at);
            nh_lane_stepper_free(r.ls);
        }
    nh_stepper_free(st);
    return compared;
}

Test(lanes, every_kernel_gives_the_scalar_steppers_bits_at_every_width_and_isa)
{
    int compared = 0;
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; ++c)
        for (size_t m = 0; m < sizeof METHODS / sizeof METHODS[0]; ++m)
            compared += compare_case(&CASES[c], METHODS[m]);
    const int isas = (int)nh_lane_isa_best();
    cr_expect(eq(int, compared, isas * 6 * N_METHODS * (5 + 7 + 9 + 11 + 17 + 33 + 65)),
              "every trajectory of every case compared");
}

Test(lanes, kernels_exist_exactly_for_the_listed_pairs)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, "quartic", "n=5", NULL);
    make_method(&m, "dla01");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 0, "a lane kernel for the quartic with 5 pairs");
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_expect(nh_lane_stepper_create(st, 8, NH_LANE_ISA_AUTO, &err) == NULL && err.msg[0] == 0,
              "no kernel: NULL without a message");
    nh_stepper_free(st);
    make_system(&s, "quartic", "n=3", NULL);
    s.inv_mass[1] = 0.5;
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 0, "a lane kernel for a mass other than the unit");
    make_system(&s, "quartic", "n=3", NULL);
    static const char *const without[] = {"gonzalez", "newmark:beta=0.1,beta2=0.1", "triple-jump:inner=lf"};
    for (size_t i = 0; i < sizeof without / sizeof without[0]; ++i) {
        make_method(&m, without[i]);
        cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 0, "a lane kernel for %s", without[i]);
    }
    make_method(&m, "dla");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_KINSOL) == 0, "a lane kernel for dla solved by KINSOL");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 1, "no lane kernel for dla solved by Newton");
    st = nh_stepper_create(&m, &s, NH_SOLVER_KINSOL, &err);
    cr_expect(nh_lane_stepper_create(st, 8, NH_LANE_ISA_AUTO, &err) == NULL && err.msg[0] == 0,
              "dla solved by KINSOL: NULL without a message");
    nh_stepper_free(st);
    make_method(&m, "dd");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_KINSOL) == 0, "a lane kernel for dd solved by KINSOL");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 1, "no lane kernel for dd solved by Newton");
    make_method(&m, "dla01");
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_KINSOL) == 1, "an explicit method's kernel serves any solver");
    make_system(&s, "disk", NULL, NULL);
    cr_expect(nh_lane_kernel_exists(&m, &s, NH_SOLVER_NEWTON) == 0, "a lane kernel for the disk");
}

Test(lanes, lane_counts_and_instruction_sets_are_checked)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, "quartic", "n=3", NULL);
    make_method(&m, "dla01");
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err);
    cr_expect(nh_lane_stepper_create(st, 0, NH_LANE_ISA_AUTO, &err) == NULL && strstr(err.msg, "lanes 0"), "%s",
              err.msg);
    cr_expect(nh_lane_stepper_create(st, NH_MAX_LANES + 1, NH_LANE_ISA_AUTO, &err) == NULL &&
                  strstr(err.msg, "allowed 1 to 32"),
              "%s", err.msg);
    nh_lane_stepper *ls = nh_lane_stepper_create(st, 1, NH_LANE_ISA_AUTO, &err);
    cr_expect(ls != NULL && nh_lane_stepper_isa(ls) == nh_lane_isa_best(), "one lane, the best isa");
    nh_lane_stepper_free(ls);
    cr_expect(eq(int, nh_lanes_default(), nh_lane_isa_best() == NH_LANE_ISA_AVX512 ? 32 : 16));
    cr_expect(nh_lane_isa_supported((nh_lane_isa)(NH_LANE_ISA_AVX512 + 1)) == 0, "an isa beyond AVX-512");
    nh_stepper_free(st);
}

/* The default lanes per kernel (nh_lanes_default_for): the CPU's for the explicit kernels, at most 16 for the
 * batched Newton of dla, idla and dd, the CPU's where no kernel serves */
Test(lanes, the_default_lanes_follow_the_kernel)
{
    nh_system s;
    nh_method_spec m;
    const int cpu = nh_lanes_default(), newton = cpu < 16 ? cpu : 16;
    static const char *const systems[][2] = {
        {"quartic", "n=3"}, {"quartic", "n=2"}, {"cvt", "eps=0.1"}, {"knife", "eps=0.3"}};
    for (size_t i = 0; i < sizeof systems / sizeof systems[0]; ++i) {
        make_system(&s, systems[i][0], systems[i][1], NULL);
        static const char *const explicit_methods[] = {"dla01", "lf", "spark2", "rk4", "newmark"};
        for (size_t j = 0; j < sizeof explicit_methods / sizeof explicit_methods[0]; ++j) {
            make_method(&m, explicit_methods[j]);
            cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON), cpu), "%s on %s", explicit_methods[j],
                      systems[i][0]);
        }
        make_method(&m, "dla");
        cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON), newton), "dla on %s", systems[i][0]);
        cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_KINSOL), cpu), "dla by KINSOL: no kernel");
        make_method(&m, "idla");
        cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON), newton), "idla on %s", systems[i][0]);
        make_method(&m, "dd");
        cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON), newton), "dd on %s", systems[i][0]);
        cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_KINSOL), cpu), "dd by KINSOL: no kernel");
    }
    make_system(&s, "disk", NULL, NULL);
    make_method(&m, "dla");
    cr_expect(eq(int, nh_lanes_default_for(&m, &s, NH_SOLVER_NEWTON), cpu), "the disk: no kernel");
}
