/* engine: one replica's step loop (include/kvsim/engine.h, DESIGN §6).
 *
 * State machine.  `next` is what happens next: IDLE (nothing until an arrival), a
 * STEP_START at `at`, or the STEP_END of the step in flight at `at`.  An arrival makes an
 * idle engine's step start due at once.  A step start with no work (every queued arrival
 * was rejected) goes back to IDLE; otherwise it schedules, samples and sets the end.  A
 * step end applies the step (sched) and, if work remains, makes the next start due at the
 * same instant.  So there is at most one step in flight, and consecutive steps abut.
 *
 * The livelock guard: a step that schedules no token and preempts nothing while work
 * waits is counted as a step, then stops the engine (-KV_ELIVELOCK).  A step whose end
 * would pass INT64_MAX ns stops it too (-KV_ERANGE), before any sample.  Both leave the
 * queues as they are for kv_engine_abandon.
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

struct kv_engine {
    kv_engine_config cfg;
    kv_pool *pool;
    kv_cache *cache;
    kv_sched *sched;
    kv_batch batch;
    kv_metrics metrics;
    uint64_t steps;
    int64_t last_step_end;
    int64_t step_start; /* of the step in flight */
    kv_engine_event next;
    int64_t at;   /* time of next, when not IDLE */
    kv_sample last; /* the sample of the last step started */
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
    if (kv_sched_create(&e->sched, &cfg->sched, e->cache) != 0) {
        kv_engine_destroy(e);
        return kv_diag_set(diag, -KV_EINVAL,
                           "scheduler: max_batched_tokens and max_seqs must be ≥ 1 and the "
                           "watermark in [0, 1)");
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
    kv_batch_release(&e->batch);
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

static void take_sample(kv_engine *e, int64_t now, int64_t dt)
{
    kv_sample s = {0};
    const kv_sched_counters *sc = kv_sched_counters_get(e->sched);
    s.replica = e->cfg.replica;
    const kv_prefix_stats *ps = kv_cache_prefix_stats(e->cache);
    s.time_ns = now;
    s.dt_ns = dt;
    s.step = e->steps;
    s.running = kv_sched_num_running(e->sched);
    s.waiting = kv_sched_num_waiting(e->sched);
    s.physical_blocks = kv_pool_num_used(e->pool);
    /* Σ table lengths of the running requests, which hold every reference (R9): O(1). */
    s.logical_blocks = kv_pool_num_refs(e->pool);
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
    s.finished = sc->finished;
    kv_metrics_add(&e->metrics, &s);
    if (e->cfg.on_sample && (s.step - 1) % e->cfg.sample_every == 0) {
        /* Only a written row needs it: an O(running) walk kept off the other steps. */
        s.effective_tokens = kv_sched_effective_tokens(e->sched);
        e->cfg.on_sample(e->cfg.ctx, &s);
    }
    e->last = s;
}

static int step_start(kv_engine *e, int64_t now, kv_diag *diag)
{
    e->next = KV_ENGINE_IDLE;
    if (!has_work(e))
        return 0; /* every queued arrival was rejected: stay idle */
    kv_sched_step(e->sched, now, &e->batch);
    e->steps++;
    if (e->batch.tokens == 0 && e->batch.preempted == 0)
        return kv_diag_set(diag, -KV_ELIVELOCK,
                           "livelock guard fired at step %llu: a step scheduled nothing and "
                           "preempted nothing while work waited",
                           (unsigned long long)e->steps);
    kv_step_load load = {e->batch.tokens, e->batch.kv_tokens_read, e->batch.kv_tokens_streamed,
                         e->batch.n};
    int64_t dt = kv_timing_step(&e->cfg.timing, &load);
    if (dt > INT64_MAX - now) { /* the step would end past 2^63 ns (292 years) */
        /* Name the request that arrived last: the step starts no earlier than its arrival,
         * so when an arrival is what is too large, it is this one. */
        const kv_request_spec *last = NULL;
        for (uint32_t i = 0; i < e->batch.n; i++)
            if (!last || e->batch.reqs[i]->spec->arrival_ns > last->arrival_ns)
                last = e->batch.reqs[i]->spec;
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
    take_sample(e, now, dt);
    e->step_start = now;
    e->next = KV_ENGINE_STEP_END;
    e->at = now + dt;
    return 0;
}

static int step_end(kv_engine *e, int64_t now, kv_diag *diag)
{
    kv_sched_step_end(e->sched, &e->batch, now);
    if (e->cfg.on_step_end) {
        kv_step_view v = {e->cfg.replica, e->steps, e->step_start, now,
                          e->cfg.reqs,    e->cfg.n_reqs, e->pool,     &e->batch};
        e->cfg.on_step_end(e->cfg.ctx, &v);
    }
    e->batch.n = 0;
    e->last_step_end = now;
    e->next = has_work(e) ? KV_ENGINE_STEP_START : KV_ENGINE_IDLE;
    e->at = now;
    if (e->cfg.check_invariants) {
        kv_diag d;
        if (kv_engine_check(e, &d) != 0)
            return kv_diag_set(diag, -KV_EINVARIANT, "after step %llu: %s",
                               (unsigned long long)e->steps, d.msg);
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
    e->batch.n = 0;
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
