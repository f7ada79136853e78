/* Method audit (see include/nhens/audit.h). */
#include "nhens/audit.h"

#include "nhens/linalg.h"
#include "nhens/reference.h"

#include <math.h>
#include <string.h>

/* Run `steps` steps from (q0, v0); q, v receive the end state. Optional extremes over the run. */
static int run_steps(nh_stepper *st, const double *q0, const double *v0, double h, long steps, double *q, double *v,
                     double *constraint_max, double *energy_rel_max, double *failed_at)
{
    const nh_system *s = nh_stepper_system(st);
    double carried[NH_MAX_UNKNOWNS], h0 = nh_energy(s, q0, v0), scale = fabs(h0) > 0 ? fabs(h0) : 1.0;
    memcpy(q, q0, (size_t)s->n * sizeof *q);
    memcpy(v, v0, (size_t)s->n * sizeof *v);
    int rc = nh_stepper_start(st, q, v, carried);
    for (long k = 1; k <= steps && rc == NH_OK; ++k) {
        rc = nh_stepper_step(st, h, q, v, carried);
        if (rc && failed_at)
            *failed_at = k * h;
        if (!rc && constraint_max) {
            *constraint_max = fmax(*constraint_max, nh_constraint_residual(s, q, v));
            *energy_rel_max = fmax(*energy_rel_max, fabs(nh_energy(s, q, v) - h0) / scale);
        }
    }
    return rc;
}

int nh_reversibility_defect(const nh_method_spec *spec, const nh_system *s, nh_solver_kind solver, const double *q0,
                            const double *v0, double h, double *defect, nh_error *err)
{
    nh_stepper *st = nh_stepper_create(spec, s, solver, err);
    if (!st)
        return NH_ERR_INPUT;
    double q[NH_MAX_DIM], v[NH_MAX_DIM], carried[NH_MAX_UNKNOWNS];
    memcpy(q, q0, (size_t)s->n * sizeof *q);
    memcpy(v, v0, (size_t)s->n * sizeof *v);
    int rc = nh_stepper_start(st, q, v, carried);
    if (!rc)
        rc = nh_stepper_step(st, h, q, v, carried);
    for (int i = 0; i < s->n; ++i)
        v[i] = -v[i];
    if (!rc)
        rc = nh_stepper_step(st, h, q, v, carried);
    nh_stepper_free(st);
    double d = 0;
    for (int i = 0; i < s->n; ++i)
        d = fmax(d, fmax(fabs(q[i] - q0[i]), fabs(v[i] + v0[i])));
    *defect = rc ? NAN : d;
    return rc;
}

static void audit_orders(const nh_audit_config *cfg, nh_stepper *st, const double *qr, const double *vr,
                         nh_audit_row *row)
{
    const int n = cfg->system->n;
    double q[NH_MAX_DIM], v[NH_MAX_DIM];
    for (int k = 0; k < 3; ++k) {
        double h = cfg->h / (1 << k);
        int rc = run_steps(st, cfg->q0, cfg->v0, h, lround(cfg->order_T / h), q, v, NULL, NULL, NULL);
        row->error[k] = rc ? NAN : fmax(fabs(q[0] - qr[0]), fabs(v[0] - vr[0]));
        for (int i = 1; i < n && !rc; ++i)
            row->error[k] = fmax(row->error[k], fmax(fabs(q[i] - qr[i]), fabs(v[i] - vr[i])));
    }
    row->observed_order = log2(row->error[1] / row->error[2]);
}

int nh_audit_method(const nh_audit_config *cfg, const nh_method_spec *spec, nh_audit_row *row, nh_error *err)
{
    const nh_system *s = cfg->system;
    double qr[NH_MAX_DIM], vr[NH_MAX_DIM], q[NH_MAX_DIM], v[NH_MAX_DIM];
    memset(row, 0, sizeof *row);
    row->formal_order = nh_method_spec_order(spec);
    int rc = nh_reference_solve(s, cfg->q0, cfg->v0, cfg->order_T, 1e-13, 1e-13, qr, vr, err);
    if (rc)
        return rc;
    nh_stepper *st = nh_stepper_create(spec, s, cfg->solver, err);
    if (!st)
        return NH_ERR_INPUT;
    audit_orders(cfg, st, qr, vr, row);
    row->status = run_steps(st, cfg->q0, cfg->v0, cfg->h, lround(cfg->long_T / cfg->h), q, v, &row->constraint_max,
                            &row->energy_rel_max, &row->failed_at);
    nh_stepper_free(st);
    nh_reversibility_defect(spec, s, cfg->solver, cfg->q0, cfg->v0, cfg->h, &row->reversibility, err);
    return NH_OK;
}
