/* nh_system_check (engine/check.c, `nhens check`): a system with a wrong derivative, a basis outside its
 * declared pattern, a curved constraint declared affine or a coordinate wrongly declared an angle or
 * ignorable fails the row that names it, and only that row. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "helpers.h"
#include "nhens/check.h"

/* hcvt's Hessian with one entry off by 1e-3: the error a sign or factor slip in a user's system makes */
static void slightly_wrong_hessian(const nh_system *s, const double *q, double *h)
{
    nh_registry_find_system(test_registry(), "hcvt")->potential_hessian(s, q, h);
    h[4] += 1e-3;
}

/* nh_system_check of `system` (seed 7) with its descriptor changed by `patch` */
static void check_patched(const char *system, const char *over, void (*patch)(nh_system_type *), int points,
                          nh_check_report *rep)
{
    nh_system s;
    nh_error err;
    make_system(&s, system, over, NULL);
    nh_system_type broken = *s.type;
    patch(&broken);
    s.type = &broken;
    cr_assert(eq(int, nh_system_check(&s, points, 7, rep, &err), NH_OK), "%s", err.msg);
}

static void break_hessian(nh_system_type *t)
{
    t->potential_hessian = slightly_wrong_hessian;
}

/* Exactly one row of rep fails: the one whose name contains `named`, with its worst error in (low, high). */
static void assert_only_row_fails(const nh_check_report *rep, const char *named, double low, double high)
{
    cr_assert(eq(int, rep->failed, 1));
    for (int r = 0; r < rep->n_rows; ++r) {
        const int is_named = strstr(rep->rows[r].name, named) != NULL;
        cr_assert(eq(int, rep->rows[r].passed, !is_named), "%s", rep->rows[r].name);
        if (is_named)
            cr_assert(rep->rows[r].worst > low && rep->rows[r].worst < high, "%g", rep->rows[r].worst);
    }
}

Test(systems, check_finds_a_wrong_derivative_and_names_it)
{
    nh_check_report rep;
    check_patched("hcvt", "", break_hessian, 5, &rep);
    assert_only_row_fails(&rep, "Hessian", 5e-4, 2e-3);   /* an entry of size 1 off by 1e-3, relative */
}

/* The quartic's declared pattern with one dX entry dropped (the basis then writes outside it) and one
 * X entry added that the basis never writes: `nhens check` must count both. */
static void wrong_pattern(const nh_system *s, unsigned char *x_mask, unsigned char *dx_mask)
{
    nh_registry_find_system(test_registry(), "quartic")->adapted_basis_pattern(s, x_mask, dx_mask);
    for (int k = 0;; ++k)
        if (dx_mask[k]) {
            dx_mask[k] = 0;
            break;
        }
    for (int k = 0;; ++k)
        if (!x_mask[k]) {
            x_mask[k] = 1;
            break;
        }
}

static void break_pattern(nh_system_type *t)
{
    t->adapted_basis_pattern = wrong_pattern;
}

Test(systems, check_finds_a_basis_writing_outside_its_declared_pattern)
{
    nh_check_report rep;
    check_patched("quartic", "n=2", break_pattern, 3, &rep);
    int named = 0;
    for (int r = 0; r < rep.n_rows; ++r) {
        if (!strstr(rep.rows[r].name, "declared pattern"))
            continue;
        named = 1;
        cr_assert(eq(int, rep.rows[r].passed, 0));
        cr_assert(eq(dbl, rep.rows[r].worst, 2.0), "two offending entries, got %g", rep.rows[r].worst);
    }
    cr_assert(named, "a row names the declared pattern");
    /* the D* rows see the dropped dX entry too (the frames trust the declaration) */
    cr_assert(rep.failed >= 1, "failed rows: %d", rep.failed);
}

static void declare_affine(nh_system_type *t)
{
    t->flags |= NH_SYS_AFFINE_CONSTRAINT;
}

Test(systems, check_finds_a_curved_constraint_declared_affine)
{
    /* the CVT's A = [1, sin xi, 0] declared affine: d(A u)/dq = cos(xi) u_2 moves by O(1) between the
     * check's two points (xi + 0.37 (1 + |xi|)), far above the row's round-off tolerance */
    nh_check_report rep;
    check_patched("cvt", "eps=0.3", declare_affine, 5, &rep);
    assert_only_row_fails(&rep, "affine", 1e-2, INFINITY);
}

/* cvt's x1 (q[0]) declared an angle, then ignorable: V = x1^2/2 + ... moves by 2 pi x1 + 2 pi^2 when x1
 * turns by 2 pi, and by O(1) or O(10^6) when it moves by 3.7 or -1234.5 */
static void first_coordinate_is_an_angle(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[0] = NH_COORDINATE_ANGLE;
}

static void first_coordinate_is_ignorable(const nh_system *s, unsigned char *kind)
{
    (void)s;
    kind[0] = NH_COORDINATE_IGNORABLE;
}

static void declare_x1_an_angle(nh_system_type *t)
{
    t->coordinate_kinds = first_coordinate_is_an_angle;
}

static void declare_x1_ignorable(nh_system_type *t)
{
    t->coordinate_kinds = first_coordinate_is_ignorable;
}

Test(systems, check_finds_a_coordinate_wrongly_declared_an_angle_or_ignorable)
{
    /* V, grad V and A differ by O(1) at the moved x1; the row's tolerance is round-off (1e-12) */
    nh_check_report rep;
    check_patched("cvt", "eps=0.3", declare_x1_an_angle, 5, &rep);
    assert_only_row_fails(&rep, "ignorable", 1e-2, INFINITY);
    check_patched("cvt", "eps=0.3", declare_x1_ignorable, 5, &rep);
    assert_only_row_fails(&rep, "ignorable", 1e-2, INFINITY);
}

Test(systems, the_declared_affine_constraints_are_checked)
{
    /* the quartic, hcvt, mvparticle and dlparticle declare A affine: their row applies and passes (the
     * derivatives_match test above runs it on every system) */
    const char *const affine[] = {"quartic", "hcvt", "mvparticle", "dlparticle"};
    for (int k = 0; k < 4; ++k) {
        nh_system s;
        nh_check_report rep;
        nh_error err;
        make_system(&s, affine[k], NULL, NULL);
        const int declared = (s.type->flags & NH_SYS_AFFINE_CONSTRAINT) != 0;   /* a variable: cr_assert's
                                                                                  parser misreads a & b */
        cr_assert(declared, "%s declares A affine", affine[k]);
        cr_assert(eq(int, nh_system_check(&s, 3, 5, &rep, &err), NH_OK), "%s", err.msg);
        for (int r = 0; r < rep.n_rows; ++r)
            if (strstr(rep.rows[r].name, "affine"))
                cr_assert(rep.rows[r].applies && rep.rows[r].passed && rep.rows[r].worst == 0.0, "%s: %g",
                          affine[k], rep.rows[r].worst);
    }
}
