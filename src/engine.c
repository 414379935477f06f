/* engine: one replica's step loop (include/kvsim/engine.h, DESIGN §6).
 *
 * State machine.  `next` is what happens next: IDLE (nothing until an arrival), a
 * STEP_START at `at`, or the STEP_END of the step in flight at `at`.  An arrival makes an
 * idle engine's step start due at once.  A step start with no work (every queued arrival
 * was rejected) goes back to IDLE; otherwise it schedules, samples and sets the end.  A
 * step end applies the step (sched) and, if work remains, makes the next start due at the
 * same instant.  So there is at most one step in flight, and consecutive steps abut.
 *
 * Async scheduling (DESIGN §6.6) keeps vLLM's batch queue of two: the pass of step k+1
 * runs when step k starts executing, before step k's sampled tokens are applied (as
 * EngineCore.step_with_batch_queue schedules the next batch before it blocks on the
 * previous one).  A start then executes the step planned one start earlier (or, after
 * idling, runs that pass first, at the same instant) and plans the next one if work
 * remains; an end applies its step.  A planned step that schedules nothing is an empty
 * batch the model runner returns at once: it lasts 0 ns.
 *
 * A pass's sample is taken right after the pass (the state its step computes on, before
 * any later frees), stamped with the time its step starts executing and its duration,
 * and counted in the metrics then; it is published (kv_engine_last_sample, on_sample) when
 * its step starts executing.  Sync, that is the same instant; async, one pass later, so
 * that published samples come in time-stamp order and the latest one always describes the
 * step in flight (a cluster's timeseries rows and its C8 sums rely on both).
 *
 * The livelock guard: a step that schedules no token and preempts nothing while work
 * waits — and, async, while no executing step will deliver tokens — is counted as a step,
 * then stops the engine (-KV_ELIVELOCK).  A step whose end would pass INT64_MAX ns stops
 * it too (-KV_ERANGE), before any sample.  Both leave the queues as they are for
 * kv_engine_abandon.
 *
 * Memory is O(num_blocks + live requests' tables and chains); the engine holds no
 * per-trace state.
 */
#include "kvsim/engine.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"

/* One scheduled step: its batch and when it runs. */
typedef struct step_slot {
    kv_batch batch;
    uint64_t step;    /* 1-based number of the pass that scheduled it */
    int64_t start_ns; /* when it starts executing */
    int64_t dt_ns;    /* how long it executes */
    kv_sample sample; /* taken right after its pass; published when it starts executing */
} step_slot;

struct kv_engine {
    kv_engine_config cfg;
    kv_pool *pool;
    kv_cache *cache;
    kv_sched *sched;
    step_slot slot[2]; /* sync uses slot[0]; async alternates (vLLM's batch queue of 2) */
    step_slot *exec;   /* the step in flight (between its start and its end), or NULL */
    step_slot *plan;   /* async: the step scheduled to run next, or NULL */
    kv_metrics metrics;
    uint64_t steps;
    int64_t last_step_end;
    kv_engine_event next;
    int64_t at;   /* time of next, when not IDLE */
    kv_sample last; /* the sample of the step in flight, or of the last one executed */
    bool stopped; /* an advance failed: nothing more until abandoned */
};

static bool has_work(const kv_engine *e)
{
    return kv_sched_num_running(e->sched) > 0 || kv_sched_num_waiting(e->sched) > 0;
}

int kv_engine_create(kv_engine **out, const kv_engine_config *cfg, kv_hasher *hasher, kv_diag *diag)
{
    *out = NULL;
    if (cfg->block_size == 0 || cfg->sample_every == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size and {sample_every} must be ≥ 1");
    if (cfg->block_size != kv_hasher_block_size(hasher))
        return kv_diag_set(diag, -KV_EINVAL, "block size %u but the hasher's is %u",
                           cfg->block_size, kv_hasher_block_size(hasher));
    if (cfg->num_blocks < 2)
        return kv_diag_set(diag, -KV_ECAPACITY,
                           "a pool of %u blocks has no usable block (the null block is "
                           "reserved)",
                           cfg->num_blocks);
    kv_engine *e = kv_xcalloc(1, sizeof *e);
    e->cfg = *cfg;
    if (kv_pool_create(&e->pool, cfg->num_blocks, cfg->prefix_caching, cfg->free_order) != 0) {
        free(e);
        return kv_diag_set(diag, -KV_EINVAL, "cannot create a pool of %u blocks", cfg->num_blocks);
    }
    kv_cache_create(&e->cache, e->pool, hasher);
    kv_cache_hash_all(e->cache, cfg->hash_all_blocks);
    int rc = kv_sched_create(&e->sched, &cfg->sched, e->cache, diag);
    if (rc != 0) {
        kv_engine_destroy(e);
        return rc;
    }
    kv_metrics_init(&e->metrics);
    *out = e;
    return 0;
}

void kv_engine_destroy(kv_engine *e)
{
    if (!e)
        return;
    kv_sched_destroy(e->sched);
    kv_cache_destroy(e->cache);
    kv_pool_destroy(e->pool);
    kv_batch_release(&e->slot[0].batch);
    kv_batch_release(&e->slot[1].batch);
    free(e);
}

bool kv_engine_arrive(kv_engine *e, kv_req *r, int64_t now)
{
    bool queued = kv_sched_arrive(e->sched, r);
    if (e->next == KV_ENGINE_IDLE && !e->stopped) {
        e->next = KV_ENGINE_STEP_START;
        e->at = now;
    }
    return queued;
}

kv_engine_event kv_engine_next(const kv_engine *e, int64_t *at)
{
    if (e->next != KV_ENGINE_IDLE)
        *at = e->at;
    return e->next;
}

/* The pass's sample into st->sample, counted in the metrics now (the state its step
 * computes on); on_sample sees it when the step starts executing (publish). */
static void take_sample(kv_engine *e, step_slot *st)
{
    /* Every field assigned in place (a zeroed local and its copy cost more than the
     * rest of the sample). */
    kv_sample *s = &st->sample;
    const kv_sched_counters *sc = kv_sched_counters_get(e->sched);
    const kv_prefix_stats *ps = kv_cache_prefix_stats(e->cache);
    s->replica = e->cfg.replica;
    s->time_ns = st->start_ns;
    s->dt_ns = st->dt_ns;
    s->step = st->step;
    s->running = kv_sched_num_running(e->sched);
    s->waiting = kv_sched_num_waiting(e->sched);
    s->physical_blocks = kv_pool_num_used(e->pool);
    /* Σ table lengths of the running requests, which hold every reference (R9): O(1). */
    s->logical_blocks = kv_pool_num_refs(e->pool);
    s->cached_free_blocks = kv_pool_num_cached_free(e->pool);
    s->free_blocks = kv_pool_num_free(e->pool);
    s->usage = kv_pool_usage(e->pool);
    s->effective_tokens = 0; /* only a written row needs it (below) */
    s->scheduled_tokens = st->batch.tokens;
    s->preemptions = sc->preemptions;
    s->evictions = kv_pool_evictions(e->pool);
    s->prefix_hits = ps->hits;
    s->prefix_queries = ps->queries;
    s->watermark_deferrals = sc->deferrals;
    s->admitted = sc->admitted;
    s->finished = sc->finished;
    kv_metrics_add(&e->metrics, s);
    if (e->cfg.on_sample && (s->step - 1) % e->cfg.sample_every == 0)
        s->effective_tokens = kv_sched_effective_tokens(e->sched);
}

/* Step st starts executing: its sample becomes the engine's latest and reaches on_sample.
 * Async, that is one pass after it was taken, so samples are handed on in the order of
 * their time stamps: a cluster's timeseries rows and C8's sums stay in time order. */
static void publish(kv_engine *e, const step_slot *st)
{
    e->last = st->sample;
    if (e->cfg.on_sample && (st->sample.step - 1) % e->cfg.sample_every == 0)
        e->cfg.on_sample(e->cfg.ctx, &st->sample);
}

/* One scheduling pass at now into slot, for a step that starts executing at start.
 * in_flight: a step executes meanwhile and will deliver tokens (async), so an empty pass
 * is no livelock. */
static int pass(kv_engine *e, step_slot *slot, int64_t now, int64_t start, bool in_flight,
                kv_diag *diag)
{
    kv_sched_step(e->sched, now, &slot->batch);
    slot->step = ++e->steps;
    const kv_batch *b = &slot->batch;
    if (b->tokens == 0 && b->preempted == 0 && !in_flight)
        return kv_diag_set(diag, -KV_ELIVELOCK,
                           "livelock guard fired at step %llu: a step scheduled nothing and "
                           "preempted nothing while work waited",
                           (unsigned long long)e->steps);
    kv_step_load load = {b->tokens, b->kv_tokens_read, b->kv_tokens_streamed, b->n};
    int64_t dt = e->cfg.sched.async_scheduling && b->tokens == 0
                     ? 0 /* an empty batch: the runner returns at once */
                     : kv_timing_step(&e->cfg.timing, &load);
    if (dt > INT64_MAX - start) { /* the step would end past 2^63 ns (292 years) */
        /* Name the request that arrived last: the step starts no earlier than its arrival,
         * so when an arrival is what is too large, it is this one. */
        const kv_request_spec *last = NULL;
        for (uint32_t i = 0; i < b->n; i++)
            if (!last || b->reqs[i]->spec->arrival_ns > last->arrival_ns)
                last = b->reqs[i]->spec;
        if (!last)
            return kv_diag_set(diag, -KV_ERANGE,
                               "the simulated clock passed 2^63 ns (292 years) at step %llu: "
                               "arrivals or step times are too large",
                               (unsigned long long)e->steps);
        return kv_diag_set(diag, -KV_ERANGE,
                           "the simulated clock passed 2^63 ns (292 years) at step %llu, in the "
                           "step of row %u (line %u, arriving at %lld.%09lld s): arrivals or "
                           "step times are too large",
                           (unsigned long long)e->steps, last->row, last->line,
                           (long long)(last->arrival_ns / 1000000000),
                           (long long)(last->arrival_ns % 1000000000));
    }
    slot->start_ns = start;
    slot->dt_ns = dt;
    take_sample(e, slot);
    return 0;
}

static int step_start(kv_engine *e, int64_t now, kv_diag *diag)
{
    e->next = KV_ENGINE_IDLE;
    if (!e->cfg.sched.async_scheduling) {
        if (!has_work(e))
            return 0; /* every queued arrival was rejected: stay idle */
        int rc = pass(e, &e->slot[0], now, now, false, diag);
        if (rc != 0)
            return rc;
        e->exec = &e->slot[0];
        publish(e, e->exec);
    } else {
        if (!e->plan) { /* after idling: this step's pass runs now, then the next one's */
            if (!has_work(e))
                return 0;
            int rc = pass(e, &e->slot[0], now, now, false, diag);
            if (rc != 0)
                return rc;
            e->plan = &e->slot[0];
        }
        e->exec = e->plan;
        e->plan = NULL;
        publish(e, e->exec);
        if (has_work(e)) {
            step_slot *next = e->exec == &e->slot[0] ? &e->slot[1] : &e->slot[0];
            int rc = pass(e, next, now, now + e->exec->dt_ns, e->exec->batch.tokens > 0, diag);
            if (rc != 0)
                return rc;
            e->plan = next;
        }
    }
    e->next = KV_ENGINE_STEP_END;
    e->at = now + e->exec->dt_ns;
    return 0;
}

static int step_end(kv_engine *e, int64_t now, kv_diag *diag)
{
    step_slot *x = e->exec;
    kv_sched_step_end(e->sched, &x->batch, now);
    if (e->cfg.on_step_end) {
        kv_step_view v = {e->cfg.replica, x->step,       x->start_ns, now,
                          e->cfg.reqs,    e->cfg.n_reqs, e->pool,     &x->batch};
        e->cfg.on_step_end(e->cfg.ctx, &v);
    }
    x->batch.n = 0;
    e->exec = NULL;
    e->last_step_end = now;
    e->next = e->plan || has_work(e) ? KV_ENGINE_STEP_START : KV_ENGINE_IDLE;
    e->at = now;
    if (e->cfg.check_invariants) {
        kv_diag d;
        if (kv_engine_check(e, &d) != 0)
            return kv_diag_set(diag, -KV_EINVARIANT, "after step %llu: %s",
                               (unsigned long long)x->step, d.msg);
    }
    return 0;
}

int kv_engine_advance(kv_engine *e, kv_diag *diag)
{
    assert(e->next != KV_ENGINE_IDLE && !e->stopped);
    int rc =
        e->next == KV_ENGINE_STEP_START ? step_start(e, e->at, diag) : step_end(e, e->at, diag);
    if (rc != 0) {
        e->stopped = true;
        e->next = KV_ENGINE_IDLE;
    }
    return rc;
}

uint32_t kv_engine_abandon(kv_engine *e)
{
    e->stopped = true;
    e->next = KV_ENGINE_IDLE;
    e->slot[0].batch.n = e->slot[1].batch.n = 0;
    e->exec = e->plan = NULL;
    return kv_sched_abandon(e->sched);
}

void kv_engine_get_stats(const kv_engine *e, kv_engine_stats *out)
{
    memset(out, 0, sizeof *out);
    out->steps = e->steps;
    out->last_step_end = e->last_step_end;
    out->sched = *kv_sched_counters_get(e->sched);
    out->prefix = *kv_cache_prefix_stats(e->cache);
    out->evictions = kv_pool_evictions(e->pool);
    out->metrics = e->metrics;
    out->watermark_blocks = kv_sched_watermark_blocks(e->sched);
    out->usable_blocks = kv_pool_usable(e->pool);
}

const kv_pool *kv_engine_pool(const kv_engine *e)
{
    return e->pool;
}

const kv_sample *kv_engine_last_sample(const kv_engine *e)
{
    return &e->last;
}

uint32_t kv_engine_num_running(const kv_engine *e)
{
    return kv_sched_num_running(e->sched);
}

uint64_t kv_engine_steps(const kv_engine *e)
{
    return e->steps;
}

uint32_t kv_engine_num_waiting(const kv_engine *e)
{
    return kv_sched_num_waiting(e->sched);
}

int kv_engine_check(const kv_engine *e, kv_diag *diag)
{
    int rc = kv_pool_check(e->pool, diag);
    if (rc == 0)
        rc = kv_sched_check(e->sched, diag);
    if (rc == 0 && kv_pool_num_used(e->pool) > kv_pool_usable(e->pool))
        rc = kv_diag_set(diag, -KV_EINVARIANT, "pool: %u physical blocks above %u usable",
                         kv_pool_num_used(e->pool), kv_pool_usable(e->pool));
    return rc;
}
