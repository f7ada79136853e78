/* Lane steppers (include/nhens/lanes.h): the choice of a kernel set by instruction set, system and method, the
 * lanes' structure-of-arrays state, loading a started trajectory into a lane and reading it back, and the
 * per-lane pieces the kernels call rarely (a recentred coordinate, lf's end point after it). The kernels
 * themselves are lane_steps.h, compiled per system and instruction set. */
#include "lanes_internal.h"

#include "builtin_methods.h"

#include <stdlib.h>
#include <string.h>


struct nh_lane_stepper {
    nh_lane_batch batch;
    nh_lane_advance_fn advance;
    nh_lane_isa isa;
    int n, carried_dim;
    double *memory;             /* every array of the batch */
};

static const nh_lane_kernel_set *const *sets_of(nh_lane_isa isa)
{
    switch (isa) {
    case NH_LANE_ISA_AVX512:
        return nh_lane_sets_avx512;
    case NH_LANE_ISA_AVX2:
        return nh_lane_sets_avx2;
    default:
        return nh_lane_sets_sse2;
    }
}

/* Whether the build compiled isa's kernels (CMake's NHENS_LANE_ISAS) */
static int compiled(nh_lane_isa isa)
{
    return sets_of(isa)[0] != NULL;
}

nh_lane_isa nh_lane_isa_best(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && compiled(NH_LANE_ISA_AVX512))
        return NH_LANE_ISA_AVX512;
    return __builtin_cpu_supports("avx2") && compiled(NH_LANE_ISA_AVX2) ? NH_LANE_ISA_AVX2 : NH_LANE_ISA_SSE2;
}

const char *nh_lane_isa_name(nh_lane_isa isa)
{
    static const char *const names[] = {"auto", "sse2", "avx2", "avx512"};
    return isa >= NH_LANE_ISA_AUTO && isa <= NH_LANE_ISA_AVX512 ? names[isa] : "unknown";
}

int nh_lane_isa_supported(nh_lane_isa isa)
{
    return isa == NH_LANE_ISA_AUTO || (isa >= NH_LANE_ISA_SSE2 && isa <= nh_lane_isa_best() && compiled(isa));
}

int nh_lanes_default(void)
{
    return nh_lane_isa_best() == NH_LANE_ISA_AVX512 ? 32 : 16;
}

/* The lane method of a configured method, or -1 */
static int lane_method(const nh_method_spec *method)
{
    const nh_method_type *type = method->type;
    if (type == &nh_method_dla01)
        return NH_LANE_DLA01;
    if (type == &nh_method_leapfrog)
        return NH_LANE_LF;
    if (type == &nh_method_spark2)
        return NH_LANE_SPARK2;
    if (type == &nh_method_rk4)
        return NH_LANE_RK4;
    if (type == &nh_method_newmark && method->params.value[0] == 0.0)   /* beta = 0: the split step */
        return NH_LANE_NEWMARK0;
    if (type == &nh_method_dla || type == &nh_method_idla)
        return NH_LANE_DLA;
    if (type == &nh_method_dd)
        return NH_LANE_DD;
    return -1;
}

/* Whether a lane method is implicit: its kernel batches the built-in Newton (lane_newton.h) */
static int implicit_lane_method(int lane)
{
    return lane == NH_LANE_DLA || lane == NH_LANE_DD;
}

/* The lane method of a configured method solved by `solver`, or -1: the implicit kernels batch the built-in
 * Newton only (KINSOL's line search and its own linear algebra have no lane form) */
static int lane_method_with(const nh_method_spec *method, nh_solver_kind solver)
{
    const int lane = lane_method(method);
    return implicit_lane_method(lane) && solver != NH_SOLVER_NEWTON ? -1 : lane;
}

/* dla's alpha, idla's 1/2 (dd has none) */
static double implicit_alpha(const nh_method_spec *method)
{
    return method->type == &nh_method_dla ? method->params.value[0] : 0.5;
}

/* The system's kernel set for isa: its formulas match and its mass is the unit (the kernels leave it out) */
static const nh_lane_kernel_set *set_for(const nh_system *sys, nh_lane_isa isa)
{
    if (sys->m != 1 || nh_has_variable_mass(sys) || nh_is_reduced(sys))
        return NULL;
    for (int i = 0; i < sys->n; ++i)
        if (sys->inv_mass[i] != 1.0)
            return NULL;
    for (const nh_lane_kernel_set *const *set = sets_of(isa); *set; ++set)
        if ((*set)->matches(sys))
            return *set;
    return NULL;
}

int nh_lane_kernel_exists(const nh_method_spec *method, const nh_system *sys, nh_solver_kind solver)
{
    return lane_method_with(method, solver) >= 0 && set_for(sys, nh_lane_isa_best()) != NULL;
}

/* Each lane method's own lane count where it runs fastest with fewer lanes than the CPU's default (0: the default;
 * lanes.h, nh_lanes_default_for) */
static const int PREFERRED_LANES[NH_LANE_METHODS] = {[NH_LANE_DLA] = 16, [NH_LANE_DD] = 16};

int nh_lanes_default_for(const nh_method_spec *method, const nh_system *sys, nh_solver_kind solver)
{
    const int lanes = nh_lanes_default();
    if (!nh_lane_kernel_exists(method, sys, solver))
        return lanes;
    const int preferred = PREFERRED_LANES[lane_method_with(method, solver)];
    return preferred > 0 && preferred < lanes ? preferred : lanes;
}

static int width_index(int lanes)
{
    switch (lanes) {
    case 4:
        return 0;
    case 8:
        return 1;
    case 16:
        return 2;
    case 32:
        return 3;
    default:
        return 4;
    }
}

/* The batch's arrays in one allocation: q, v, grad, a, turns, offset (n x L each), the scratch, carried (L) */
/* Zeroed memory on a 64-byte boundary (a cache line, an AVX-512 vector): calloc's 16 bytes would let every vector
 * load of a lane array straddle two cache lines in some runs and not in others (nhens_bench's lane stepper:
 * 7 ns a trajectory-step or 11, by the allocation's address; docs/decisions/0021-lanes.md) */
static void *zeroed_lines(size_t count, size_t size)
{
    const size_t bytes = (count * size + 63) / 64 * 64;
    void *p = aligned_alloc(64, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

static int batch_alloc(nh_lane_stepper *ls, int lanes)
{
    const size_t cells = (size_t)ls->n * (size_t)lanes;
    ls->memory = zeroed_lines((6 + NH_LANE_SCRATCH_ARRAYS) * cells + (size_t)lanes, sizeof(double));
    nh_lane_batch *b = &ls->batch;
    b->status = zeroed_lines((size_t)lanes, sizeof *b->status);
    b->active = zeroed_lines((size_t)lanes, sizeof *b->active);
    if (!ls->memory || !b->status || !b->active)
        return 1;
    double *next = ls->memory;
    double **arrays[] = {&b->q, &b->v, &b->grad, &b->a, &b->turns, &b->offset};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k, next += cells)
        *arrays[k] = next;
    b->scratch = next;
    b->carried = next + NH_LANE_SCRATCH_ARRAYS * cells;
    return 0;
}

/* An implicit method's arrays: each lane's step history and solver work, the Newton's workspace and the scalar
 * stepper of the steps the kernel leaves to it */
static int implicit_alloc(nh_lane_stepper *ls, const nh_stepper *scalar, int lanes, nh_error *err)
{
    nh_lane_batch *b = &ls->batch;
    const size_t dim = (size_t)ls->n + 1, count = (size_t)lanes;
    b->history = calloc(NH_LANE_HISTORY * dim * count + count, sizeof(double));
    b->history_count = calloc(count, sizeof *b->history_count);
    b->newton = malloc((size_t)NH_LANE_NEWTON_DOUBLES(dim) * count * sizeof(double));
    b->solver = calloc(count, sizeof *b->solver);
    if (!b->history || !b->history_count || !b->newton || !b->solver)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory for %d lanes", lanes);
    b->history_h = b->history + NH_LANE_HISTORY * dim * count;
    b->implicit_alpha = implicit_alpha(&scalar->method);
    b->fallback = nh_stepper_create(&scalar->method, scalar->sys, scalar->solver_kind, err);
    return b->fallback ? NH_OK : NH_ERR_NOMEM;
}

nh_lane_stepper *nh_lane_stepper_create(const nh_stepper *scalar, int lanes, nh_lane_isa isa, nh_error *err)
{
    const nh_system *sys = scalar->sys;
    if (lanes < 1 || lanes > NH_MAX_LANES) {
        nh_fail(err, NH_ERR_INPUT, "lanes %d: allowed 1 to %d", lanes, NH_MAX_LANES);
        return NULL;
    }
    if (isa == NH_LANE_ISA_AUTO)
        isa = nh_lane_isa_best();
    if (!nh_lane_isa_supported(isa)) {
        nh_fail(err, NH_ERR_INPUT, "this CPU cannot run %s lane kernels (it has %s)", nh_lane_isa_name(isa),
                nh_lane_isa_name(nh_lane_isa_best()));
        return NULL;
    }
    const int method = lane_method_with(&scalar->method, scalar->solver_kind);
    const nh_lane_kernel_set *set = method >= 0 ? set_for(sys, isa) : NULL;
    err->msg[0] = 0;
    if (!set)
        return NULL;
    nh_lane_stepper *ls = calloc(1, sizeof *ls);
    if (!ls || (ls->n = sys->n, batch_alloc(ls, lanes))) {
        nh_lane_stepper_free(ls);
        nh_fail(err, NH_ERR_NOMEM, "out of memory for %d lanes", lanes);
        return NULL;
    }
    if (implicit_lane_method(method) && implicit_alloc(ls, scalar, lanes, err)) {
        nh_lane_stepper_free(ls);
        return NULL;
    }
    nh_lane_batch *b = &ls->batch;
    b->lanes = lanes;
    b->sys = sys;
    b->system_par = sys->params.value;
    b->method_par = scalar->params.value;
    memcpy(b->kind, scalar->kind, sizeof b->kind);
    for (int i = 0; scalar->recentres && i < sys->n; ++i)
        b->recentred_kinds |= b->kind[i] != NH_COORDINATE_PLAIN;
    if (!scalar->recentres)
        memset(b->kind, NH_COORDINATE_PLAIN, sizeof b->kind);
    b->keeps_point = method == NH_LANE_LF;
    ls->isa = isa;
    ls->carried_dim = scalar->carried_dim;
    ls->advance = set->advance[method][width_index(lanes)];
    return ls;
}

void nh_lane_stepper_free(nh_lane_stepper *ls)
{
    if (!ls)
        return;
    free(ls->memory);
    free(ls->batch.status);
    free(ls->batch.active);
    free(ls->batch.history);
    free(ls->batch.history_count);
    free(ls->batch.newton);
    free(ls->batch.solver);
    nh_stepper_free(ls->batch.fallback);
    free(ls);
}

int nh_lane_stepper_lanes(const nh_lane_stepper *ls)
{
    return ls->batch.lanes;
}

nh_lane_isa nh_lane_stepper_isa(const nh_lane_stepper *ls)
{
    return ls->isa;
}

void nh_lane_keep_point(nh_lane_batch *b, int l)
{
    const nh_system *s = b->sys;
    const int n = nh_dim(s), L = b->lanes;
    double q[NH_MAX_DIM], grad[NH_MAX_DIM], a[NH_MAX_DIM];
    for (int i = 0; i < n; ++i)
        q[i] = b->q[i * L + l];
    s->type->potential_gradient(s, q, grad);
    s->type->constraint(s, q, a);
    for (int i = 0; i < n; ++i) {
        b->grad[i * L + l] = grad[i];
        b->a[i * L + l] = a[i];
    }
}

/* Lane l's step history from a stepper's (what nh_stepper_history would find there: nothing unless its newest
 * step returned (q, v)), or into one for a step at (q, v) */
static void history_in(nh_lane_batch *b, int l, const nh_step_history *from, const double *q, const double *v)
{
    const int L = b->lanes, n = b->sys->n, dim = n + 1;
    int valid = from->count > 0 && from->dim == dim;
    for (int i = 0; valid && i < n; ++i)
        valid = q[i] == from->q[i] && v[i] == from->v[i];
    const int count = valid ? from->count : 0;
    b->history_count[l] = count < NH_LANE_HISTORY ? count : NH_LANE_HISTORY;
    b->history_h[l] = from->h;
    for (int k = 0; k < b->history_count[l]; ++k)
        for (int i = 0; i < dim; ++i)
            b->history[(k * dim + i) * L + l] = from->solution[k * dim + i];
}

static void history_out(const nh_lane_batch *b, int l, nh_step_history *to, const double *q, const double *v)
{
    const int L = b->lanes, n = b->sys->n, dim = n + 1;
    to->count = (int)b->history_count[l];
    to->h = b->history_h[l];
    for (int k = 0; k < to->count; ++k)
        for (int i = 0; i < dim; ++i)
            to->solution[k * dim + i] = b->history[(k * dim + i) * L + l];
    memcpy(to->q, q, (size_t)n * sizeof *q);
    memcpy(to->v, v, (size_t)n * sizeof *v);
}

int nh_lane_scalar_step(nh_lane_batch *b, int l, double h)
{
    nh_stepper *st = b->fallback;
    const int L = b->lanes, n = b->sys->n;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    for (int i = 0; i < n; ++i) {
        q[i] = b->q[i * L + l];
        v[i] = b->v[i * L + l];
    }
    history_out(b, l, &st->history, q, v);
    const nh_solver_stats before = nh_solver_get_stats(st->solver);
    const int rc = st->step(st, h, q, v, NULL);
    nh_solver_stats_add(&b->solver[l], nh_solver_get_stats(st->solver), 1);
    nh_solver_stats_add(&b->solver[l], before, -1);
    for (int i = 0; i < n; ++i) {
        b->q[i * L + l] = q[i];
        b->v[i * L + l] = v[i];
    }
    history_in(b, l, &st->history, q, v);
    return rc;
}

void nh_lane_stepper_load(nh_lane_stepper *ls, int lane, const nh_stepper *from, const double *q, const double *v,
                          const double *carried)
{
    nh_lane_batch *b = &ls->batch;
    const int L = b->lanes;
    for (int i = 0; i < ls->n; ++i) {
        b->q[i * L + lane] = q[i];
        b->v[i * L + lane] = v[i];
        b->turns[i * L + lane] = from->turns[i];
        b->offset[i * L + lane] = from->offset[i];
    }
    for (int k = 0; k < ls->carried_dim; ++k)
        b->carried[k * L + lane] = carried[k];
    nh_lane_keep_point(b, lane);
    if (b->fallback) {
        history_in(b, lane, &from->history, q, v);
        b->solver[lane] = (nh_solver_stats){0};
    }
    b->status[lane] = NH_OK;
    b->active[lane] = 1;
}

void nh_lane_stepper_state(const nh_lane_stepper *ls, int lane, double *q, double *v, double *carried)
{
    const nh_lane_batch *b = &ls->batch;
    const int L = b->lanes;
    for (int i = 0; i < ls->n; ++i) {
        q[i] = b->q[i * L + lane];
        v[i] = b->v[i * L + lane];
    }
    for (int k = 0; carried && k < ls->carried_dim; ++k)
        carried[k] = b->carried[k * L + lane];
}

nh_solver_stats nh_lane_stepper_solver_stats(const nh_lane_stepper *ls, int lane)
{
    return ls->batch.solver ? ls->batch.solver[lane] : (nh_solver_stats){0};
}

void nh_lane_stepper_retire(nh_lane_stepper *ls, int lane)
{
    ls->batch.active[lane] = 0;
}

int nh_lane_stepper_active(const nh_lane_stepper *ls, int lane)
{
    return ls->batch.active[lane] != 0;
}

int nh_lane_recentre_coordinate(nh_lane_batch *b, int i, int l)
{
    const int L = b->lanes;
    double *x = &b->q[i * L + l];
    if (!nh_recentres(b->kind[i], *x))
        return 0;
    while (fabs(*x) > NH_RECENTRE_LIMIT) {
        double high, low;
        nh_recentre_once(b->kind[i], x, &b->turns[i * L + l], &b->offset[i * L + l], &high, &low);
    }
    return 1;
}

int nh_lane_stepper_step_unrecentred(nh_lane_stepper *ls, double h, int *status)
{
    ls->batch.defer_recentring = 1;
    nh_lane_stepper_advance(ls, h, 1, status);
    ls->batch.defer_recentring = 0;
    int failed = 0;
    for (int l = 0; l < ls->batch.lanes; ++l)
        failed |= status[l] != NH_OK;
    return failed;
}

void nh_lane_stepper_recentre(nh_lane_stepper *ls)
{
    nh_lane_batch *b = &ls->batch;
    for (int i = 0; b->recentred_kinds && i < ls->n; ++i)
        for (int l = 0; b->kind[i] != NH_COORDINATE_PLAIN && l < b->lanes; ++l)
            if (b->active[l] && b->status[l] == NH_OK && nh_lane_recentre_coordinate(b, i, l) && b->keeps_point)
                nh_lane_keep_point(b, l);
}

/* The lanes up to the last active one, rounded up to the quantum (nh_lane_batch's span) */
static int active_span(const nh_lane_batch *b)
{
    int last = -1;
    for (int l = 0; l < b->lanes; ++l)
        last = b->active[l] ? l : last;
    const int span = (last + NH_LANE_SPAN_QUANTUM) / NH_LANE_SPAN_QUANTUM * NH_LANE_SPAN_QUANTUM;
    return span < b->lanes ? span : b->lanes;
}

long nh_lane_stepper_advance(nh_lane_stepper *ls, double h, long steps, int *status)
{
    ls->batch.span = active_span(&ls->batch);
    const long taken = steps > 0 ? ls->advance(&ls->batch, h, steps) : 0;
    for (int l = 0; l < ls->batch.lanes; ++l)
        status[l] = ls->batch.active[l] ? (int)ls->batch.status[l] : NH_OK;
    return taken;
}
