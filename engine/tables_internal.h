/* The CSV text of a run's tables (engine/tables.c), for output.c's writers; not installed. */
#ifndef NHENS_TABLES_INTERNAL_H
#define NHENS_TABLES_INTERNAL_H

#include <stdio.h>

#include "nhens/output.h"

/* The header row and every row of the table, values printed with %.17g; 0, or 1 when out of memory. */
int nh_run_table_print(FILE *f, const nh_run_result *res, nh_run_table table);

#endif
