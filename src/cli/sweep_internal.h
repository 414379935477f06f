/* sweep_internal: the state of `kvsim sweep` shared by its two files — cmd_sweep.c (the
 * options, the output directory, running and collecting) and sweep_configs.c (each
 * configuration's options, argv and validation, and the header). */
#ifndef KVSIM_CLI_SWEEP_INTERNAL_H
#define KVSIM_CLI_SWEEP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/sim.h"
#include "cli/sweep.h"

enum { MAX_CONFIGS = 10000 };

/* One pass-through option: "--name" and its value (NULL for a flag), as given. */
typedef struct pass_opt {
    const char *name;
    const char *value;
} pass_opt;

typedef struct config {
    size_t at[KV_SWEEP_N_AXES]; /* index on each axis (the pool: unused when empty) */
    uint64_t budget;            /* KV_SWEEP_POOL_CONST: the --kv-budget it gets */
    char *name;                 /* directory name */
    char *dir;                  /* OUT/name, OUT as the user spelled it */
    char **argv;                /* the `kvsim run` argv, NULL-terminated, owned */
} config;

typedef struct sweep {
    const char *trace, *out, *emit; /* trace: the one positional argument */
    uint32_t jobs, sample_every;    /* sample_every 0: not given */
    bool quiet, plot, force;
    const char *given_trace; /* the TRACE argument; trace is the copy when it had to be made */
    char *trace_copy;        /* DIR/trace for a trace that cannot be read twice, or NULL */
    kv_setup_options mo;     /* validated values; the axis fields are set per use */
    kv_sim_options so;
    kv_sweep_space space;
    pass_opt *pass;
    size_t n_pass, cap_pass;
    kv_sweep_pool_mode mode;
    uint64_t budget;   /* KV_SWEEP_POOL_CONST: the derived budget; KV_SWEEP_POOL_GPU: what runs will
                          derive */
    kv_setup setup;    /* model, GPU and shard, resolved once (the first setup of several) */
    bool setups;       /* a setup list holds two or more values (kv_sweep_varies_setup) */
    uint64_t *budgets; /* KV_SWEEP_POOL_CONST with setups: each configuration's budget */
    size_t n_requests, max_requests; /* the trace as loaded; several trace lists: the range */
    config *cfg;
    size_t n_cfg;
    cli_run_preload preload; /* the trace as read once, when every configuration reads it
                                so (its trace NULL otherwise), and their chain store */
} sweep;

/* The configurations' shared chain store: at most this many bytes of digests. */
#define SWEEP_CHAIN_BYTES ((size_t)512 << 20)

/* The configurations, validated: their number (at most MAX_CONFIGS), every
 * configuration's setup and engine config (the first that fails is one error naming it),
 * the pool rule, and the trace read (once per value of a trace list).  0 or an exit code
 * after printing. */
int cli_sweep_plan_configs(sweep *s, size_t *n_cfg);
/* The cartesian product, last axis fastest, into s->cfg: names, directories and each
 * `kvsim run` argv (absolute: for --emit-jobs). */
void cli_sweep_build_configs(sweep *s, size_t n, bool absolute);
/* What a sweep is about to do: configurations, trace, setup and the pool rule. */
void cli_sweep_print_header(FILE *f, const sweep *s);
void cli_sweep_configs_release(sweep *s);

#endif
