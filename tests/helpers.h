/* Shared helpers of the test suite: build systems and methods by name, integrate with a method. */
#ifndef NHENS_TEST_HELPERS_H
#define NHENS_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhens/method.h"
#include "nhens/method_type.h"
#include "nhens/registry.h"
#include "nhens/system.h"

/* The built-in registry, created once per test process (each Criterion test runs in its own process). */
static inline const nh_registry *test_registry(void)
{
    static nh_registry *reg;
    if (!reg) {
        nh_error err;
        reg = nh_registry_create(&err);
        cr_assert(reg != NULL, "%s", err.msg);
    }
    return reg;
}

static inline void make_system(nh_system *s, const char *name, const char *overrides, const char *preset)
{
    nh_error err;
    const nh_system_type *t = nh_registry_find_system(test_registry(), name);
    cr_assert(t != NULL, "system %s", name);
    /* "a=1,b=2" -> {"a=1", "b=2"} */
    char buf[256];
    const char *list[8];
    int count = 0;
    snprintf(buf, sizeof buf, "%s", overrides ? overrides : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && count < 8; tok = strtok_r(NULL, ",", &save))
        list[count++] = tok;
    const nh_preset *p = preset ? nh_system_find_preset(t, preset) : NULL;
    cr_assert(preset == NULL || p != NULL, "preset %s", preset);
    int rc = nh_system_init(s, t, p, list, count, &err);
    cr_assert(rc == NH_OK, "%s", err.msg);
}

/* The energy shell a system declares for the tests that run on every system: its first shell preset (every
 * built-in system declares one: systems.every_builtin_system_declares_a_shell), so that adding a system to
 * systems/builtin_systems.h brings it into those tests with no list of theirs to extend. */
static inline const nh_preset *test_shell(const nh_system_type *t)
{
    const nh_preset *shell = NULL;
    for (int i = t->n_presets - 1; i >= 0; --i)
        if (nh_preset_is_shell(&t->presets[i]))
            shell = &t->presets[i];
    cr_assert(shell != NULL, "system %s declares no energy-shell preset", t->name);
    return shell;
}

/* s: system t at its test shell's parameters (the preset's overrides); returns the shell's energy. */
static inline double make_shell_system(nh_system *s, const nh_system_type *t)
{
    const nh_preset *p = test_shell(t);
    nh_error err;
    cr_assert(nh_system_init(s, t, p, NULL, 0, &err) == NH_OK, "%s: %s", t->name, err.msg);
    return p->shell_energy;
}

static inline void make_method(nh_method_spec *spec, const char *text)
{
    nh_error err;
    cr_assert(nh_method_spec_parse(test_registry(), spec, text, &err) == NH_OK, "%s", err.msg);
}

/* Integrate `steps` steps of size h from (q, v) in place; returns the first non-zero step status. */
static inline int integrate(const nh_method_spec *spec, const nh_system *s, nh_solver_kind kind, double h,
                            long steps, double *q, double *v)
{
    nh_error err;
    nh_stepper *st = nh_stepper_create(spec, s, kind, &err);
    cr_assert(st != NULL, "%s", err.msg);
    double carried[NH_MAX_UNKNOWNS] = {0};
    int rc = nh_stepper_start(st, q, v, carried);
    for (long k = 0; k < steps && rc == NH_OK; ++k)
        rc = nh_stepper_step(st, h, q, v, carried);
    nh_stepper_free(st);
    return rc;
}

static inline double max_abs_diff(int n, const double *a, const double *b)
{
    double d = 0.0;
    for (int i = 0; i < n; ++i)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

#endif
