/* `nhens check --system S [--param k=v ...] [--plugin P]`: the derivative, kernel, D*-form and
 * index-1-field checks of a system (engine/check.c) as a pass/fail table. */
#include "cli.h"

#include "nhens/check.h"

#include <stddef.h>
#include <string.h>

typedef struct check_options {
    const char *system;
    const char *params[NH_CLI_MAX_PARAMS];
    int n_params, quiet;
    long points;
    uint64_t seed, seen;
} check_options;

static const nh_option CHECK_OPTIONS[] = {
    {"system", NH_OPTION_STRING, offsetof(check_options, system), 0, 0, "S", "system to check", 0, 0},
    {"param", NH_OPTION_LIST, offsetof(check_options, params), 0, 0, "k=v", "system parameter",
     offsetof(check_options, n_params), NH_CLI_MAX_PARAMS},
    {"points", NH_OPTION_LONG, offsetof(check_options, points), 1, 10000, "N", "random states (default 20)", 0, 0},
    {"seed", NH_OPTION_U64, offsetof(check_options, seed), 0, 0, "S", "seed of the states (default 1)", 0, 0},
    {"quiet", NH_OPTION_FLAG, offsetof(check_options, quiet), 0, 0, NULL,
     "no progress on stderr (check prints none: its table is stdout)", 0, 0},
};

const nh_option_table nh_cli_check_table = {
    "check", "--system S [--param k=v ...] [--points N] [--seed S] [--quiet]",
    "check a system's derivatives, adapted basis, D* form and index-1 field (exit 0 when all pass)", CHECK_OPTIONS,
    sizeof CHECK_OPTIONS / sizeof CHECK_OPTIONS[0], 0};

/* What a failed declaration or preset row means, naming the preset. */
static void explain_failures(const nh_system *sys, const nh_check_report *rep)
{
    for (int i = 0; i < rep->n_rows; ++i) {
        const nh_check_row *r = &rep->rows[i];
        if (r->passed || strncmp(r->name, "declared CVT type", 17))
            continue;
        printf("  %s declares NH_SYS_CVT_TYPE, but A(q) reads a coordinate that its constraint force M^-1 A^T lam "
               "moves: remove the flag (DLA^{0,1} and SPARK would solve a nonlinear step as a linear one)\n",
               sys->type->name);
    }
    for (int i = 0; i < sys->type->n_presets; ++i) {
        const nh_preset *p = &sys->type->presets[i];
        nh_system at;
        nh_error err;
        if (nh_system_init(&at, sys->type, p, NULL, 0, &err) || nh_preset_check(&at, p, 0, &err) ||
            (nh_preset_is_shell(p) && nh_energy_shell_check(&at, p->shell_energy, &err)))
            printf("  %s\n", err.msg);
    }
}

int nh_cli_check(const nh_cli *cli, int argc, char **argv)
{
    check_options o = {.points = 20, .seed = 1};
    int status;
    if (nh_cli_parse(&nh_cli_check_table, argc, argv, &o, &o.seen, NULL, NULL, &status))
        return status;
    nh_system sys;
    const nh_preset *preset;
    nh_check_report rep;
    nh_error err;
    if (!o.system) {
        fprintf(stderr, "nhens check: --system S is required (nhens help check lists the options)\n");
        return NH_EXIT_USAGE;
    }
    if (nh_cli_build_system(cli, o.system, NULL, o.params, o.n_params, &sys, &preset, &err)) {
        fprintf(stderr, "nhens check: %s\n", err.msg);
        return NH_EXIT_USAGE;
    }
    int rc = nh_system_check(&sys, (int)o.points, o.seed, &rep, &err);
    printf("nhens check: %s, n = %d, m = %d, %d random states\n", sys.type->name, sys.n, sys.m, rep.points);
    printf("%-42s %12s %10s  %s\n", "check", "worst", "tolerance", "result");
    for (int i = 0; i < rep.n_rows; ++i) {
        const nh_check_row *r = &rep.rows[i];
        if (r->applies)
            printf("%-42s %12.3e %10.0e  %s\n", r->name, r->worst, r->tolerance, r->passed ? "pass" : "FAIL");
        else
            printf("%-42s %12s %10s  %s\n", r->name, "-", "-", "not supplied");
    }
    if (rc) {
        fprintf(stderr, "nhens check: %s\n", err.msg);
        return NH_EXIT_ERROR;
    }
    explain_failures(&sys, &rep);
    printf("%s\n", rep.failed ? "some checks FAILED" : "all checks passed");
    return rep.failed ? NH_EXIT_ERROR : NH_EXIT_OK;
}
