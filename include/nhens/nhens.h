/* The whole public API of libnhens in one include: every header of include/nhens/ (ctest -R nhens_h_complete
 * checks it). Layers, lowest first (docs/DESIGN.md): base (core, params, options, linalg, pcg) <- solvers (solver)
 * and systems (system) <- methods (method, registry, dstar) and stats (stats, poincare, reference) <- engine
 * (ensemble, output, files, checkpoint, partial, ranks, simple, audit, check, plugin). Link with -lnhens
 * (pkg-config nhens, or CMake nhens::nhens). */
#ifndef NHENS_NHENS_H
#define NHENS_NHENS_H

#include "nhens/audit.h"
#include "nhens/checkpoint.h"
#include "nhens/check.h"
#include "nhens/core.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/job.h"
#include "nhens/lanes.h"
#include "nhens/linalg.h"
#include "nhens/method.h"
#include "nhens/method_type.h"
#include "nhens/observer.h"
#include "nhens/output.h"
#include "nhens/params.h"
#include "nhens/partial.h"
#include "nhens/pcg.h"
#include "nhens/plugin.h"
#include "nhens/poincare.h"
#include "nhens/ranks.h"
#include "nhens/reference.h"
#include "nhens/registry.h"
#include "nhens/simple.h"
#include "nhens/solver.h"
#include "nhens/stats.h"
#include "nhens/system.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
