/* The choice of the bench's lockstep loops (lockstep_loops.h) by system and instruction set: CMakeLists.txt
 * compiles lockstep_loops.c (the quartic) and lockstep_cvt_loops.c (the CVT) once per instruction set of
 * nhens' lane kernels, as lockstep_<system>_<isa>. */
#include "lockstep_loops.h"

#include <string.h>

extern const lockstep_set lockstep_quartic_sse2, lockstep_quartic_avx2, lockstep_quartic_avx512;
extern const lockstep_set lockstep_cvt_sse2, lockstep_cvt_avx2, lockstep_cvt_avx512;

int lockstep_lanes(int width)
{
    return 8 << width;
}

const lockstep_loop *lockstep_loops(const char *system, nh_lane_isa isa, int *count)
{
    static const lockstep_set *const quartic[] = {&lockstep_quartic_sse2, &lockstep_quartic_avx2,
                                                  &lockstep_quartic_avx512};
    static const lockstep_set *const cvt[] = {&lockstep_cvt_sse2, &lockstep_cvt_avx2, &lockstep_cvt_avx512};
    if (isa == NH_LANE_ISA_AUTO)
        isa = nh_lane_isa_best();
    const int quartic_system = strcmp(system, "quartic") == 0;
    if ((!quartic_system && strcmp(system, "cvt") != 0) || !nh_lane_isa_supported(isa))
        return NULL;
    const lockstep_set *set = (quartic_system ? quartic : cvt)[isa - NH_LANE_ISA_SSE2];
    *count = set->count;
    return set->loops;
}
