/* plan_cli: the human side of `kvsim plan` (plan_print.c), for cmd_plan.c. */
#ifndef KVSIM_CLI_PLAN_CLI_H
#define KVSIM_CLI_PLAN_CLI_H

#include <stdio.h>

#include "kvsim/planner.h"

/* The human answer and the probe table. */
void cli_plan_print(FILE *f, const kv_plan *p);

#endif
