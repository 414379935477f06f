/* planner: the SLO capacity search run against replays (include/kvsim/planner.h).
 *
 * kv_plan_init resolves the setup once from the options; kv_plan_set_trace derives the
 * bounds from the trace; kv_plan_run asks the search (plan.c) for a value, replays it
 * (probe), measures the SLOs on the replay's typed summary and records the verdict, until
 * the search is over.  Nothing here prints.
 */
#include "kvsim/planner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"

/* 2^63 as a double: the first value llround cannot represent in int64 (as trace.c). */
#define NS_LIMIT 9223372036854775808.0

const char *kv_plan_over_name(kv_plan_over o)
{
    return o == KV_PLAN_LOAD         ? "load"
           : o == KV_PLAN_NUM_BLOCKS ? "num_blocks"
           : o == KV_PLAN_REPLICAS   ? "replicas"
                                     : "kv_budget";
}

/* Whether o searches the pool (num_blocks or kv_budget). */
static bool pool_search(kv_plan_over o)
{
    return o == KV_PLAN_NUM_BLOCKS || o == KV_PLAN_KV_BUDGET;
}

int kv_plan_over_parse(const char *arg, kv_plan_over *out)
{
    if (strcmp(arg, "load") == 0)
        *out = KV_PLAN_LOAD;
    else if (strcmp(arg, "num_blocks") == 0 || strcmp(arg, "num-blocks") == 0)
        *out = KV_PLAN_NUM_BLOCKS;
    else if (strcmp(arg, "kv_budget") == 0 || strcmp(arg, "kv-budget") == 0)
        *out = KV_PLAN_KV_BUDGET;
    else if (strcmp(arg, "replicas") == 0)
        *out = KV_PLAN_REPLICAS;
    else
        return -KV_EINVAL;
    return 0;
}

static double time_scale_for(const kv_plan *p, double load)
{
    return kv_round_sig(p->base_time_scale / load, 12);
}

/* ---- setup -------------------------------------------------------------------------- */

int kv_plan_init(kv_plan *p, const kv_plan_config *cfg, const kv_setup_options *mo,
                 const kv_sim_options *so, kv_diag *diag)
{
    memset(p, 0, sizeof *p);
    p->cfg__ = *cfg;
    p->over = cfg->over;
    p->slos = cfg->slos;
    p->fixed_load = cfg->over == KV_PLAN_LOAD ? 1.0 : cfg->fixed_load;
    p->target_rate = cfg->target_rate;
    if (cfg->target_rate > 0 && cfg->over == KV_PLAN_LOAD)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{target_rate} fixes the load: it needs {over} replicas, num_blocks or "
                           "kv_budget");
    p->base_time_scale = so->trace.time_scale;
    p->setup_opts__ = *mo;
    p->sim_opts__ = *so;
    if (pool_search(cfg->over) && (mo->num_blocks || mo->kv_budget))
        return kv_diag_set(diag, -KV_EINVAL, "{over} %s searches the pool size: drop %s",
                           kv_plan_over_name(cfg->over),
                           mo->num_blocks ? "{num_blocks}" : "{kv_budget}");
    if (cfg->over == KV_PLAN_REPLICAS && so->replicas > 1)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{over} replicas searches the number of replicas: drop {replicas}");
    /* The setup: the user's pool for a load or replica search; for pool searches a 2-block
     * pool of the same geometry, for the block size and bytes per block. */
    kv_setup_options base = *mo;
    if (pool_search(cfg->over))
        base.num_blocks = 2;
    int rc = kv_setup_resolve(&base, &p->setup__, diag);
    if (rc != 0)
        return rc;
    p->block_bytes = p->setup__.cap.block_bytes;
    p->gpus_per_replica = p->setup__.shard.tp * p->setup__.shard.pp;
    kv_engine_config check; /* the time model, before any file is read */
    return kv_sim_engine_config(so, &p->setup__, &check, diag);
}

/* Σ over requests of the blocks each holds at full length (DESIGN §6.4). */
static uint64_t trace_demand_blocks(const kv_trace *t, uint32_t block_size)
{
    uint64_t d = 0;
    for (size_t i = 0; i < t->n; i++)
        d += ((uint64_t)t->reqs[i].prompt_len + t->reqs[i].output_len - 1 + block_size - 1) /
             block_size;
    return d;
}

static int by_arrival(const void *pa, const void *pb)
{
    const kv_request_spec *a = pa, *b = pb;
    if (a->arrival_ns != b->arrival_ns)
        return a->arrival_ns < b->arrival_ns ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* Arrivals × ts as the trace reader's --time-scale does it (bounds checked that the last
 * arrival fits in 64-bit nanoseconds). */
static void scale_to(kv_plan *p, double ts)
{
    if (p->view_ts__ == ts)
        return;
    size_t n = p->trace__->n;
    kv_request_spec *r = p->reqs__;
    memcpy(r, p->trace__->reqs, n * sizeof *r);
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        if (ts != 1.0)
            r[i].arrival_ns = llround((double)r[i].arrival_ns * ts);
        if (i > 0 && by_arrival(&r[i - 1], &r[i]) > 0)
            sorted = false;
    }
    if (!sorted)
        qsort(r, n, sizeof *r, by_arrival);
    p->view_ts__ = ts;
}

static double arrival_rate(const kv_request_spec *r, size_t n)
{
    if (n < 2 || r[n - 1].arrival_ns <= r[0].arrival_ns)
        return NAN;
    return (double)(n - 1) / ((double)(r[n - 1].arrival_ns - r[0].arrival_ns) / 1e9);
}

/* The search's bounds and start from the config and the trace. */
static int search_config(kv_plan *p, const kv_trace *trace, kv_search_config *sc, kv_diag *diag)
{
    const kv_plan_config *cfg = &p->cfg__;
    *sc = (kv_search_config){.factor = 2,
                             .tolerance = cfg->tolerance,
                             .confirm = cfg->confirm,
                             .max_probes = cfg->max_probes};
    if (p->over == KV_PLAN_LOAD) {
        sc->harder_up = true;
        sc->min = KV_PLAN_LOAD_MIN_DEFAULT;
        sc->max = KV_PLAN_LOAD_MAX_DEFAULT;
        sc->start = 1;
    } else if (p->over == KV_PLAN_REPLICAS) {
        /* From one replica up, doubling, then bisecting to adjacent counts: the answer's
         * R − 1 is always probed, so no tolerance and no confirmation step. */
        sc->integer = true;
        sc->min = 1;
        sc->max = KV_PLAN_MAX_REPLICAS_DEFAULT;
        sc->tolerance = 0;
        sc->confirm = 0;
    } else {
        sc->integer = true;
        sc->min = 2;
        double w = p->sim_opts__.sched.watermark;
        double need = ceil((double)trace_demand_blocks(trace, p->setup__.block_size) / (1 - w)) + 2;
        sc->max = need < KV_PLAN_MAX_BLOCKS_DEFAULT ? need : KV_PLAN_MAX_BLOCKS_DEFAULT;
        p->whole_trace_max = !cfg->has_max && need <= KV_PLAN_MAX_BLOCKS_DEFAULT;
    }
    if (cfg->has_min)
        sc->min = cfg->min;
    if (cfg->has_max)
        sc->max = cfg->max;
    /* Budgets are N·block_bytes in 64 bits. */
    double max_n = floor((double)UINT64_MAX / (double)(p->block_bytes ? p->block_bytes : 1));
    if (p->over == KV_PLAN_KV_BUDGET && sc->max > max_n)
        sc->max = max_n;
    if (!(sc->min < sc->max))
        return kv_diag_set(diag, -KV_EINVAL, "{min} (%g) must be below {max} (%g)%s", sc->min,
                           sc->max,
                           !pool_search(p->over) || cfg->has_max
                               ? ""
                               : ": the default {max} is the pool that holds the whole trace");
    if (p->over == KV_PLAN_REPLICAS && sc->max > KV_SIM_MAX_REPLICAS)
        return kv_diag_set(diag, -KV_EINVAL, "{max} (%g) must be at most %u replicas", sc->max,
                           KV_SIM_MAX_REPLICAS);
    if (pool_search(p->over))
        sc->start = sc->max;
    else if (p->over == KV_PLAN_REPLICAS)
        sc->start = sc->min;
    /* The most stretched probe must still fit 64-bit nanoseconds. */
    double slowest = p->over == KV_PLAN_LOAD ? sc->min : p->fixed_load;
    double last = (double)trace->reqs[trace->n - 1].arrival_ns * time_scale_for(p, slowest);
    if (!(last < NS_LIMIT))
        return kv_diag_set(diag, -KV_EINVAL,
                           "%s %g stretches the trace beyond 64-bit nanoseconds (its last "
                           "arrival would be at %.3g s); raise it",
                           p->over == KV_PLAN_LOAD ? "{min}" : "{load}", slowest, last / 1e9);
    return 0;
}

/* The fixed load that offers the target rate, from the trace's rate at load 1. */
static int target_load(kv_plan *p, kv_diag *diag)
{
    if (!(p->target_rate > 0))
        return 0;
    if (isnan(p->base_rate))
        return kv_diag_set(diag, -KV_EINVAL,
                           "{target_rate}: every request of the trace arrives at once, so it has "
                           "no arrival rate to scale to %g requests/s",
                           p->target_rate);
    p->fixed_load = kv_round_sig(p->target_rate / p->base_rate, 12);
    if (!(p->fixed_load >= 1e-6 && p->fixed_load <= 1e6))
        return kv_diag_set(diag, -KV_EINVAL,
                           "{target_rate} %g requests/s is %.3g times the trace's %.4g: outside "
                           "the loads 1e-06 to 1e+06 a plan replays",
                           p->target_rate, p->fixed_load, p->base_rate);
    return 0;
}

int kv_plan_set_trace(kv_plan *p, const kv_trace *trace, const char *trace_path, kv_diag *diag)
{
    double last = trace->n ? (double)trace->reqs[trace->n - 1].arrival_ns : 0;
    if (!(last * time_scale_for(p, 1.0) < NS_LIMIT)) /* before load 1 is scaled */
        return kv_diag_set(diag, -KV_EINVAL,
                           "{time_scale} %g stretches the trace beyond 64-bit nanoseconds",
                           p->base_time_scale);
    p->trace_path = trace_path;
    p->n_requests = trace->n;
    p->trace__ = trace;
    p->reqs__ = kv_xmalloc((trace->n ? trace->n : 1) * sizeof *p->reqs__);
    p->view__ = *trace;
    p->view__.reqs = p->reqs__;
    scale_to(p, time_scale_for(p, 1.0));
    p->base_rate = arrival_rate(p->reqs__, trace->n);
    kv_search_config sc;
    int rc = target_load(p, diag);
    if (rc == 0)
        rc = search_config(p, trace, &sc, diag);
    if (rc != 0)
        return rc;
    /* Every probe replays the same requests at the same block size: their chain digests
     * are hashed by the first probe and copied by the others. */
    p->chains__ = kv_chain_store_create(KV_PLAN_CHAIN_BYTES);
    p->sim_opts__.chains = p->chains__;
    kv_search_init(&p->search, &sc);
    return 0;
}

/* ---- probes ------------------------------------------------------------------------- */

/* The figures plan.csv always carries, whatever the SLOs. */
static const kv_slo fixed_figures[4] = {{"ttft_p99", KV_SLO_SECONDS, 0, false},
                                        {"tpot_p99", KV_SLO_SECONDS, 0, false},
                                        {"preemption_rate", KV_SLO_FRACTION, 0, false},
                                        {"reject_rate", KV_SLO_FRACTION, 0, false}};

static void measure(const kv_plan *p, kv_plan_probe *pr)
{
    const kv_summary *s = &pr->summary;
    pr->finished = s->requests.finished;
    pr->rejected = s->requests.rejected;
    pr->unfinished = s->requests.unfinished;
    pr->preemptions = s->preemptions;
    pr->ttft_p99 = kv_slo_measure(&fixed_figures[0], s);
    pr->tpot_p99 = kv_slo_measure(&fixed_figures[1], s);
    pr->preemption_rate = kv_slo_measure(&fixed_figures[2], s);
    pr->reject_rate = kv_slo_measure(&fixed_figures[3], s);
    pr->output_tok_per_s = s->throughput.output_tok_per_s;
    pr->output_tok_per_s_per_gpu = s->throughput.output_tok_per_s_per_gpu;
    double c = s->throughput.cost_per_million_output_tokens;
    pr->cost_per_million = c > 0 ? c : NAN;
    pr->meets = true;
    for (size_t i = 0; i < p->slos.n; i++) {
        pr->slo[i] = kv_slo_measure(&p->slos.slo[i], s);
        pr->meets &= kv_slo_met(&p->slos.slo[i], pr->slo[i]);
    }
}

/* The setup a probe at x replays on: the plan's for a load search, else its own pool. */
static int probe_setup(kv_plan *p, double x, kv_plan_probe *pr, kv_setup *own, kv_diag *diag)
{
    kv_setup_options mo = p->setup_opts__;
    mo.num_blocks = 0;
    mo.kv_budget = 0;
    if (p->over == KV_PLAN_NUM_BLOCKS)
        mo.num_blocks = (uint32_t)x;
    else
        pr->value = (double)(mo.kv_budget = (uint64_t)x * p->block_bytes);
    int rc = kv_setup_resolve(&mo, own, diag);
    if (rc == 0 && own->cap.num_blocks != (uint32_t)x)
        rc = kv_diag_set(diag, -KV_ERANGE,
                         "internal: a budget of %llu bytes gave %u blocks, not %.0f",
                         (unsigned long long)mo.kv_budget, own->cap.num_blocks, x);
    return rc;
}

/* Replay at search value x (a load, or a pool in blocks) into *pr. */
static int probe(kv_plan *p, double x, kv_plan_probe *pr, kv_diag *diag)
{
    memset(pr, 0, sizeof *pr);
    kv_setup own;
    const kv_setup *setup = &p->setup__;
    pr->load = p->over == KV_PLAN_LOAD ? x : p->fixed_load;
    pr->value = x;
    if (pool_search(p->over)) {
        int rc = probe_setup(p, x, pr, &own, diag);
        if (rc != 0)
            return rc;
        setup = &own;
    }
    pr->num_blocks = setup->cap.num_blocks;
    pr->kv_budget = setup->cap.kv_budget_bytes;
    pr->time_scale = time_scale_for(p, pr->load);
    scale_to(p, pr->time_scale);
    pr->rate = arrival_rate(p->reqs__, p->trace__->n);

    kv_sim_options so = p->sim_opts__;
    so.trace.time_scale = pr->time_scale; /* the config echo says how to replay it */
    if (p->over == KV_PLAN_REPLICAS)
        so.replicas = (uint32_t)x;
    pr->replicas = so.replicas;
    pr->gpus = (uint64_t)so.replicas * p->gpus_per_replica;
    kv_engine_config cfg;
    kv_run_result res;
    memset(&res, 0, sizeof res);
    kv_diag d;
    int rc = kv_sim_engine_config(&so, setup, &cfg, &d);
    if (rc == 0)
        rc = kv_sim_replay(&so, setup, &p->view__, NULL, &res, &d);
    if (rc != 0) {
        kv_run_result_release(&res);
        if (rc == -KV_ELIVELOCK || rc == -KV_EINVARIANT) /* never expected: say where */
            return kv_diag_set(diag, rc, "%s at %s %g (please report)", d.msg,
                               kv_plan_over_name(p->over), pr->value);
        return kv_diag_set(diag, rc, "%s", d.msg);
    }
    kv_summary_set_config(&pr->summary, &so, setup, &p->view__, &cfg);
    kv_summary_from_run(&pr->summary, &res);
    kv_run_result_release(&res);
    measure(p, pr);
    return 0;
}

int kv_plan_run(kv_plan *p, kv_plan_progress progress, void *ctx, kv_diag *diag)
{
    double x;
    int rc = 0;
    while (rc == 0 && kv_search_next(&p->search, &x)) {
        if (progress)
            progress(ctx, p->search.n, x, p->over);
        kv_grow((void **)&p->probes, &p->cap_probes, p->search.n + 1, sizeof *p->probes);
        kv_plan_probe *pr = &p->probes[p->search.n];
        rc = probe(p, x, pr, diag);
        if (rc == 0)
            kv_search_record(&p->search, x, pr->meets);
        else
            kv_summary_release(&pr->summary);
    }
    kv_search_result_get(&p->search, &p->result);
    return rc;
}

void kv_plan_release(kv_plan *p)
{
    for (size_t i = 0; i < p->search.n; i++)
        kv_summary_release(&p->probes[i].summary);
    free(p->probes);
    free(p->reqs__);
    kv_chain_store_destroy(p->chains__);
    kv_search_release(&p->search);
    memset(p, 0, sizeof *p);
}

/* ---- reading the result ------------------------------------------------------------- */

long kv_plan_worst_slo(const kv_plan *p, const kv_plan_probe *pr, bool violated_only)
{
    long best = -1;
    double best_r = -1;
    for (size_t i = 0; i < p->slos.n; i++) {
        const kv_slo *s = &p->slos.slo[i];
        if (violated_only && kv_slo_met(s, pr->slo[i]))
            continue;
        double r = kv_slo_ratio(s, pr->slo[i]);
        if (r > best_r) {
            best_r = r;
            best = (long)i;
        }
    }
    return best;
}

void kv_plan_get_binding(const kv_plan *p, kv_plan_binding *b)
{
    const kv_search_result *r = &p->result;
    b->slo = -1;
    b->binds = false;
    b->answer = r->answer >= 0 ? &p->probes[r->answer] : NULL;
    b->next = r->next >= 0 ? &p->probes[r->next] : NULL;
    if (b->next) {
        b->slo = kv_plan_worst_slo(p, b->next, true);
        b->binds = true;
    } else if (b->answer) {
        b->slo = kv_plan_worst_slo(p, b->answer, false);
    }
}

void kv_plan_sorted(const kv_plan *p, size_t *idx)
{
    size_t n = p->search.n;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: n ≤ max_probes */
        for (size_t j = i; j > 0 && p->probes[idx[j - 1]].value > p->probes[idx[j]].value; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}
