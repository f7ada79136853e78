/* Plugins through the nhens program (--plugin, engine/plugin.c): the example method and system run at
 * their order and pass `nhens check`; a plugin of another ABI or a system without V's Hessian is refused. */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_nhens.h"
#include "scratch.h"
#include "nhens/plugin.h"

Test(cli, plugin_method_runs_at_its_order_and_counts_its_solves)
{
    /* examples/suzuki_plugin.c: Suzuki's 5-stage composition of newmark (order 2 -> 4); the observed order
     * between h = 0.05 and 0.025 on the rotating CVT is 4.02 (tolerance 0.15 as for the built-in orders) */
    char args[1024], out[8192];
    snprintf(args, sizeof args,
             "--plugin %s order --system cvt --param eps=0.1 --preset rotating --method suzuki5 --T 2 "
             "--h 0.1,0.05,0.025",
             NHENS_PLUGIN_PATH);
    cr_assert(eq(int, nhens_output(args, out, sizeof out), 0), "%s", out);
    const char *last = strstr(out, "0.025");
    double h, err, order;
    long steps;
    cr_assert(last && sscanf(last, "%lf %ld %lf %lf", &h, &steps, &err, &order) == 4, "%s", out);
    cr_assert(fabs(order - 4.0) < 0.15, "observed order %g", order);
    snprintf(args, sizeof args, "--plugin %s", NHENS_CLI_PATH);
    cr_assert(eq(int, nhens(args), 2));
    cr_assert(strstr(err_text, "cannot load plugin") || strstr(err_text, "not an nhens plugin"), "%s", err_text);
    cr_assert(eq(int, nhens("--plugin nosuch.so list"), 2));
    cr_assert(strstr(err_text, "must be a path") != NULL, "%s", err_text);
}

#define SYSTEM_PLUGIN "--plugin " NHENS_SYSTEM_PLUGIN_PATH " "

Test(cli, plugin_system_passes_check_runs_at_order_and_keeps_its_invariants)
{
    /* examples/contact_plugin.c: the contact oscillator on R^{2k+1} with coupling 1/2 eps z^2 |x|^2 */
    char out[8192];
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "check --system contact-eps --param eps=2", out, sizeof out), 0),
              "%s%s", out, err_text);
    cr_assert(strstr(out, "all checks passed") && !strstr(out, "FAIL"), "%s", out);
    const int affine_row = strstr(out, "declared affine A: d(A u)/dq constant         0.000e+00") != NULL;
    cr_assert(affine_row, "the example declares A affine and the row checks it: %s", out);
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "check --system contact-eps --param k=3 --points 5", out, sizeof out),
                 0), "n = 7: %s%s", out, err_text);
    /* DLA^{0,1} is order 2 (docs/METHODS.md Sect. 2): observed 2.000 between h = 0.05 and 0.025; tolerance 0.15 as
     * for the built-in order tests */
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "order --system contact-eps --preset orbit --method dla01 --T 2 "
                                                 "--h 0.1,0.05,0.025", out, sizeof out), 0), "%s", err_text);
    const char *last = strstr(out, "0.025");
    double h, err, order;
    long steps;
    cr_assert(last && sscanf(last, "%lf %ld %lf %lf", &h, &steps, &err, &order) == 4, "%s", out);
    cr_assert(fabs(order - 2.0) < 0.15, "observed order %g", order);
    /* Gonzalez' discrete gradient on 50 states of H = 1 over 1000 steps keeps H and A v = 0 to round-off:
     * measured 4.9e-14 and 5.4e-16; the bounds allow 20x (Newton tolerance and accumulation) */
    cr_assert(eq(int, nhens_output(SYSTEM_PLUGIN "run --system contact-eps --preset shell --ensemble 50 --method "
                                                 "gonzalez --h 0.1 --T 100 --out /tmp/nhens-cli-contact", out,
                                   sizeof out), 0), "%s", err_text);
    double dh, dh_rel, drift;
    const char *line = strstr(out, "max |dH| =");
    cr_assert(line && sscanf(line, "max |dH| = %lf, max |dH|/|H0| = %lf, max |A(q)v| = %lf", &dh, &dh_rel, &drift) == 3,
              "%s", out);
    cr_assert(dh < 1e-12 && drift < 1e-14, "dH %g, drift %g", dh, drift);
    cr_assert(strstr(out, "failed trajectories: 0") != NULL, "%s", out);
    /* the plugin's system is refused without the plugin, by name */
    refused("check --system contact-eps", "unknown system 'contact-eps'");
    remove_tree("/tmp/nhens-cli-contact");
}

Test(cli, plugin_of_another_abi_is_refused_with_both_versions)
{
    char args[512];
    snprintf(args, sizeof args, "--plugin %s list", NHENS_WRONG_ABI_PLUGIN_PATH);
    int abi = NH_PLUGIN_ABI_VERSION;
    char expect[128];
    snprintf(expect, sizeof expect, "was built for nhens plugin ABI %d, and this nhens has ABI %d", abi + 1, abi);
    refused(args, expect);
}

/* A plugin system without V's Hessian (which dla's, dd's and newmark's Newton matrices call) is refused
 * at load, naming the system and the callback, before `run --method dla` could call the missing callback. */
Test(cli, plugin_system_without_a_hessian_is_refused_by_name)
{
    char args[512];
    snprintf(args, sizeof args, "--plugin %s run --system plane-without-hessian --method dla --energy 1 --h 0.1 --T 1 "
             "--out /tmp/nhens-no-hessian",
             NHENS_NO_HESSIAN_PLUGIN_PATH);
    refused(args, "system 'plane-without-hessian' is incomplete: it has no potential_hessian;");
}
