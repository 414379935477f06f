/* sim: the replay driver and the options every replay is configured from (sim.h).
 *
 * The driver asks the arrival path (arrivals.h: sends, the serving front end,
 * closed-loop clients; with neither, the trace's rows in order at their arrival times) and
 * the engine for their next events; of the two, the earlier happens first, and at equal
 * times a step end comes before an arrival and an arrival before a step start (DESIGN
 * §6.5: a step starting at t sees every arrival ≤ t; C1 for a cluster).  After each event
 * the clients whose request ended send their next one.  A request gets its cache state
 * (kv_req_attach) just before it arrives.
 *
 * Memory: the request array (one kv_req per trace row), the arrival path and the engine;
 * no event heap.
 */
#include "kvsim/sim.h"

#include <stdlib.h>
#include <string.h>

#include "kvsim/blockhash.h"
#include "kvsim/cluster.h"
#include "kvsim/error.h"
#include "kvsim/mem.h"

void kv_sim_options_init(kv_sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->trace.format = KV_TRACE_AUTO;
    o->trace.time_scale = 1.0;
    o->trace.seed = 1;
    o->sched = (kv_sched_config){.max_batched_tokens = 8192,
                                 .max_seqs = 256,
                                 .chunked_prefill = true,
                                 .admit_full_prompt = true,
                                 .watermark = 0.01,
                                 .watermark_rule = KV_WATERMARK_VLLM,
                                 .preempt = KV_PREEMPT_FCFS,
                                 .policy = KV_POLICY_FCFS,
                                 .async_scheduling = true};
    o->prefix_caching = true;
    o->free_order = KV_FREE_SPLIT;
    o->time_model = "roofline";
    o->frontend = "none";
    o->replicas = 1;
    kv_router_config_init(&o->router);
}

uint32_t kv_sim_default_sample_every(size_t n)
{
    size_t every = n / 20000;
    return every < 1 ? 1 : every > UINT32_MAX ? UINT32_MAX : (uint32_t)every;
}

int kv_sim_engine_config(const kv_sim_options *o, const kv_setup *setup, kv_engine_config *c,
                         kv_diag *diag)
{
    memset(c, 0, sizeof *c);
    c->num_blocks = setup->cap.num_blocks;
    c->block_size = setup->block_size;
    c->prefix_caching = o->prefix_caching;
    c->free_order = o->free_order;
    c->sched = o->sched;
    if (o->replicas == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{replicas} must be at least 1");
    int rc = kv_router_config_check(&o->router, diag);
    if (rc != 0)
        return rc;
    rc = kv_timing_parse(o->time_model, &c->timing, diag);
    if (rc != 0)
        return rc;
    kv_timing_bind(&c->timing, &setup->model, &setup->gpu, &setup->shard);
    c->timing.overlap_host = o->sched.async_scheduling;
    rc = kv_frontend_parse(o->frontend ? o->frontend : "none", &c->frontend, diag);
    if (rc != 0)
        return rc;
    c->max_concurrency = o->max_concurrency;
    c->sample_every = 1;
    c->hash_algo = o->hash_algo;
    c->chains = o->chains;
    c->hash_ahead = o->hash_ahead;
#ifdef KVSIM_DEBUG
    c->check_invariants = true;
#endif
    return 0;
}

typedef struct driver {
    kv_engine *engine;
    kv_run_result *res;
    const kv_trace *trace;
    uint32_t shared_prefix;
    const kv_sim_hooks *hooks;
    kv_arrivals *arr; /* sends, the front end, closed-loop clients */
} driver;

static void progress(const driver *d, int64_t now)
{
    if (!d->hooks || !d->hooks->on_progress)
        return;
    kv_engine_stats st;
    kv_engine_get_stats(d->engine, &st);
    kv_progress p = {now, kv_arrivals_num_arrived(d->arr), st.sched.finished, d->trace->n};
    d->hooks->on_progress(d->hooks->ctx, &p);
}

static void arrive(driver *d, size_t i, int64_t now)
{
    kv_req *r = &d->res->reqs[i];
    kv_content c;
    kv_content_from_spec(&c, r->spec, d->trace->trace_block_size, d->shared_prefix);
    kv_req_attach(r, &c);
    if (now > d->res->last_arrival_ns)
        d->res->last_arrival_ns = now;
    kv_engine_arrive(d->engine, r, now);
}

/* Events until every request has ended, or an engine error (returned). */
static int loop(driver *d, kv_diag *diag)
{
    const uint64_t progress_every = 4096;
    for (;;) {
        int64_t t_step = 0, t_arr = 0;
        kv_engine_event ev = kv_engine_next(d->engine, &t_step);
        bool more = kv_arrivals_next(d->arr, &t_arr);
        if (ev == KV_ENGINE_IDLE && !more)
            return 0;
        bool step_first = ev != KV_ENGINE_IDLE && (!more || t_step < t_arr ||
                                                   (t_step == t_arr && ev == KV_ENGINE_STEP_END));
        if (!step_first) {
            size_t i;
            if (kv_arrivals_pop(d->arr, &i))
                arrive(d, i, t_arr);
            kv_arrivals_settle(d->arr, t_arr);
            continue;
        }
        int rc = kv_engine_advance(d->engine, diag);
        if (rc == -KV_ERANGE && diag && d->trace->path) { /* the trace the row is in */
            kv_diag engine = *diag;
            kv_diag_set(diag, rc, "%s: %s", d->trace->path, engine.msg);
        }
        if (rc != 0)
            return rc;
        kv_arrivals_settle(d->arr, t_step);
        if (ev == KV_ENGINE_STEP_START && kv_engine_steps(d->engine) % progress_every == 0)
            progress(d, t_step);
    }
}

/* After an engine error: everything not yet ended is unfinished. */
static void stop_run(driver *d)
{
    d->res->unfinished += kv_engine_abandon(d->engine);
    for (size_t i = 0; i < d->res->n; i++)
        if (d->res->reqs[i].status == KV_REQ_PENDING) { /* not arrived */
            kv_req_abandon(&d->res->reqs[i]);
            d->res->unfinished++;
        }
}

/* Whether a row of trace has a block to hash at block size b (a shared-kind block). */
static bool any_shared_block(const kv_trace *trace, uint32_t shared_prefix, uint32_t b)
{
    for (size_t i = 0; i < trace->n; i++) {
        kv_content c;
        kv_content_from_spec(&c, &trace->reqs[i], trace->trace_block_size, shared_prefix);
        if (kv_content_first_private(&c, b) > 0)
            return true;
    }
    return false;
}

int kv_replay_hasher(kv_hasher **out, const kv_engine_config *cfg, const kv_trace *trace,
                     const char *model_name, const char *dtype_name, uint32_t shared_prefix,
                     kv_diag *diag)
{
    *out = NULL;
    kv_hasher *hasher = NULL;
    int hrc = kv_hasher_create_algo(&hasher, model_name, dtype_name, cfg->block_size,
                                    cfg->hash_algo);
    if (hrc != 0)
        return kv_diag_set(diag, hrc, "cannot initialise %s: %s",
                           kv_hash_algo_name(cfg->hash_algo), kv_strerror(hrc));
    kv_hasher_use_store(hasher, cfg->chains);
    uint32_t tb = trace->trace_block_size;
    uint64_t ids = 0; /* the memo needs at most one entry per id of the trace */
    for (size_t i = 0; i < trace->n; i++)
        if (trace->reqs[i].content == KV_CONTENT_HASH_IDS)
            ids += trace->reqs[i].n_hash_ids;
    if (ids && cfg->prefix_caching && tb % cfg->block_size == 0) {
        uint32_t per = tb / cfg->block_size;
        size_t fit = kv_hasher_memo_bytes(per, 2 * ids); /* twice: room in every set */
        kv_hasher_memo(hasher, fit < KV_SIM_MEMO_BYTES ? fit : KV_SIM_MEMO_BYTES, per);
    }
    /* Not over a chain store (kv_hasher_ahead refuses); without the thread, the same. */
    if (cfg->hash_ahead && cfg->prefix_caching &&
        any_shared_block(trace, shared_prefix, cfg->block_size))
        kv_hasher_ahead(hasher, trace, shared_prefix, KV_SIM_AHEAD_BYTES);
    *out = hasher;
    return 0;
}

int kv_replay(const kv_engine_config *cfg, const kv_trace *trace, const char *model_name,
              const char *dtype_name, uint32_t shared_prefix, const kv_sim_hooks *hooks,
              kv_run_result *res, kv_diag *diag)
{
    memset(res, 0, sizeof *res);
    kv_hasher *hasher = NULL;
    if (cfg->block_size == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size and {sample_every} must be ≥ 1");
    int hrc = kv_replay_hasher(&hasher, cfg, trace, model_name, dtype_name, shared_prefix, diag);
    if (hrc != 0)
        return hrc;
    kv_engine_config ec = *cfg;
    res->n = trace->n;
    res->reqs = kv_xcalloc(trace->n ? trace->n : 1, sizeof *res->reqs);
    ec.reqs = res->reqs;
    ec.n_reqs = res->n;
    if (hooks) {
        ec.sample_every = hooks->sample_every ? hooks->sample_every : 1;
        ec.on_sample = hooks->on_sample;
        ec.on_step_end = hooks->on_step_end;
        ec.ctx = hooks->ctx;
    }
    driver d = {NULL, res, trace, shared_prefix, hooks,
                kv_arrivals_create(trace, res->reqs, &cfg->frontend, cfg->max_concurrency)};
    if (kv_arrivals_closed_loop(d.arr)) {
        ec.sched.on_end = kv_arrivals_ended;
        ec.sched.end_ctx = d.arr;
    }
    int rc = kv_engine_create(&d.engine, &ec, hasher, diag);
    if (rc != 0) {
        kv_arrivals_destroy(d.arr);
        kv_hasher_destroy(hasher);
        kv_run_result_release(res);
        return rc;
    }
    for (size_t i = 0; i < trace->n; i++) {
        kv_req_init(&res->reqs[i], &trace->reqs[i]);
        if (trace->reqs[i].arrival_ns > res->last_arrival_ns)
            res->last_arrival_ns = trace->reqs[i].arrival_ns;
    }
    rc = loop(&d, diag);
    if (rc != 0)
        stop_run(&d);
    res->sent_specs = kv_arrivals_finish(d.arr, res->reqs, res->n);
    kv_arrivals_destroy(d.arr);
    res->stop = rc;
    kv_engine_get_stats(d.engine, &res->stats);
    for (int k = KV_REJECT_CAPACITY; k <= KV_REJECT_BATCH; k++)
        res->rejected += res->stats.sched.rejected[k];
    res->sim_time_ns = res->stats.last_step_end > res->last_arrival_ns ? res->stats.last_step_end
                                                                       : res->last_arrival_ns;
    progress(&d, res->sim_time_ns);
    res->blocks_hashed = kv_hasher_blocks_hashed(hasher);
    res->hashed_ahead = kv_hasher_is_ahead(hasher);
    kv_engine_destroy(d.engine);
    kv_hasher_destroy(hasher);
    return rc;
}

int kv_sim_replay(const kv_sim_options *o, const kv_setup *setup, const kv_trace *trace,
                  const kv_sim_hooks *hooks, kv_run_result *out, kv_diag *diag)
{
    kv_engine_config cfg;
    memset(out, 0, sizeof *out);
    int rc = kv_sim_engine_config(o, setup, &cfg, diag);
    if (rc != 0)
        return rc;
    kv_router_config router = o->router;
    router.seed = o->trace.seed; /* one --seed (DESIGN §10 C3) */
    return kv_cluster_replay(&cfg, o->replicas, &router, trace, setup->model.name,
                             kv_dtype_name(setup->model.kv_dtype), o->shared_prefix, hooks,
                             out, diag);
}

void kv_run_result_release(kv_run_result *r)
{
    kv_cluster_result_free(r->cluster);
    free(r->reqs);
    free(r->sent_specs);
    memset(r, 0, sizeof *r);
}
