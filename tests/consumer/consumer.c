/* An out-of-tree program built against an installed nhens (tests/install_consumer.sh): the smallest
 * ensemble study through the public API. It integrates 16 states of the CVT's energy shell H = 2 with
 * Gonzalez' discrete gradient and exits 0 only if every trajectory finished and the energy error stayed at
 * round-off (max |dH| < 1e-12, measured ~1e-14; its variance at T below 1e-24, the square), read through the
 * result's getters (scalars and a column by name), after checking
 * that the library it runs with is the one its headers describe (nh_version, nh_abi_version). */
#include <nhens/nhens.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int study(const nh_registry *reg, nh_error *err)
{
    nh_system sys;
    const char *overrides[] = {"eps=0.1"};
    int rc = nh_system_init(&sys, nh_registry_find_system_checked(reg, "cvt", err), NULL, overrides, 1, err);
    nh_run_config cfg;
    nh_run_config_init(&cfg); /* nhens run's defaults (KINSOL, the fit window from 0.1 T, ...), then ours */
    cfg.system = &sys, cfg.h = 0.1, cfg.T = 10, cfg.every = 10, cfg.ensemble = 16, cfg.seed = 42, cfg.threads = 2;
    cfg.energy = 2.0, cfg.fit_window_start = 0.5;
    if (rc || (rc = nh_method_spec_parse(reg, &cfg.method, "gonzalez", err)))
        return rc;
    nh_run_result *res = nh_run_result_create();
    if (!res)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory");
    double worst = NAN, failed = NAN, solves = NAN, steps = NAN, final_var = NAN;
    const long rows = (rc = nh_run_ensemble(&cfg, res, err)) ? 0 : nh_run_table_rows(res, NH_RUN_TABLE_TIMESERIES);
    double *dh_var = rows > 0 ? malloc(sizeof *dh_var * (size_t)rows) : NULL;
    if (!rc && (rc = !dh_var ? nh_fail(err, NH_ERR_NOMEM, "out of memory") : NH_OK) == NH_OK &&
        !(rc = nh_run_scalar(res, "extremes.dH_absmax", &worst, err)) &&
        !(rc = nh_run_scalar(res, "failures.count", &failed, err)) &&
        !(rc = nh_run_scalar(res, "performance.nonlinear_solves", &solves, err)) &&
        !(rc = nh_run_scalar(res, "steps_per_trajectory", &steps, err)) &&
        !(rc = nh_run_table_values(res, NH_RUN_TABLE_TIMESERIES, "dH_var", dh_var, err))) {
        final_var = dh_var[rows - 1];
        printf("consumer: %ld trajectories x %.0f steps, %.0f failed, max |dH| = %.3e, final Var dH = %.3e, "
               "%.0f nonlinear solves\n", cfg.ensemble, steps, failed, worst, final_var, solves);
        rc = failed == 0 && worst < 1e-12 && final_var < 1e-24 && solves > 0 ? NH_OK : NH_ERR_SOLVER;
    }
    free(dh_var);
    nh_run_result_free(res);
    return rc;
}

int main(void)
{
    if (strcmp(nh_version(), NH_VERSION) || nh_abi_version() != NH_ABI_VERSION) {
        fprintf(stderr, "consumer: headers of nhens %s (ABI %d), library %s (ABI %d)\n", NH_VERSION, NH_ABI_VERSION,
                nh_version(), nh_abi_version());
        return 1;
    }
    nh_error err = {0};
    nh_registry *reg = nh_registry_create(&err);
    int rc = reg ? study(reg, &err) : NH_ERR_INPUT;
    if (rc)
        fprintf(stderr, "consumer: %s\n", err.msg[0] ? err.msg : "results out of bounds");
    nh_registry_free(reg);
    return rc ? 1 : 0;
}
