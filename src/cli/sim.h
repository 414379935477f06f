/* sim: what the replaying commands (run, sweep, plan) share: the simulation option group,
 * engine configuration, the config echo, one complete replay, and the human summary. */
#ifndef KVSIM_CLI_SIM_H
#define KVSIM_CLI_SIM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli/cli.h"
#include "kvsim/engine.h"
#include "kvsim/trace.h"

typedef struct cli_sim_opts {
    kv_trace_options trace;
    uint32_t shared_prefix;
    kv_sched_config sched;
    bool prefix_caching;
    kv_free_order free_order;
    const char *time_model;
} cli_sim_opts;

extern const cli_opt cli_sim_options[];
extern const char cli_sim_opts_help[];

void cli_sim_opts_init(cli_sim_opts *o);
bool cli_sim_opts_owns(int id);
/* 0, or CLI_USAGE after printing. */
int cli_sim_opts_handle(cli_sim_opts *o, int id, const char *arg);

/* Engine configuration from the options and a resolved model setup: 0 or CLI_USAGE. */
int cli_engine_config(const cli_sim_opts *o, const cli_setup *setup, kv_engine_config *c);
/* The "config" object of summary.json. */
json_t *cli_config_json(const cli_sim_opts *o, const cli_setup *setup, const kv_trace *t,
                        const kv_engine_config *c);

/* One replay of a loaded trace: engine config from the options and setup (observers and
 * sample_every from `hooks`, which may be NULL), run, and summary.json's object into
 * *summary.  0, or an exit code after printing the error.  res must be released. */
int cli_replay(const cli_sim_opts *o, const cli_setup *setup, const kv_trace *trace,
               const kv_engine_config *hooks, kv_run_result *res, json_t **summary);

/* The short human summary, printed from summary.json's own numbers. */
void cli_print_summary(FILE *f, const json_t *summary);

#endif
