/* Shared by the engine's JSON writers (summary.json and checkpoints); not installed. */
#ifndef NHENS_SUMMARY_INTERNAL_H
#define NHENS_SUMMARY_INTERNAL_H

#include <cjson/cJSON.h>

#include "nhens/ensemble.h"

/* The run's configuration (system, method, solver, h, T, every, ensemble, seed, threads, initial states)
 * as members of root, exactly as summary.json records it. */
void nh_add_configuration(cJSON *root, const nh_run_config *cfg);

#endif
