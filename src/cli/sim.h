/* sim: what the replaying commands (run, sweep, plan) share: the simulation option group,
 * engine configuration, the config echo, one complete replay, and the human summary. */
#ifndef KVSIM_CLI_SIM_H
#define KVSIM_CLI_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/cli.h"
#include "kvsim/sim.h"
#include "kvsim/summary.h"
#include "kvsim/trace.h"

/* The simulation option group: its target is a kv_sim_options. */
extern const cli_group cli_sim_group;

/* kv_sim_engine_config with its error printed: 0 or CLI_USAGE. */
int cli_engine_config(const kv_sim_options *o, const kv_setup *setup, kv_engine_config *c);

/* One replay of a loaded trace (kv_sim_replay) and its summary, config echo included, into
 * *summary.  0, or an exit code after printing the error: CLI_USAGE for a bad time model,
 * CLI_RUNTIME for an engine that refused the config or a run an engine error stopped —
 * except the livelock guard, which returns 0 with res->stop set, so the caller can still
 * write the outputs that say so before failing.  res and summary must be released. */
int cli_replay(const kv_sim_options *o, const kv_setup *setup, const kv_trace *trace,
               const kv_sim_hooks *hooks, kv_run_result *res, kv_summary *summary);

/* The progress line of a replay (without "\r"): finished of total with the percentage and
 * the simulated time first — an overloaded replay spends most of its time after the last
 * arrival, when only these move — then how many arrived ("all arrived" once all have). */
void cli_progress_text(char *buf, size_t n, const kv_progress *p);

/* A `kvsim run` in a process kvsim sweep forked after it read the trace (cmd_sweep.c):
 * the trace it would read — taken, instead of reading the file again, by the run whose
 * TRACE argument and trace options are these — and the chain store (NULL: none) its
 * hashes then go through.  What the run computes is the same either way. */
typedef struct cli_run_preload {
    const char *path; /* TRACE as the run's argv spells it */
    kv_trace_options opt;
    kv_trace *trace;        /* owned until a run takes it (then NULL) */
    kv_chain_store *chains; /* borrowed */
} cli_run_preload;
/* For the runs of this process from now on (NULL: none); set before sweep forks. */
void cli_run_preload_set(cli_run_preload *p);

/* The short human summary. */
void cli_print_summary(FILE *f, const kv_summary *s);

#endif
