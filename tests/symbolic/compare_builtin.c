/* A generated plugin (nhens-symbolic) against the hand-written built-in it describes: every callback the
 * generator emits, at the same random states, agrees to round-off; so do the descriptor's dimensions,
 * flags, parameter table, coordinate kinds, presets, sampler (the same draws from the same generator) and
 * minimum energy. The built-ins' coupled-system callbacks (driver_energy, coupled_structure) have no
 * generated counterpart and are not compared; dM/dq is compared when the built-in has it.
 *
 * Usage: compare_builtin PLUGIN.so GENERATED BUILTIN [NAME=VALUE...]   (exit 0: all agree, 1: not)
 *
 * Tolerance: |generated - built-in| <= 1e-14 max(1, |built-in|) per entry. Both sides evaluate the same
 * formula of at most a few terms, each of size at most about 10 at these states (|q| from the systems'
 * samplers, u, lam ~ N(0, 1)), in a different order or grouping (SymPy's, after CSE); each term is
 * rounded a few times, so the two differ by a few ulp of the largest term: 10 ulp of 10 is 2.2e-14 at
 * worst and ~1e-15 typically. The observed worst is printed per callback. */
#include <nhens/nhens.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { STATES = 2000 };
static const double TOLERANCE = 1e-14;

typedef struct {
    const char *what;
    double worst;
    int failures;
} tally;

static void agree(tally *t, const double *gen, const double *ref, int count)
{
    for (int i = 0; i < count; ++i) {
        const double diff = fabs(gen[i] - ref[i]), scale = fmax(1.0, fabs(ref[i]));
        if (diff / scale > t->worst)
            t->worst = diff / scale;
        if (!(diff <= TOLERANCE * scale)) {
            if (t->failures++ < 3)
                fprintf(stderr, "%s[%d]: generated %.17g, built-in %.17g\n", t->what, i, gen[i], ref[i]);
        }
    }
}

static int same_descriptor(const nh_system *g, const nh_system *b)
{
    int bad = 0;
    const nh_system_type *tg = g->type, *tb = b->type;
    if (g->n != b->n || g->m != b->m || tg->flags != tb->flags || tg->n_params != tb->n_params) {
        fprintf(stderr, "n, m, flags or parameter count differ: %d %d %u %d vs %d %d %u %d\n", g->n, g->m, tg->flags,
                tg->n_params, b->n, b->m, tb->flags, tb->n_params);
        return 1;
    }
    for (int i = 0; i < tg->n_params; ++i) {
        const nh_param_def *pg = &tg->params[i], *pb = &tb->params[i];
        if (strcmp(pg->name, pb->name) || pg->default_value != pb->default_value || pg->min_value != pb->min_value ||
            pg->max_value != pb->max_value || pg->integer != pb->integer) {
            fprintf(stderr, "parameter %d differs: %s vs %s\n", i, pg->name, pb->name);
            bad = 1;
        }
    }
    unsigned char kg[NH_MAX_DIM] = {0}, kb[NH_MAX_DIM] = {0};
    if (tg->coordinate_kinds)
        tg->coordinate_kinds(g, kg);
    if (tb->coordinate_kinds)
        tb->coordinate_kinds(b, kb);
    if (memcmp(kg, kb, sizeof kg)) {
        fprintf(stderr, "coordinate kinds differ\n");
        bad = 1;
    }
    for (int i = 0; i < tg->n_presets; ++i) {
        const nh_preset *pg = &tg->presets[i], *pb = nh_system_find_preset(tb, pg->name);
        if (!pb || pg->dim != pb->dim || pg->shell_energy != pb->shell_energy ||
            pg->shell_ensemble != pb->shell_ensemble || memcmp(pg->q, pb->q, sizeof pg->q) ||
            memcmp(pg->v, pb->v, sizeof pg->v)) {
            fprintf(stderr, "preset %s differs or is not built in\n", pg->name);
            bad = 1;
        }
    }
    return bad;
}

static void gaussian_vector(nh_pcg32 *rng, double *x, int count)
{
    for (int i = 0; i < count; ++i)
        x[i] = nh_pcg32_gaussian(rng);
}

enum { T_V, T_GRAD, T_HESS, T_A, T_DAU, T_DATL, T_MASS, T_DMASS, T_X, T_DX, T_SAMPLE, T_MIN, T_COUNT };

static void compare_state(const nh_system *g, const nh_system *b, nh_pcg32 *rng_g, nh_pcg32 *rng_b, tally *t)
{
    const int n = b->n, m = b->m;
    double q[NH_MAX_DIM], qb[NH_MAX_DIM], u[NH_MAX_DIM], lam[NH_MAX_CON];
    double og[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM], ob[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM];
    g->type->sample_configuration(g, rng_g, q);
    b->type->sample_configuration(b, rng_b, qb);
    agree(&t[T_SAMPLE], q, qb, n);
    gaussian_vector(rng_b, u, n);
    gaussian_vector(rng_b, lam, m);
    og[0] = g->type->potential(g, q);
    ob[0] = b->type->potential(b, q);
    agree(&t[T_V], og, ob, 1);
    g->type->potential_gradient(g, q, og);
    b->type->potential_gradient(b, q, ob);
    agree(&t[T_GRAD], og, ob, n);
    g->type->potential_hessian(g, q, og);
    b->type->potential_hessian(b, q, ob);
    agree(&t[T_HESS], og, ob, n * n);
    g->type->constraint(g, q, og);
    b->type->constraint(b, q, ob);
    agree(&t[T_A], og, ob, m * n);
    g->type->constraint_jacobian_velocity(g, q, u, og);
    b->type->constraint_jacobian_velocity(b, q, u, ob);
    agree(&t[T_DAU], og, ob, m * n);
    g->type->constraint_jacobian_multiplier(g, q, lam, og);
    b->type->constraint_jacobian_multiplier(b, q, lam, ob);
    agree(&t[T_DATL], og, ob, n * n);
    nh_mass_matrix(g, q, og);
    nh_mass_matrix(b, q, ob);
    agree(&t[T_MASS], og, ob, n * n);
    if (b->type->mass_matrix_derivative && g->type->mass_matrix_derivative) {
        g->type->mass_matrix_derivative(g, q, og);
        b->type->mass_matrix_derivative(b, q, ob);
        agree(&t[T_DMASS], og, ob, n * n * n);
    } else if (b->type->mass_matrix_derivative || g->type->mass_matrix_derivative) {
        fprintf(stderr, "only one of the two has dM/dq\n");
        t[T_DMASS].failures++;
    }
    if (b->type->adapted_basis) {
        double dxg[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM], dxb[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM];
        const int r = n - m;
        nh_adapted_basis(g, q, og, dxg);
        nh_adapted_basis(b, q, ob, dxb);
        agree(&t[T_X], og, ob, n * r);
        agree(&t[T_DX], dxg, dxb, n * r * n);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: compare_builtin PLUGIN.so GENERATED BUILTIN [NAME=VALUE...]\n");
        return 2;
    }
    nh_error err = {{0}};
    nh_registry *reg = nh_registry_create(&err);
    if (!reg || nh_registry_load_plugin(reg, argv[1], &err) != NH_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const nh_system_type *tg = nh_registry_find_system_checked(reg, argv[2], &err);
    const nh_system_type *tb = tg ? nh_registry_find_system_checked(reg, argv[3], &err) : NULL;
    nh_system g, b;
    const char *const *overrides = (const char *const *)argv + 4;
    if (!tb || nh_system_init(&g, tg, NULL, overrides, argc - 4, &err) != NH_OK ||
        nh_system_init(&b, tb, NULL, overrides, argc - 4, &err) != NH_OK) {
        fprintf(stderr, "%s\n", err.msg);
        nh_registry_free(reg);
        return 1;
    }
    int bad = same_descriptor(&g, &b);
    tally t[T_COUNT] = {{"potential", 0, 0}, {"potential_gradient", 0, 0}, {"potential_hessian", 0, 0},
                        {"constraint", 0, 0}, {"constraint_jacobian_velocity", 0, 0},
                        {"constraint_jacobian_multiplier", 0, 0}, {"mass matrix", 0, 0}, {"mass_matrix_derivative", 0, 0},
                        {"adapted_basis X", 0, 0},
                        {"adapted_basis dX", 0, 0}, {"sample_configuration", 0, 0}, {"minimum_energy", 0, 0}};
    nh_pcg32 rng_g, rng_b;
    nh_pcg32_seed(&rng_g, 52, 1);
    nh_pcg32_seed(&rng_b, 52, 1);
    for (int k = 0; k < STATES; ++k) {
        /* the built-in's stream also draws u and lam: keep the generated sampler's stream in step */
        compare_state(&g, &b, &rng_g, &rng_b, t);
        rng_g = rng_b;
    }
    const double min_g = g.type->minimum_energy(&g), min_b = b.type->minimum_energy(&b);
    agree(&t[T_MIN], &min_g, &min_b, 1);
    printf("%s vs %s, %d random states, tolerance %.0e max(1, |value|):\n", argv[2], argv[3], STATES, TOLERANCE);
    for (int i = 0; i < T_COUNT; ++i) {
        printf("  %-32s worst %.3e  %s\n", t[i].what, t[i].worst, t[i].failures ? "DIFFERS" : "agrees");
        bad |= t[i].failures != 0;
    }
    printf("%s\n", bad ? "the generated plugin differs from the built-in" : "the generated plugin agrees with the built-in");
    nh_registry_free(reg);
    return bad;
}
