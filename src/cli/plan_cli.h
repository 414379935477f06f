/* plan_cli: what cmd_plan.c (options, probes, search) hands to plan_report.c (the human
 * answer, plan.json, plan.csv).  Internal to the plan command. */
#ifndef KVSIM_CLI_PLAN_CLI_H
#define KVSIM_CLI_PLAN_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kvsim/error.h"
#include "kvsim/plan.h"

typedef enum plan_over {
    PLAN_OVER_LOAD,       /* highest arrival-rate scale factor within the SLOs */
    PLAN_OVER_NUM_BLOCKS, /* smallest pool, in blocks, at a fixed load */
    PLAN_OVER_KV_BUDGET,  /* the same pool search, reported as KV bytes per rank */
} plan_over;

/* One replay of the search. */
typedef struct plan_probe {
    double value;      /* the searched quantity: load, blocks, or budget bytes */
    double load;       /* arrival-rate scale factor against the trace as loaded */
    double time_scale; /* `kvsim run --time-scale` that replays this probe exactly */
    double rate;       /* offered arrival rate, req/s: (n−1)/(last − first arrival); NAN
                          when every request arrives at once */
    uint32_t num_blocks;
    uint64_t kv_budget;     /* KV bytes per rank the pool was sized from (config echo's
                               kv_budget_bytes; N·block_bytes in pool searches) */
    double slo[KV_SLO_MAX]; /* each SLO's measured figure, in the set's order */
    double ttft_p99, tpot_p99, preemption_rate, reject_rate; /* always measured */
    uint64_t preemptions, finished, rejected, unfinished;
    bool meets;
    json_t *summary; /* the replay's summary.json object (owned) */
} plan_probe;

typedef struct plan {
    plan_over over;
    kv_slo_set slos;
    kv_search search;
    plan_probe *probes; /* parallel to search.pts */
    kv_search_result result;
    const char *trace_path;
    size_t n_requests;
    double base_time_scale; /* the --time-scale given (load 1 replays with it) */
    double base_rate;       /* offered rate at load 1, req/s (NAN: all at once) */
    double fixed_load;      /* pool searches: the load they replay at */
    uint64_t block_bytes;   /* pool searches: bytes per block per rank */
    bool whole_trace_max;   /* pool searches: --max is the default, a pool that holds every
                               request at once (so blocks never run short there) */
} plan;

/* "load", "num_blocks", "kv_budget" */
const char *plan_over_name(plan_over o);

/* The human answer and the probe table. */
void plan_print(FILE *f, const plan *p);
/* plan.json's object (new reference). */
json_t *plan_json(const plan *p);
/* Write plan.csv and plan.json into dir (created if missing), each atomically.
 * 0 or -KV_EIO with a diag. */
int plan_write_files(const plan *p, const char *dir, kv_diag *diag);

#endif
