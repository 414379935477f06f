/* engine: discrete-event replay of a trace (DESIGN §6).
 *
 * Three event kinds share one binary heap ordered by (time, seq):
 *   ARRIVAL     a request joins the waiting queue (or is rejected there);
 *   STEP_START  the scheduler runs one pass, the step's sample is taken, and its end is
 *               scheduled after the time model's duration;
 *   STEP_END    scheduled requests advance num_computed; a request whose computed tokens
 *               reach its known tokens samples one token (the first sets TTFT), and those
 *               reaching output_len finish and are freed, in scheduling order.
 * All arrivals are pushed before any step event, so their sequence numbers are smaller:
 * at equal times arrivals come first, and a step starting at t sees every arrival ≤ t.
 * At most one step is in flight; the next starts at the previous one's end if work
 * remains, else at the next arrival (the clock jumps).
 *
 * The livelock guard: a step that schedules no token and preempts nothing while work
 * waits stops the run and marks the rest unfinished.  By DESIGN's rejection rules it can
 * never fire; it is a safety net that says so loudly if it does.
 *
 * Memory is O(trace + num_blocks + live hash chains); the heap holds n arrivals plus at
 * most one step event.
 */
#include "kvsim/engine.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/blockhash.h"
#include "kvsim/error.h"
#include "kvsim/mem.h"
#include "kvsim/model.h"

enum { EV_ARRIVAL, EV_STEP_START, EV_STEP_END };

typedef struct event {
    int64_t time;
    uint64_t seq;
    uint32_t kind;
    uint32_t idx; /* request index for arrivals */
} event;

typedef struct heap {
    event *ev;
    size_t n, cap;
    uint64_t next_seq;
} heap;

static bool ev_less(const event *a, const event *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_push(heap *h, int64_t time, uint32_t kind, uint32_t idx)
{
    kv_grow((void **)&h->ev, &h->cap, h->n + 1, sizeof *h->ev);
    event e = {time, h->next_seq++, kind, idx};
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!ev_less(&e, &h->ev[parent]))
            break;
        h->ev[i] = h->ev[parent];
        i = parent;
    }
    h->ev[i] = e;
}

static event heap_pop(heap *h)
{
    event top = h->ev[0];
    event last = h->ev[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *cand = &last;
        if (l < h->n && ev_less(&h->ev[l], cand)) {
            m = l;
            cand = &h->ev[l];
        }
        if (r < h->n && ev_less(&h->ev[r], cand))
            m = r;
        if (m == i)
            break;
        h->ev[i] = h->ev[m];
        i = m;
    }
    if (h->n > 0)
        h->ev[i] = last;
    return top;
}

typedef struct engine {
    const kv_engine_config *cfg;
    kv_pool *pool;
    kv_hasher *hasher;
    kv_cache *cache;
    kv_sched *sched;
    kv_batch batch;
    heap events;
    kv_run_result *res;
    int64_t last_step_end;
    int64_t step_start; /* of the step in flight */
    bool step_pending;  /* a STEP_START or STEP_END is in the heap */
} engine;

static bool has_work(const engine *e)
{
    return kv_sched_num_running(e->sched) > 0 || kv_sched_num_waiting(e->sched) > 0;
}

static void take_sample(engine *e, int64_t now, int64_t dt)
{
    kv_sample s = {0};
    const kv_sched_counters *sc = kv_sched_counters_get(e->sched);
    const kv_prefix_stats *ps = kv_cache_prefix_stats(e->cache);
    s.time_ns = now;
    s.dt_ns = dt;
    s.step = e->res->steps;
    s.running = kv_sched_num_running(e->sched);
    s.waiting = kv_sched_num_waiting(e->sched);
    s.physical_blocks = kv_pool_num_used(e->pool);
    s.logical_blocks = kv_sched_logical_blocks(e->sched);
    s.cached_free_blocks = kv_pool_num_cached_free(e->pool);
    s.free_blocks = kv_pool_num_free(e->pool);
    s.usage = kv_pool_usage(e->pool);
    s.scheduled_tokens = e->batch.tokens;
    s.preemptions = sc->preemptions;
    s.evictions = kv_pool_evictions(e->pool);
    s.prefix_hits = ps->hits;
    s.prefix_queries = ps->queries;
    s.watermark_deferrals = sc->deferrals;
    s.admitted = sc->admitted;
    s.finished = e->res->finished;
    kv_metrics_add(&e->res->metrics, &s);
    if (e->cfg->on_sample && (s.step - 1) % e->cfg->sample_every == 0) {
        /* Only a written row needs it: an O(running) walk kept off the other steps. */
        s.effective_tokens = kv_sched_effective_tokens(e->sched);
        e->cfg->on_sample(e->cfg->ctx, &s);
    }
}

static bool invariants_hold(engine *e)
{
    if (!kv_pool_check(e->pool))
        return false;
    uint64_t refs = kv_pool_refcount_sum(e->pool), logical = kv_sched_logical_blocks(e->sched);
    if (refs != logical) {
        fprintf(stderr, "kvsim: invariant: Σ refcounts %llu != Σ table lengths %llu\n",
                (unsigned long long)refs, (unsigned long long)logical);
        return false;
    }
    if (kv_pool_num_used(e->pool) > kv_pool_usable(e->pool))
        return false;
    return true;
}

static void step_start(engine *e, int64_t now)
{
    if (!has_work(e))
        return; /* every queued arrival was rejected: stay idle */
    kv_sched_step(e->sched, now, &e->batch);
    e->res->steps++;
    if (e->batch.tokens == 0 && e->batch.preempted == 0) {
        /* Livelock guard: nothing scheduled, nothing preempted, work waiting. */
        e->res->livelock = true;
        e->res->unfinished += kv_sched_abandon(e->sched);
        return;
    }
    kv_step_load load = {e->batch.tokens, e->batch.kv_tokens_read, e->batch.kv_tokens_streamed,
                         e->batch.n};
    int64_t dt = kv_timing_step(&e->cfg->timing, &load);
    if (dt > INT64_MAX - now) {
        /* The step would end past 2^63 ns (292 years): stop rather than wrap. */
        e->res->clock_overflow = true;
        e->res->unfinished += kv_sched_abandon(e->sched);
        return;
    }
    take_sample(e, now, dt);
    e->step_start = now;
    heap_push(&e->events, now + dt, EV_STEP_END, 0);
    e->step_pending = true;
}

static void step_end(engine *e, int64_t now)
{
    int64_t start = e->step_start;
    for (uint32_t i = 0; i < e->batch.n; i++) {
        kv_req *r = e->batch.reqs[i];
        r->num_computed += r->step_new;
        r->step_new = 0;
        if (r->num_computed != kv_req_num_tokens(r))
            continue; /* a prefill chunk: no token yet */
        r->num_generated++;
        if (r->first_token_ns < 0)
            r->first_token_ns = now;
        if (r->num_generated == r->spec->output_len) {
            r->finish_ns = now;
            kv_sched_finish(e->sched, r);
            e->res->finished++;
            e->res->output_tokens += r->spec->output_len;
        }
    }
    if (e->cfg->on_step_end) {
        kv_step_view v = {e->res->steps, start, now, e->res->reqs, e->res->n, e->pool, &e->batch};
        e->cfg->on_step_end(e->cfg->ctx, &v);
    }
    e->batch.n = 0;
    e->last_step_end = now;
    if (e->cfg->check_invariants && !e->res->invariant_failed && !invariants_hold(e))
        e->res->invariant_failed = true;
    e->step_pending = false;
    if (has_work(e)) {
        heap_push(&e->events, now, EV_STEP_START, 0);
        e->step_pending = true;
    }
}

static int setup(engine *e, const kv_engine_config *cfg, kv_diag *diag)
{
    if (cfg->block_size == 0 || cfg->sample_every == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size and --sample-every must be ≥ 1");
    if (cfg->num_blocks < 2)
        return kv_diag_set(diag, -KV_ECAPACITY,
                           "a pool of %u blocks has no usable block (the null block is "
                           "reserved)",
                           cfg->num_blocks);
    if (kv_pool_create(&e->pool, cfg->num_blocks, cfg->prefix_caching, cfg->free_order) != 0)
        return kv_diag_set(diag, -KV_EINVAL, "cannot create a pool of %u blocks", cfg->num_blocks);
    if (kv_hasher_create(&e->hasher, cfg->model_name, cfg->kv_dtype, cfg->block_size) != 0)
        return kv_diag_set(diag, -KV_ENOMEM, "cannot initialise SHA-256");
    kv_cache_create(&e->cache, e->pool, e->hasher);
    if (kv_sched_create(&e->sched, &cfg->sched, e->cache) != 0)
        return kv_diag_set(diag, -KV_EINVAL,
                           "scheduler: max_batched_tokens and max_seqs must be ≥ 1 and the "
                           "watermark in [0, 1)");
    return 0;
}

static void teardown(engine *e)
{
    kv_sched_destroy(e->sched);
    kv_cache_destroy(e->cache);
    kv_hasher_destroy(e->hasher);
    kv_pool_destroy(e->pool);
    kv_batch_release(&e->batch);
    free(e->events.ev);
}

int kv_engine_run(const kv_engine_config *cfg, const kv_trace *trace, kv_run_result *res,
                  kv_diag *diag)
{
    memset(res, 0, sizeof *res);
    engine e;
    memset(&e, 0, sizeof e);
    e.cfg = cfg;
    e.res = res;
    int rc = setup(&e, cfg, diag);
    if (rc != 0) {
        teardown(&e);
        return rc;
    }
    kv_metrics_init(&res->metrics);
    res->n = trace->n;
    res->reqs = kv_xcalloc(trace->n ? trace->n : 1, sizeof *res->reqs);
    res->watermark_blocks = kv_sched_watermark_blocks(e.sched);
    res->usable_blocks = kv_pool_usable(e.pool);

    /* Arrivals are sorted by time (ties in file order), so pushing them in order with
     * increasing sequence numbers builds a valid heap directly. */
    int64_t last_arrival = 0;
    for (size_t i = 0; i < trace->n; i++) {
        kv_req *r = &res->reqs[i];
        kv_content c;
        r->spec = &trace->reqs[i];
        r->first_scheduled_ns = r->first_token_ns = r->finish_ns = -1;
        kv_content_from_spec(&c, r->spec, trace->trace_block_size, cfg->shared_prefix);
        kv_seq_init(&r->seq, &c);
        r->seq.max_tokens = r->spec->prompt_len + r->spec->output_len - 1;
        heap_push(&e.events, r->spec->arrival_ns, EV_ARRIVAL, (uint32_t)i);
        if (r->spec->arrival_ns > last_arrival)
            last_arrival = r->spec->arrival_ns;
    }

    uint64_t arrived = 0, progress_every = 4096;
    while (e.events.n > 0 && !res->livelock && !res->clock_overflow) {
        event ev = heap_pop(&e.events);
        switch (ev.kind) {
        case EV_ARRIVAL:
            arrived++;
            kv_sched_arrive(e.sched, &res->reqs[ev.idx]);
            if (!e.step_pending) {
                heap_push(&e.events, ev.time, EV_STEP_START, 0);
                e.step_pending = true;
            }
            break;
        case EV_STEP_START:
            e.step_pending = false;
            step_start(&e, ev.time);
            if (cfg->on_progress && res->steps % progress_every == 0)
                cfg->on_progress(cfg->ctx, ev.time, arrived, trace->n);
            break;
        case EV_STEP_END:
            step_end(&e, ev.time);
            break;
        }
    }
    if (res->livelock || res->clock_overflow) {
        /* Requests that never arrived before the run stopped are unfinished too. */
        for (size_t i = 0; i < res->n; i++)
            if (res->reqs[i].status == KV_REQ_PENDING) {
                res->reqs[i].status = KV_REQ_UNFINISHED;
                kv_seq_release(&res->reqs[i].seq);
                res->unfinished++;
            }
    }
    res->sim_time_ns = e.last_step_end > last_arrival ? e.last_step_end : last_arrival;
    const kv_sched_counters *sc = kv_sched_counters_get(e.sched);
    res->sched = *sc;
    res->rejected = sc->rejected[KV_REJECT_CAPACITY] + sc->rejected[KV_REJECT_WATERMARK] +
                    sc->rejected[KV_REJECT_BATCH];
    res->evictions = kv_pool_evictions(e.pool);
    res->prefix = *kv_cache_prefix_stats(e.cache);
    if (cfg->on_progress)
        cfg->on_progress(cfg->ctx, res->sim_time_ns, arrived, trace->n);
    teardown(&e);
    if (res->clock_overflow)
        return kv_diag_set(diag, -KV_ERANGE,
                           "the simulated clock passed 2^63 ns (292 years) at step %llu: "
                           "arrivals or step times are too large",
                           (unsigned long long)res->steps);
    return 0;
}

void kv_run_result_release(kv_run_result *r)
{
    free(r->reqs);
    memset(r, 0, sizeof *r);
}
