/* sweep (CLI): what `kvsim sweep` and `kvsim merge` share on top of the core's sweep.h —
 * parsing a list option into the space, and the human table. */
#ifndef KVSIM_CLI_SWEEP_H
#define KVSIM_CLI_SWEEP_H

#include <stdio.h>

#include "cli/cli.h"
#include "cli/sim.h"
#include "kvsim/sweep.h"

/* --opt LIST: every item validated by run's handler on mo/so (which keep the last item),
 * then the values set on the space; a repeated list replaces the earlier one.  0, or
 * CLI_USAGE after printing (an invalid or empty item, a repeated value). */
int cli_sweep_list(kv_sweep_space *sp, const char *opt, const char *list, kv_setup_options *mo,
                   kv_sim_options *so);

/* Apply one value of list l to the options as `kvsim run --OPT value` would (a flag
 * pair's "on"/"off" as its two flags): 0 or CLI_USAGE after printing. */
int cli_sweep_apply(const kv_sweep_list *l, const kv_sweep_value *v, kv_setup_options *mo,
                    kv_sim_options *so);

/* The options of the configuration at[]: mo and so (the options as given) with every
 * axis's value applied.  0 or CLI_USAGE after printing (never for values the lists
 * accepted). */
int cli_sweep_config_options(const kv_sweep_space *sp, const size_t at[KV_SWEEP_N_AXES],
                             kv_setup_options *mo, kv_sim_options *so);

/* The human table: one line per row in the given order, key columns only (failed rows say
 * so). */
void cli_sweep_print_table(FILE *f, const kv_sweep_row *rows, size_t n);

#endif
