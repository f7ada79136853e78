/* Structural identities between methods (adjoints, compositions, Newmark and SPARK nodes), what the
 * registry and the methods refuse, the D* frames, and the analytic Newton matrices against differences. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "method_fixtures.h"
#include "nhens/check.h"
#include "nhens/ensemble.h"
#include "nhens/linalg.h"
#include "qrdiff.h"

#include <stdlib.h>

/* Every built-in method and system passes the checks a plugin's descriptor must pass: a renamed copy of each
 * registers (names, texts, parameter tables, presets, dimensions, flags and order at the defaults). */
Test(structure, builtin_descriptors_pass_the_checks_of_plugins)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(reg != NULL, "%s", err.msg);
    const int n_methods = nh_registry_method_count(reg), n_systems = nh_registry_system_count(reg);
    static char names[2 * 128][64];
    static nh_method_type methods[128];
    static nh_system_type systems[128];
    for (int i = 0; i < n_methods; ++i) {
        methods[i] = *nh_registry_method_at(reg, i);
        snprintf(names[i], sizeof names[i], "copy-%s", methods[i].name);
        methods[i].name = names[i];
        cr_expect(eq(int, nh_registry_add_method(reg, &methods[i], &err), NH_OK), "%s", err.msg);
    }
    for (int i = 0; i < n_systems; ++i) {
        systems[i] = *nh_registry_system_at(reg, i);
        snprintf(names[128 + i], sizeof names[128 + i], "copy-%s", systems[i].name);
        systems[i].name = names[128 + i];
        cr_expect(eq(int, nh_registry_add_system(reg, &systems[i], &err), NH_OK), "%s", err.msg);
    }
    nh_registry_free(reg);
}

/* A method descriptor whose parameter count is out of range, or promises definitions it lacks, is refused
 * by the registry (nh_method_spec_parse would read past them); the same descriptor made whole is accepted. */
Test(structure, a_method_with_undefined_parameters_is_refused)
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    cr_assert(reg != NULL, "%s", err.msg);
    nh_method_type copy = *nh_registry_find_method(reg, "dla");
    copy.name = "dla-copy";
    const nh_param_def *defs = copy.params;
    copy.params = NULL;
    const int undefined = nh_registry_add_method(reg, &copy, &err);
    cr_assert(eq(int, undefined, NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "'dla-copy' is incomplete") != NULL, "%s", err.msg);
    copy.params = defs;
    copy.n_params = NH_MAX_PARAMS + 1;
    const int crowded = nh_registry_add_method(reg, &copy, &err);
    cr_assert(eq(int, crowded, NH_ERR_INPUT));
    copy.n_params = nh_registry_find_method(reg, "dla")->n_params;
    const int whole = nh_registry_add_method(reg, &copy, &err);
    cr_assert(eq(int, whole, NH_OK), "%s", err.msg);
    nh_registry_free(reg);
}

Test(structure, dla01_is_dla1_after_dla0_with_half_steps)
{
    /* docs/METHODS.md Sect. 2: DLA^{0,1}_h = DLA^1_{h/2} o DLA^0_{h/2}, agreement to round-off */
    nh_method_spec m01, m0, m1;
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], q2[NH_MAX_DIM], v2[NH_MAX_DIM];
    make_method(&m01, "dla01");
    make_method(&m0, "dla:alpha=0");
    make_method(&m1, "dla:alpha=1");
    shell_state(&s, "quartic", "n=3", 3.06, 5, q, v);
    memcpy(q2, q, sizeof q);
    memcpy(v2, v, sizeof v);
    integrate(&m01, &s, NH_SOLVER_NEWTON, 0.1, 1, q, v);
    integrate(&m0, &s, NH_SOLVER_NEWTON, 0.05, 1, q2, v2);
    integrate(&m1, &s, NH_SOLVER_NEWTON, 0.05, 1, q2, v2);
    double d = fmax(max_abs_diff(s.n, q, q2), max_abs_diff(s.n, v, v2));
    cr_assert(d < 1e-14, "difference %g", d);
}

Test(structure, dd_keeps_the_midpoint_constraint_but_not_the_endpoint_one)
{
    nh_method_spec m;
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], q0[NH_MAX_DIM], v0[NH_MAX_DIM];
    make_method(&m, "dd");
    rotating_state(&s, "eps=0", q, v);
    double worst_mid = 0, worst_end = 0;
    for (int k = 0; k < 200; ++k) {
        memcpy(q0, q, sizeof q);
        memcpy(v0, v, sizeof v);
        integrate(&m, &s, NH_SOLVER_NEWTON, 0.1, 1, q, v);
        double mid[3], vbar[3];
        for (int i = 0; i < 3; ++i) {
            mid[i] = 0.5 * (q0[i] + q[i]);
            vbar[i] = 0.5 * (v0[i] + v[i]);
        }
        worst_mid = fmax(worst_mid, nh_constraint_residual(&s, mid, vbar));
        worst_end = fmax(worst_end, nh_constraint_residual(&s, q, v));
    }
    cr_assert(worst_mid < 1e-14, "midpoint constraint %g", worst_mid);
    /* docs/METHODS.md Sect. 4: O(h^2) endpoint violation, 2.3e-2 at h = 0.1 */
    cr_assert(worst_end > 1e-3 && worst_end < 0.1, "endpoint constraint %g", worst_end);
}

static void one_step(const char *method, const nh_system *s, double h, double *q, double *v)
{
    nh_method_spec m;
    make_method(&m, method);
    cr_assert(eq(int, integrate(&m, s, NH_SOLVER_NEWTON, h, 1, q, v), NH_OK), "%s", method);
}

static double step_difference(const char *a, const char *b, const nh_system *s, const double *q0, const double *v0,
                              double h)
{
    double qa[NH_MAX_DIM], va[NH_MAX_DIM], qb[NH_MAX_DIM], vb[NH_MAX_DIM];
    memcpy(qa, q0, sizeof(double) * s->n);
    memcpy(va, v0, sizeof(double) * s->n);
    memcpy(qb, q0, sizeof(double) * s->n);
    memcpy(vb, v0, sizeof(double) * s->n);
    one_step(a, s, h, qa, va);
    one_step(b, s, h, qb, vb);
    return fmax(max_abs_diff(s->n, qa, qb), max_abs_diff(s->n, va, vb));
}

Test(structure, adjoints_are_the_methods_the_papers_name)
{
    /* docs/METHODS.md Sect. 1: (DLA^alpha)* = DLA^{1-alpha}; Sect. 6: (F^{0,0,0})* = F^{0,0,1} (7e-16).
     * The adjoint solves Phi_{-h}(x1) = x0 to the solver's floor: agreement to 1e-13. */
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    shell_state(&s, "cvt", "eps=0.1", 4.0, 21, q, v);
    double d1 = step_difference("adjoint:inner=dla/alpha=0.4", "dla:alpha=0.6", &s, q, v, 0.1);
    double d2 = step_difference("adjoint:inner=newmark/alpha=0", "newmark:alpha=1", &s, q, v, 0.1);
    double d3 = step_difference("adjoint:inner=dla01", "dla01", &s, q, v, 0.1);
    cr_assert(d1 < 1e-13 && d2 < 1e-13 && d3 < 1e-13, "adjoint differences %g %g %g", d1, d2, d3);
}

Test(structure, spark2_is_newmark_half_with_the_averaged_constraint)
{
    /* Written out, the s = 2 Lobatto IIIA-B SPARK step (docs/METHODS.md Sect. 5) is F^{0,0,1/2} with the
     * constraint (16) of Anahory Simoes et al. 2022: V = v0 + h/2 Gamma(q0, L1) makes q1 = q0 + h v0 + h^2/2 Gamma(q0, L1),
     * 1/2 [A(q0) + A(q1)] V = 0 is (16) at alpha = 1/2, and v1 = V + h/2 Gamma(q1, L2). */
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    shell_state(&s, "quartic", "n=3", 3.06, 4, q, v);
    double d = step_difference("spark2", "newmark:disc=16", &s, q, v, 0.1);
    cr_assert(d < 1e-14, "difference %g", d);
}

Test(structure, newmark_half_positions_are_dla01_nodes)
{
    /* Anahory Simoes et al. 2022, Prop. 3.6 / docs/METHODS.md Sect. 6: F^{0,0,1/2} and DLA^{0,1} generate the same node
     * sequence. Start DLA^{0,1} from the state its node recursion gives for the first two Newmark
     * positions, ((q0 + q1)/2, (q1 - q0)/h), and compare its nodes q + h/2 v with Newmark's q_k. */
    nh_system s;
    nh_method_spec newmark, dla01;
    double qn[NH_MAX_DIM], vn[NH_MAX_DIM], q0[NH_MAX_DIM], qd[NH_MAX_DIM], vd[NH_MAX_DIM];
    const double h = 0.1;
    make_method(&newmark, "newmark");
    make_method(&dla01, "dla01");
    shell_state(&s, "quartic", "n=3", 3.06, 8, qn, vn);
    memcpy(q0, qn, sizeof q0);
    integrate(&newmark, &s, NH_SOLVER_NEWTON, h, 1, qn, vn);
    for (int i = 0; i < s.n; ++i) {
        qd[i] = 0.5 * (q0[i] + qn[i]);
        vd[i] = (qn[i] - q0[i]) / h;
    }
    double worst = 0;
    for (int k = 0; k < 100; ++k) {
        integrate(&newmark, &s, NH_SOLVER_NEWTON, h, 1, qn, vn);
        integrate(&dla01, &s, NH_SOLVER_NEWTON, h, 1, qd, vd);
        for (int i = 0; i < s.n; ++i)
            worst = fmax(worst, fabs(qd[i] + 0.5 * h * vd[i] - qn[i]));
    }
    /* docs/METHODS.md: 4.3e-14 over 100 steps on the CVT */
    cr_assert(worst < 1e-12, "node difference %g", worst);
}

Test(structure, explicit_newmark_never_builds_a_solver)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, "cvt", NULL, NULL);
    make_method(&m, "newmark:alpha=0");
    nh_stepper *st = nh_stepper_create(&m, &s, NH_SOLVER_KINSOL, &err);
    cr_assert(st != NULL && nh_stepper_solver(st) == NULL,
              "F^{0,0,0} is explicit (Anahory Simoes et al. 2022, Prop. 3.9)");
    nh_stepper_free(st);
    make_method(&m, "newmark-psi");
    int reversible = (nh_method_spec_flags(&m) & NH_METHOD_REVERSIBLE) != 0;
    cr_assert(reversible, "Psi_h is symmetric");
}

Test(structure, newmark_refuses_beta_plus_beta2_one_half)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, "cvt", NULL, NULL);
    make_method(&m, "newmark:beta=0.25,beta2=0.25");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "Remark 3.3") != NULL && strstr(err.msg, "parallel") != NULL, "%s", err.msg);
}

Test(structure, compositions_refuse_what_they_cannot_compose)
{
    nh_system s;
    nh_method_spec m;
    nh_error err;
    make_system(&s, "cvt", NULL, NULL);
    make_method(&m, "triple-jump:inner=dla/alpha=0.4");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "not symmetric") != NULL, "%s", err.msg);
    make_method(&m, "triple-jump:inner=lf");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "carries state") != NULL, "%s", err.msg);
    make_method(&m, "compose:inner=dla01,coeffs=0.3/0.3");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "sum to") != NULL, "%s", err.msg);
    make_method(&m, "compose:inner=dla01,coeffs=0.2/0.8");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "palindromic") != NULL, "%s", err.msg);
}

extern const nh_system_type nh_system_cvt;

Test(structure, dstar_methods_need_a_dstar_form_except_gonzalez_r)
{
    /* the CVT without its analytic adapted basis: avf refuses with the reason, gonzalez-r builds the
     * basis by QR and conserves energy and constraint all the same */
    nh_system_type bare = nh_system_cvt;
    bare.adapted_basis = NULL;
    nh_system s;
    nh_error err;
    cr_assert(eq(int, nh_system_init(&s, &bare, NULL, NULL, 0, &err), NH_OK));
    nh_method_spec m;
    make_method(&m, "avf");
    cr_assert(eq(int, nh_method_spec_check(&m, &s, &err), NH_ERR_INPUT));
    cr_assert(strstr(err.msg, "D* form") != NULL && strstr(err.msg, "gonzalez-r") != NULL, "%s", err.msg);
    make_method(&m, "gonzalez-r");
    const double xi = M_PI - 0.3;   /* near the bottom: an oscillating driver, bounded coordinates */
    double q[3] = {1, 1, xi}, v[3] = {-sin(xi) * 0.5, 0.5, 1.0}, max_err, first, last;
    energy_profile(&m, &s, q, v, 0.1, 500, &max_err, &first, &last);
    cr_assert(max_err < 1e-13 && nh_constraint_residual(&s, q, v) < 1e-14, "dH %g, |Av| %g", max_err,
              nh_constraint_residual(&s, q, v));
}

Test(structure, qr_basis_spans_the_kernel_and_its_derivative_matches_differences)
{
    /* Algorithm 1 with fixed signs: A X = 0 to round-off, and dX against central differences of X
     * (step 1e-6: truncation 1e-12, rounding 1e-10, tolerance 1e-7 as for the systems' derivatives) */
    for (int k = 0; k < nh_registry_system_count(test_registry()); ++k) {
        nh_system s;
        make_system(&s, nh_registry_system_at(test_registry(), k)->name, NULL, NULL);
        nh_method_spec m;
        make_method(&m, "gonzalez-r");
        nh_pcg32 rng;
        nh_pcg32_seed(&rng, 3, k);
        double q[NH_MAX_DIM];
        s.type->sample_configuration(&s, &rng, q);
        const int n = s.n, r = n - s.m;
        double signs[NH_MAX_CON], x[NH_MAX_DIM * NH_MAX_DIM], dx[NH_MAX_DIM * NH_MAX_DIM * NH_MAX_DIM];
        double xp[NH_MAX_DIM * NH_MAX_DIM], xm[NH_MAX_DIM * NH_MAX_DIM], a[NH_MAX_CON * NH_MAX_DIM];
        nh_qr_work *qr = malloc(nh_qr_work_bytes());
        cr_assert(eq(int, nh_qr_kernel_basis(&s, q, signs, 1, x, dx, qr), 0));
        s.type->constraint(&s, q, a);
        for (int c = 0; c < s.m; ++c)
            for (int b = 0; b < r; ++b) {
                double dot = 0;
                for (int i = 0; i < n; ++i)
                    dot += a[c * n + i] * x[i * r + b];
                cr_assert(fabs(dot) < 1e-14, "%s: A X = %g", s.type->name, dot);
            }
        for (int j = 0; j < n; ++j) {
            double qq[NH_MAX_DIM];
            memcpy(qq, q, sizeof qq);
            qq[j] = q[j] + 1e-6;
            nh_qr_kernel_basis(&s, qq, signs, 0, xp, NULL, qr);
            qq[j] = q[j] - 1e-6;
            nh_qr_kernel_basis(&s, qq, signs, 0, xm, NULL, qr);
            for (int e = 0; e < n * r; ++e) {
                double fd = (xp[e] - xm[e]) / 2e-6;
                cr_assert(fabs(fd - dx[e * n + j]) < 1e-7 * (1 + fabs(fd)), "%s dX[%d]/dq%d: %g vs %g", s.type->name,
                          e, j, dx[e * n + j], fd);
            }
        }
        free(qr);
    }
}

Test(structure, dstar_methods_keep_energy_and_constraint_on_the_gearbox)
{
    /* Celledoni et al. 2019, Fig. 4: Gonzalez-R preserves energy and constraint to machine precision on the gearbox
     * (cvt, eps = 0.4), and so do the other D* methods. 5e4 steps. Each solve keeps H(q, rho) to its
     * residual floor, a random walk: measured with gonzalez-r, per-step sd 1.2e-16 |H|, so after 5e4
     * steps an rms of 2.6e-14 |H| and a maximum below 4 times that (probability 1.3e-4 above it, as in
     * energy_preserved_to_round_off_where_claimed), plus the rounding of v (a few 1e-16): bound 1.5e-13.
     * A stepper that recomputes rho = X^T M v from its own output at every step drifts instead: gonzalez-r
     * did, by 1.7e-17 |H| a step (measured 8.3e-13 here, 8.2e-12 over the 5e5 steps of Celledoni et al. 2019). */
    const char *variants[] = {"gonzalez-r", "gonzalez-r:fd=1", "gonzalez", "avf", "itoh-abe"};
    for (int k = 0; k < 5; ++k) {
        nh_method_spec m;
        nh_system s;
        double q[NH_MAX_DIM], v[NH_MAX_DIM], max_err, first, last;
        make_method(&m, variants[k]);
        shell_state(&s, "cvt", "eps=0.4", 2.0, 1, q, v);
        double h0 = nh_energy(&s, q, v);
        energy_profile(&m, &s, q, v, 0.1, 50000, &max_err, &first, &last);
        cr_log_info("%s on the gearbox: max |dH|/H = %g over 5e4 steps", variants[k], max_err / h0);
        cr_expect(max_err / h0 < 1.5e-13, "%s: |dH|/H = %g", variants[k], max_err / h0);
        cr_expect(nh_constraint_residual(&s, q, v) < 1e-14, "%s: |A v| = %g", variants[k],
                  nh_constraint_residual(&s, q, v));
    }
}

/* The D* frames keep the nonzero pattern of X and dX in the stepper's workspace: the system's declared
 * pattern (the quartic declares one), or one that grows when a nonzero appears outside it. On the
 * quartic X has the entries w_i (X_{k+i}^x = w_i): started from w = 0 they are zero at the first
 * evaluations and must join a grown pattern once w moves. Three steppers must give the same bits: a
 * fresh one with the declared pattern, one that has already integrated another state, and one on a copy
 * of the quartic without the declaration (its pattern found by scanning and grown). */
Test(structure, dstar_sparsity_pattern_grows_and_does_not_change_results)
{
    const char *methods[] = {"gonzalez", "avf", "itoh-abe"};
    for (int c = 0; c < 3; ++c) {
        nh_system s, scanned;
        nh_method_spec m;
        nh_error err;
        make_system(&s, "quartic", "n=3", NULL);
        cr_assert(s.type->adapted_basis_pattern != NULL, "the quartic declares its pattern");
        nh_system_type undeclared = *s.type;
        undeclared.adapted_basis_pattern = NULL;
        scanned = s;
        scanned.type = &undeclared;
        make_method(&m, methods[c]);
        /* q = (x, w, z) with w = 0; v in D_q: x' + w.z' = 0, so x' = 0 */
        const double q0[7] = {0.3, 0, 0, 0, 0.8, -0.5, 0.4}, v0[7] = {0, 0.6, -0.4, 0.5, 0.7, 0.2, -0.3};
        double q[3][7], v[3][7], carried[3][NH_MAX_UNKNOWNS];
        nh_stepper *st[3] = {nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err),
                             nh_stepper_create(&m, &s, NH_SOLVER_NEWTON, &err),
                             nh_stepper_create(&m, &scanned, NH_SOLVER_NEWTON, &err)};
        double wq[NH_MAX_DIM], wv[NH_MAX_DIM];
        shell_state(&s, "quartic", "n=3", 3.06, 5, wq, wv);   /* a generic state: every entry nonzero */
        nh_stepper_start(st[1], wq, wv, carried[1]);
        for (int k = 0; k < 20; ++k)
            cr_assert(eq(int, nh_stepper_step(st[1], 0.1, wq, wv, carried[1]), NH_OK));
        const double h0 = nh_energy(&s, q0, v0);
        double worst = 0;
        for (int r = 0; r < 3; ++r) {
            memcpy(q[r], q0, sizeof q0);
            memcpy(v[r], v0, sizeof v0);
            nh_stepper_start(st[r], q[r], v[r], carried[r]);
            for (int k = 0; k < 200; ++k) {
                cr_assert(eq(int, nh_stepper_step(st[r], 0.1, q[r], v[r], carried[r]), NH_OK), "%s step %d", methods[c], k);
                worst = fmax(worst, fabs(nh_energy(&s, q[r], v[r]) - h0));
            }
        }
        /* the w entries must have joined: the state moved away from w = 0 */
        cr_assert(fabs(q[0][1]) + fabs(q[0][2]) + fabs(q[0][3]) > 0.1, "%s: w stayed at 0", methods[c]);
        for (int r = 1; r < 3; ++r)
            cr_assert(memcmp(q[0], q[r], sizeof q[0]) == 0 && memcmp(v[0], v[r], sizeof v[0]) == 0,
                      "%s: the %s stepper gives other bits than a fresh one", methods[c], r == 1 ? "used" : "scanning");
        /* energy at round-off, the bound of energy_preserved_to_round_off_where_claimed for 200 steps
         * (a missing entry of X would change the dynamics at O(1)) */
        cr_assert(worst < 1e-13, "%s: max |dH| = %g", methods[c], worst);
        for (int r = 0; r < 3; ++r)
            nh_stepper_free(st[r]);
    }
}

/* A test system whose adapted basis depends on q in the components it differentiates along (none of the
 * built-in bases do), so every term of the analytic D* Newton matrix is nonzero; diagonal mass 2, 1, 3.
 *   X_0 = (1, sin q2, q0 q1), X_1 = (cos q0, 1 + q2^2, q1), A = X_0 x X_1, V = |q|^2/2 + q0^2 q1^2/4 */
static void twisted_dimensions(const double *par, int *n, int *m)
{
    (void)par;
    *n = 3;
    *m = 1;
}

static void twisted_mass(const nh_system *s, double *diag)
{
    (void)s;
    diag[0] = 2, diag[1] = 1, diag[2] = 3;
}

static double twisted_potential(const nh_system *s, const double *q)
{
    (void)s;
    return 0.5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) + 0.25 * q[0] * q[0] * q[1] * q[1];
}

static void twisted_gradient(const nh_system *s, const double *q, double *g)
{
    (void)s;
    g[0] = q[0] + 0.5 * q[0] * q[1] * q[1], g[1] = q[1] + 0.5 * q[0] * q[0] * q[1], g[2] = q[2];
}

static void twisted_hessian(const nh_system *s, const double *q, double *h)
{
    (void)s;
    const double h00 = 1 + 0.5 * q[1] * q[1], h11 = 1 + 0.5 * q[0] * q[0], h01 = q[0] * q[1];
    const double values[9] = {h00, h01, 0, h01, h11, 0, 0, 0, 1};
    memcpy(h, values, sizeof values);
}

static void twisted_basis(const nh_system *s, const double *q, double *x, double *dx)
{
    (void)s;
    const double basis[6] = {1, cos(q[0]), sin(q[2]), 1 + q[2] * q[2], q[0] * q[1], q[1]};   /* x[i*2 + a] */
    memcpy(x, basis, sizeof basis);
    memset(dx, 0, 18 * sizeof *dx);   /* dx[(i*2 + a)*3 + j] */
    dx[(0 * 2 + 1) * 3 + 0] = -sin(q[0]);
    dx[(1 * 2 + 0) * 3 + 2] = cos(q[2]);
    dx[(1 * 2 + 1) * 3 + 2] = 2 * q[2];
    dx[(2 * 2 + 0) * 3 + 0] = q[1];
    dx[(2 * 2 + 0) * 3 + 1] = q[0];
    dx[(2 * 2 + 1) * 3 + 1] = 1;
}

static void twisted_constraint(const nh_system *s, const double *q, double *a)
{
    double x[6], dx[18];
    twisted_basis(s, q, x, dx);
    a[0] = x[2] * x[5] - x[4] * x[3];
    a[1] = x[4] * x[1] - x[0] * x[5];
    a[2] = x[0] * x[3] - x[2] * x[1];
}

/* dA/dq_j = dX_0/dq_j x X_1 + X_0 x dX_1/dq_j, as dA[j*3 + i] */
static void twisted_constraint_derivative(const nh_system *s, const double *q, double *da)
{
    double x[6], dx[18];
    twisted_basis(s, q, x, dx);
    for (int j = 0; j < 3; ++j) {
        double x0[3], x1[3], d0[3], d1[3];
        for (int i = 0; i < 3; ++i)
            x0[i] = x[i * 2], x1[i] = x[i * 2 + 1], d0[i] = dx[(i * 2) * 3 + j], d1[i] = dx[(i * 2 + 1) * 3 + j];
        for (int i = 0; i < 3; ++i) {
            const int a = (i + 1) % 3, b = (i + 2) % 3;
            da[j * 3 + i] = d0[a] * x1[b] - d0[b] * x1[a] + x0[a] * d1[b] - x0[b] * d1[a];
        }
    }
}

static void twisted_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    double da[9];
    twisted_constraint_derivative(s, q, da);
    for (int j = 0; j < 3; ++j)
        out[j] = da[j * 3] * u[0] + da[j * 3 + 1] * u[1] + da[j * 3 + 2] * u[2];
}

static void twisted_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    double da[9];
    twisted_constraint_derivative(s, q, da);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            out[i * 3 + j] = lam[0] * da[j * 3 + i];
}

static void twisted_sample(const nh_system *s, nh_pcg32 *rng, double *q)
{
    (void)s;
    for (int i = 0; i < 3; ++i)
        q[i] = 0.5 * nh_pcg32_gaussian(rng);
}

static double twisted_minimum(const nh_system *s)
{
    (void)s;
    return 0.0;
}

static const nh_system_type TWISTED = {
    .name = "twisted", .summary = "test", .reference = "test", .dimensions = twisted_dimensions,
    .mass = twisted_mass, .potential = twisted_potential, .potential_gradient = twisted_gradient,
    .potential_hessian = twisted_hessian, .constraint = twisted_constraint,
    .constraint_jacobian_velocity = twisted_jacobian_velocity,
    .constraint_jacobian_multiplier = twisted_jacobian_multiplier, .sample_configuration = twisted_sample,
    .minimum_energy = twisted_minimum, .adapted_basis = twisted_basis};

/* max |analytic - differences| / scale of a stepper's Newton matrices at its first solve's guess
 * (nh_stepper_newton_matrices), scale = max(1, max |differences - I/h|): the D* matrices' identity/h part
 * is exact in both and is left out of the scale (minus_identity); -1 if the method has no solver of its
 * own on s. Fails when the method's residual_and_jacobian (if it has one) does not give the bits of its
 * residual and matrix at that guess. */
/* State k of the tests that run on every system: built-in system k at its test shell (test_shell) for k below the
 * registry's count, then extra[k - count], trajectory 0 of `seed`; 0 past the end. */
typedef struct extra_state { const char *system, *over; double energy; } extra_state;
static int every_system_state(int k, const extra_state *extra, int n_extra, uint64_t seed, nh_system *s, double *q,
                              double *v)
{
    const int n = nh_registry_system_count(test_registry());
    if (k < n)
        registry_shell_state(s, k, seed, q, v);
    else if (k - n < n_extra)
        shell_state(s, extra[k - n].system, extra[k - n].over, extra[k - n].energy, seed, q, v);
    return k < n + n_extra;
}

static double newton_matrix_mismatch(const char *method, const nh_system *s, const double *q, const double *v, double h,
                                     int minus_identity)
{
    nh_method_spec m;
    nh_error err;
    static double analytic[NH_MAX_UNKNOWNS * NH_MAX_UNKNOWNS], differences[NH_MAX_UNKNOWNS * NH_MAX_UNKNOWNS];
    make_method(&m, method);
    nh_stepper *st = nh_stepper_create(&m, s, NH_SOLVER_NEWTON, &err);
    cr_assert(st != NULL, "%s on %s: %s", method, s->type->name, err.msg);
    int dim = 0;
    const int has_solver = nh_stepper_solver(st) != NULL;
    const int rc = has_solver ? nh_stepper_newton_matrices(st, h, q, v, analytic, differences, &dim) : 1;
    nh_stepper_free(st);
    if (!has_solver)
        return -1;
    cr_assert(rc != 1, "%s on %s: no Newton matrix recorded", method, s->type->name);
    cr_assert(rc != 2, "%s on %s: residual_and_jacobian differs from the residual and matrix it stands for", method,
              s->type->name);
    cr_assert(eq(int, rc, 0), "%s on %s: nh_stepper_newton_matrices returned %d", method, s->type->name, rc);
    double scale = 1.0, worst = 0.0;
    for (int i = 0; i < dim; ++i)
        for (int j = 0; j < dim; ++j) {
            scale = fmax(scale, fabs(differences[i * dim + j] - (minus_identity && i == j ? 1.0 / h : 0.0)));
            worst = fmax(worst, fabs(analytic[i * dim + j] - differences[i * dim + j]));
        }
    return worst / scale;
}

/* The analytic Newton matrix of the D* steps (methods/dstar_jacobian.c) against forward differences of
 * the residual, at the test shell of every constant-mass system with a D* form (and two more states) and on
 * the `twisted` test system (where every term of the formula is nonzero), at the step's initial guess (z1 != z0, so the Gonzalez
 * correction, the Itoh-Abe walk and the AVF node spread are active). Differences carry an error of about
 * NH_FD_STEP times the residual's second derivatives plus eps |F| / NH_FD_STEP, ~1e-7 of the matrix's
 * O(1) part (measured: at most 6.5e-7 for gonzalez, itoh-abe, gonzalez-r and avf:nodes=2, whose matrix
 * uses its own 2 nodes); 1e-5 leaves a factor 15. Default AVF (8 nodes) builds its matrix with 2 Gauss
 * points, an O(|delta|^4) difference from the exact derivative: measured at most 3.2e-4 over these states,
 * bounded by 1e-3. The identity/h part is exact in both and is removed from the scale, so the O(1)
 * terms (Hess H, dPi) are what is compared: a dropped term of the formula is O(1) and fails. */
Test(structure, dstar_analytic_newton_matrix_matches_differences)
{
    /* every built-in system's test shell (the constant-mass ones with a D* form), and two more states */
    const extra_state extra[] = {{"quartic", "n=3", 3.06}, {"cvt", "eps=0.1", 6.0}};
    const struct { const char *method; double bound; } methods[] = {
        {"gonzalez", 1e-5}, {"avf:nodes=2", 1e-5}, {"itoh-abe", 1e-5}, {"gonzalez-r", 1e-5}, {"avf", 1e-3}};
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    int states = 0;
    double worst[5] = {0};
    for (int k = 0; every_system_state(k, extra, 2, 7 + k, &s, q, v); ++k) {
        if (!s.type->adapted_basis || nh_has_variable_mass(&s))
            continue;
        ++states;
        for (int c = 0; c < 5; ++c) {
            const double mismatch = newton_matrix_mismatch(methods[c].method, &s, q, v, 0.1, 1);
            cr_assert(mismatch < methods[c].bound && mismatch > 0.0,   /* 0: differences compared with themselves */
                      "%s on %s: |analytic - differences| / scale = %g", methods[c].method, s.type->name, mismatch);
            worst[c] = fmax(worst[c], mismatch);
        }
    }
    cr_assert(states >= 10, "only %d constant-mass states with a D* form", states);
    cr_log_info("D* Newton matrices on %d states, worst mismatch: gonzalez %g, avf:nodes=2 %g, itoh-abe %g, "
                "gonzalez-r %g, avf %g", states, worst[0], worst[1], worst[2], worst[3], worst[4]);
    nh_error err;
    cr_assert(eq(int, nh_system_init(&s, &TWISTED, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    nh_check_report rep;   /* the test system's own derivatives against differences */
    cr_assert(eq(int, nh_system_check(&s, 5, 7, &rep, &err), NH_OK), "%s", err.msg);
    cr_assert(eq(int, rep.failed, 0), "twisted: %d rows of nhens check fail", rep.failed);
    const double qt[3] = {0.3, -0.4, 0.5}, alpha = 0.7, beta = -0.2;
    double x[6], dx[18], vt[3];
    twisted_basis(&s, qt, x, dx);
    for (int i = 0; i < 3; ++i)
        vt[i] = alpha * x[i * 2] + beta * x[i * 2 + 1];
    for (int c = 0; c < 3; ++c) {
        const double mismatch = newton_matrix_mismatch(methods[c].method, &s, qt, vt, 0.1, 1);
        cr_assert(mismatch < methods[c].bound, "%s on twisted: |analytic - differences| / scale = %g",
                  methods[c].method, mismatch);
    }
    /* Itoh-Abe's row of a coordinate that does not move (x' = 0 at this state, so Delta_x = 0 at the
     * guess) is the forward-difference branch: measured 2.1e-7 (1.5e-2 with its diagonal dropped) */
    nh_system quartic;
    make_system(&quartic, "quartic", "n=3", NULL);
    const double q_still[7] = {0.3, 0, 0, 0, 0.8, -0.5, 0.4}, v_still[7] = {0, 0.6, -0.4, 0.5, 0.7, 0.2, -0.3};
    const double still = newton_matrix_mismatch("itoh-abe", &quartic, q_still, v_still, 0.1, 1);
    cr_assert(still < 1e-5, "itoh-abe with a coordinate at rest: |analytic - differences| / scale = %g", still);
}

/* The analytic Newton matrices of the other implicit methods against forward differences of their
 * residuals (nh_stepper_newton_matrices), at the first solve's guess on every system's test shell where the
 * method has a solver of its own. The differences' error is about NH_FD_STEP times the residual's second
 * derivatives, ~1e-7 of the largest entry (measured at most 2.2e-8 over the 100 pairs of the systems' test shells
 * and the n = 3 quartic); 1e-5 leaves a factor of 450, and a dropped or mis-signed term, O(h) or more of the matrix, fails. A mismatch of
 * exactly 0 would be differences compared with themselves (no analytic matrix) and fails too. */
Test(structure, analytic_newton_matrices_match_differences)
{
    const char *methods[] = {"dla", "idla", "dla:alpha=0.4", "dla01", "spark2", "dd", "newmark",
                             "newmark:beta=0.2,beta2=0.1", "newmark:disc=16", "newmark-psi", "genfun",
                             "genfun:variant=5", "genfun:alpha=0.4", "genfun:variant=6", "gonzalez-f"};
    double worst = 0.0;
    int compared = 0;
    nh_system s;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    const extra_state extra[] = {{"quartic", "n=3", 3.06}};
    for (int k = 0; every_system_state(k, extra, 1, 11 + k, &s, q, v); ++k)   /* every system's test shell, and one more */
        for (size_t c = 0; c < sizeof methods / sizeof methods[0]; ++c) {
            nh_method_spec m;
            nh_error err;
            make_method(&m, methods[c]);
            if (nh_method_spec_check(&m, &s, &err) != NH_OK)
                continue;   /* e.g. a reduced system that the method does not serve */
            const double mismatch = newton_matrix_mismatch(methods[c], &s, q, v, 0.1, 0);
            if (mismatch < 0)
                continue;   /* no solver of its own on this system (a linear step) */
            cr_assert(mismatch < 1e-5 && mismatch > 0.0, "%s on %s: |analytic - differences| / scale = %g",
                      methods[c], s.type->name, mismatch);
            worst = fmax(worst, mismatch);
            ++compared;
        }
    cr_assert(compared >= 40, "only %d method/system pairs had a Newton matrix", compared);
    cr_log_info("analytic Newton matrices: %d pairs, worst mismatch %g", compared, worst);
}

/* A test system that is not CVT-type: the twisted system's mass and potential, with A = [1, q0, q1], which
 * reads q0 and q1, the coordinates its force A^T lam moves. */
static void tilted_constraint(const nh_system *s, const double *q, double *a)
{
    (void)s;
    a[0] = 1, a[1] = q[0], a[2] = q[1];
}

static void tilted_jacobian_velocity(const nh_system *s, const double *q, const double *u, double *out)
{
    (void)s, (void)q;
    out[0] = u[1], out[1] = u[2], out[2] = 0;   /* d(u0 + q0 u1 + q1 u2)/dq */
}

static void tilted_jacobian_multiplier(const nh_system *s, const double *q, const double *lam, double *out)
{
    (void)s, (void)q;
    memset(out, 0, 9 * sizeof *out);   /* A^T lam = (lam, q0 lam, q1 lam) */
    out[1 * 3 + 0] = out[2 * 3 + 1] = lam[0];
}

static const nh_system_type TILTED = {
    .name = "tilted", .summary = "test", .reference = "test", .dimensions = twisted_dimensions,
    .mass = twisted_mass, .potential = twisted_potential, .potential_gradient = twisted_gradient,
    .potential_hessian = twisted_hessian, .constraint = tilted_constraint,
    .constraint_jacobian_velocity = tilted_jacobian_velocity,
    .constraint_jacobian_multiplier = tilted_jacobian_multiplier, .sample_configuration = twisted_sample,
    .minimum_energy = twisted_minimum};

/* |r - A^T lam_hat| / max(1, |r|) for the least-squares lam_hat (m = 1): whether r lies in range A(q)^T */
static double off_range(const nh_system *s, const double *q, const double *r)
{
    double a[NH_MAX_DIM], aa = 0, ar = 0, worst = 0, size = 1;
    s->type->constraint(s, q, a);
    for (int i = 0; i < s->n; ++i)
        aa += a[i] * a[i], ar += a[i] * r[i];
    for (int i = 0; i < s->n; ++i)
        worst = fmax(worst, fabs(r[i] - ar / aa * a[i])), size = fmax(size, fabs(r[i]));
    return worst / size;
}

/* The residuals of the equations of Anahory Simoes et al. 2022, Def. 3.1, after one step (q0, v0) -> (q1, v1) of
 * F^{0,beta',alpha} with constraint (15) (or (16) when averaged): the position equation's M(q1 - q0 - h v0) 2/h^2 +
 * grad V(q0) must lie in range A(q0)^T (then lam is its coefficient), Phi_alpha and A(q1) v1 must vanish, and the
 * backward equation's M(v1 - (q1 - q0)/h - h beta' Gamma(q0, lam)) 2/(h (1 - 2 beta')) + grad V(q1) must lie in range
 * A(q1)^T. Returns the largest, relative to the size of the terms. */
static double newmark_equations(const nh_system *s, double h, double beta2, double alpha, int averaged,
                                const double *q0, const double *v0, const double *q1, const double *v1)
{
    const int n = s->n;
    double r[NH_MAX_DIM], g[NH_MAX_DIM], a[NH_MAX_DIM], a1[NH_MAX_DIM], qa[NH_MAX_DIM], aa = 0, ar = 0;
    s->type->potential_gradient(s, q0, g);
    s->type->constraint(s, q0, a);
    for (int i = 0; i < n; ++i)
        r[i] = s->mass[i] * (q1[i] - q0[i] - h * v0[i]) * 2 / (h * h) + g[i];
    double worst = off_range(s, q0, r);
    for (int i = 0; i < n; ++i)
        aa += a[i] * a[i], ar += a[i] * r[i];
    const double lam = ar / aa;   /* Gamma(q0, lam) = M^-1 (A^T lam - grad V) = M^-1 (r - grad V) + O(rounding) */
    for (int i = 0; i < n; ++i)
        qa[i] = averaged ? q1[i] : (1 - alpha) * q0[i] + alpha * q1[i];
    s->type->constraint(s, qa, a1);
    double phi = 0, av = 0;
    s->type->constraint(s, q1, qa);   /* qa now holds A(q1) */
    for (int i = 0; i < n; ++i) {
        const double a_star = averaged ? (1 - alpha) * a[i] + alpha * a1[i] : a1[i];
        phi += a_star * (q1[i] - q0[i]) / h;
        av += qa[i] * v1[i];
    }
    worst = fmax(worst, fmax(fabs(phi), fabs(av)) / fmax(1.0, nh_norm_inf(n, v1)));
    s->type->potential_gradient(s, q1, g);
    double g0[NH_MAX_DIM];
    s->type->potential_gradient(s, q0, g0);
    for (int i = 0; i < n; ++i) {
        const double gamma0 = s->inv_mass[i] * (a[i] * lam - g0[i]);
        r[i] = s->mass[i] * (v1[i] - (q1[i] - q0[i]) / h - h * beta2 * gamma0) * 2 / (h * (1 - 2 * beta2)) + g[i];
    }
    return fmax(worst, off_range(s, q1, r));
}

Test(structure, newmark_with_beta_zero_solves_its_equations_through_lam_alone)
{
    /* beta = 0: the step solves Phi_alpha for lam (m equations; linear on CVT-type systems and for
     * alpha = 0, Newton on the others) and A(q1) v1 = 0 for lam' (linear). On the quartic (CVT-type) and on
     * the tilted test system (not), every variant must satisfy the four equations of Def. 3.1 to round-off:
     * the terms are O(1) and the position equation divides a rounding of q by h^2/2 = 5e-3, so ~1e-13; measured
     * at most 3e-14 (bound 1e-11). Where lam's equations are nonlinear, the Newton matrix must match
     * differences (the bound and error of analytic_newton_matrices_match_differences). */
    static const struct { const char *spec; double beta2, alpha; int averaged; } variants[] = {
        {"newmark", 0, 0.5, 0},          {"newmark:disc=16", 0, 0.5, 1}, {"newmark:alpha=0", 0, 0, 0},
        {"newmark:alpha=1", 0, 1, 0},    {"newmark:beta2=0.1", 0.1, 0.5, 0}, {"newmark:alpha=0.3,disc=16", 0, 0.3, 1}};
    nh_system systems[2];
    nh_error err;
    make_system(&systems[0], "quartic", "n=3", NULL);
    cr_assert(eq(int, nh_system_init(&systems[1], &TILTED, NULL, NULL, 0, &err), NH_OK), "%s", err.msg);
    for (int k = 0; k < 2; ++k) {
        const nh_system *s = &systems[k];
        nh_pcg32 rng;
        double q0[NH_MAX_DIM], v0[NH_MAX_DIM];
        nh_pcg32_for_trajectory(&rng, 5, 0);
        cr_assert(eq(int, nh_energy_shell_sample(s, 1.5, &rng, q0, v0), NH_OK));
        for (size_t c = 0; c < sizeof variants / sizeof variants[0]; ++c) {
            nh_method_spec m;
            make_method(&m, variants[c].spec);
            nh_stepper *st = nh_stepper_create(&m, s, NH_SOLVER_NEWTON, &err);
            cr_assert(st != NULL, "%s", err.msg);
            const int linear = k == 0 || variants[c].alpha == 0;
            cr_expect(eq(int, nh_stepper_solver(st) != NULL, !linear), "%s on %s: solver", variants[c].spec,
                      s->type->name);
            nh_stepper_free(st);
            double q[NH_MAX_DIM], v[NH_MAX_DIM];
            memcpy(q, q0, sizeof q);
            memcpy(v, v0, sizeof v);
            cr_assert(eq(int, integrate(&m, s, NH_SOLVER_NEWTON, 0.1, 1, q, v), NH_OK));
            const double residual =
                newmark_equations(s, 0.1, variants[c].beta2, variants[c].alpha, variants[c].averaged, q0, v0, q, v);
            cr_expect(residual < 1e-11, "%s on %s: equations of Def. 3.1 at %g", variants[c].spec, s->type->name,
                      residual);
            cr_log_info("%s on %s: %g", variants[c].spec, s->type->name, residual);
            if (!linear) {
                const double mismatch = newton_matrix_mismatch(variants[c].spec, s, q0, v0, 0.1, 0);
                cr_expect(mismatch > 0.0 && mismatch < 1e-5, "%s on %s: |analytic - differences| / scale = %g",
                          variants[c].spec, s->type->name, mismatch);
            }
        }
    }
}
