/* The flat FFI entry point (see include/nhens/simple.h): everything a run needs is built and freed here. */
#include "nhens/simple.h"
#include "nhens/files.h"
#include "nhens/output.h"
#include "nhens/registry.h"
#include "run_result.h"

#include <stdio.h>
#include <string.h>

enum { MAX_SYSTEM_PARAMS = 16, PARAM_TEXT = 1024 };

static int build_system(const nh_registry *reg, const char *name, const char *params, const char *preset_name,
                        nh_system *sys, const nh_preset **preset, nh_error *err)
{
    const nh_system_type *type = nh_registry_find_system_checked(reg, name ? name : "", err);
    if (!type)
        return NH_ERR_INPUT;
    *preset = NULL;
    if (preset_name && preset_name[0] && !(*preset = nh_system_find_preset(type, preset_name)))
        return nh_fail(err, NH_ERR_INPUT, "system %s has no preset '%s' (nhens list --system %s)", name, preset_name,
                       name);
    char buf[PARAM_TEXT];
    const char *list[MAX_SYSTEM_PARAMS];
    int count = 0;
    if (snprintf(buf, sizeof buf, "%s", params ? params : "") >= (int)sizeof buf)
        return nh_fail(err, NH_ERR_INPUT, "system parameters '%.60s...' are longer than %d characters", buf, PARAM_TEXT);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (count == MAX_SYSTEM_PARAMS)
            return nh_fail(err, NH_ERR_INPUT, "more than %d system parameters", MAX_SYSTEM_PARAMS);
        list[count++] = tok;
    }
    return nh_system_init(sys, type, *preset, list, count, err);
}

static int run_and_write(const nh_run_config *cfg, const char *out_dir, nh_error *err)
{
    nh_run_result res;
    nh_folder_lock lock;
    int rc = nh_output_folder_open(out_dir, &lock, err);
    if (!rc && !(rc = nh_run_ensemble(cfg, &res, err))) {
        rc = nh_write_run(out_dir, cfg, &res, "libnhens nh_simple_run", 0.0, err);
        nh_run_result_clear(&res);
    }
    nh_folder_lock_release(&lock);
    return rc;
}

int nh_simple_run(const char *system, const char *system_params, const char *method, const char *solver,
                  double h, double T, long every, long ensemble, uint64_t seed, int threads, double energy,
                  const char *preset, long paths, const char *out_dir, char *message, size_t message_len)
{
    nh_error err = {{0}};
    nh_registry *reg = nh_registry_create(&err);
    nh_system sys;
    nh_run_config cfg;
    nh_run_config_init(&cfg); /* run's defaults: the fit window */
    cfg.system = &sys, cfg.h = h, cfg.T = T, cfg.every = every, cfg.ensemble = ensemble, cfg.seed = seed;
    cfg.threads = threads, cfg.energy = energy, cfg.paths = paths;
    const nh_preset *p = NULL;
    int rc = reg ? build_system(reg, system, system_params, preset, &sys, &p, &err) : NH_ERR_NOMEM;
    if (!rc && (rc = nh_method_spec_parse(reg, &cfg.method, method ? method : "", &err)) == NH_OK &&
        nh_solver_kind_parse(solver ? solver : "kinsol", &cfg.solver))
        rc = nh_fail(&err, NH_ERR_INPUT, "unknown solver '%s'; allowed: kinsol, newton", solver);
    if (!rc) {
        nh_run_config_use_preset(&cfg, p);
        if (cfg.ensemble == 0)
            cfg.ensemble = cfg.shell_preset ? cfg.shell_preset->shell_ensemble : 1;
        if (cfg.every == 0)
            cfg.every = h > 0 ? nh_run_default_every(&cfg) : 1;
        if (!out_dir || !out_dir[0])
            rc = nh_fail(&err, NH_ERR_INPUT, "an output folder is needed");
        else if (!(rc = nh_run_validate(&cfg, &err)))
            rc = run_and_write(&cfg, out_dir, &err);
    }
    nh_registry_free(reg);
    if (message && message_len)
        snprintf(message, message_len, "%s", rc ? err.msg : "");
    return rc;
}
