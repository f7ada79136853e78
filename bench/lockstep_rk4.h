/* RK4 on the index-1 ODE in lockstep lanes, shared by the lockstep loops of the quartic (lockstep_loops.c) and
 * the CVT (lockstep_cvt_loops.c): the includer defines N, MAX_L, AT, LANES, ALWAYS_INLINE, its system's
 * index1_rhs_lanes(q, v, dv, L) and LOCKSTEP_AFTER_STEP(q, L) (the CVT's recentring; nothing for the quartic)
 * first. The stages' sums are bare_loops.c's, in its order. */
ALWAYS_INLINE void rk4_lanes(double *restrict q, double *restrict v, double h, long steps, int L)
{
    for (long s = 0; s < steps; ++s) {
        double kq[4][N * MAX_L], kv[4][N * MAX_L], qs[N * MAX_L], vs[N * MAX_L];
        const double c[4] = {0.0, 0.5 * h, 0.5 * h, h};
        for (int stage = 0; stage < 4; ++stage) {
            for (int i = 0; i < N; ++i)
                LANES {
                    AT(qs, i) = stage ? AT(q, i) + c[stage] * AT(kq[stage - 1], i) : AT(q, i);
                    AT(vs, i) = stage ? AT(v, i) + c[stage] * AT(kv[stage - 1], i) : AT(v, i);
                    AT(kq[stage], i) = AT(vs, i);
                }
            index1_rhs_lanes(qs, vs, kv[stage], L);
        }
        for (int i = 0; i < N; ++i)
            LANES {
                AT(q, i) += h / 6.0 * (AT(kq[0], i) + 2.0 * AT(kq[1], i) + 2.0 * AT(kq[2], i) + AT(kq[3], i));
                AT(v, i) += h / 6.0 * (AT(kv[0], i) + 2.0 * AT(kv[1], i) + 2.0 * AT(kv[2], i) + AT(kv[3], i));
            }
        LOCKSTEP_AFTER_STEP(q, L);
    }
}
