/* cluster: the multi-replica replay driver (include/kvsim/cluster.h, DESIGN §10).
 *
 * The event heap (C1).  Every replica that is not idle has exactly one entry, its next
 * event (a step start or the end of the step in flight); the arrival path (arrivals.h:
 * sends, the front end, closed-loop clients) is asked for its next event, keyed as an
 * arrival, before each pop.  Keys are (time, kind, replica, seq) with kinds ordered step
 * end < arrival < step start, replica the engine's index (0 for arrivals) and seq 0.  So
 * at equal times every step end comes first, in replica order, then the arrivals in the
 * arrival path's order (trace order without a front end or clients), then the step
 * starts in replica order: a step starting at t sees every arrival ≤ t, and a routing at
 * t sees every step end ≤ t (C2).  An entry changes only when it is popped (the engine
 * advances and its next event is pushed) or when an arrival wakes an idle replica (its
 * step start is pushed); there are no stale entries.  The heap holds at most R.
 *
 * Routing (C2–C6).  A request gets its cache state (kv_req_attach) and, when the router
 * may look at prefixes (prefix caching on, or the approx view), its prompt's full-block
 * chain from the shared hasher: computed once, read by the router, reused by the replica
 * that admits it (the engine would hash those blocks at allocation anyway), and only up
 * to the first private block (DESIGN §9), which no view can hold.  The router
 * sees each replica's live signals or, with --router-refresh D, the sample taken at the
 * last multiple of D: a sample at kD is taken just before the first event keyed at or
 * after (kD, arrival) — after the step ends at kD, before the arrivals at kD (C8) — and
 * samples between two events are all equal, so only the last one due is taken.
 *
 * Totals (C7, C8).  Counters are sums over the replicas; the peaks of physical and
 * logical blocks are the peaks of the sum of every replica's latest sample, updated at
 * each sample of any replica (an engine publishes a step's sample when the step starts
 * executing, so under async scheduling too the sums are of the steps in flight); C6 is counted at the end from each request's predicted and
 * granted hit.  With R = 1 nothing is routed (no router exists, no chain is computed
 * early) and the result is kv_replay's; a request then gets its cache state only when it
 * first heads the waiting queue (kv_sched_config.attach_at_head), not at arrival as
 * kv_replay gives it (DESIGN §9 "Memory per request" in docs/design.md).
 *
 * Memory: R engines, the heap, the router, and per request its replica and predicted hit
 * (and its session id with --router session).
 */
#include "kvsim/cluster.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/blockhash.h"
#include "kvsim/error.h"
#include "kvsim/mem.h"

#include "heap_internal.h"

enum { EV_STEP_END = 0, EV_ARRIVAL = 1, EV_STEP_START = 2 };

typedef struct event {
    int64_t t;
    uint32_t kind;
    uint32_t replica;
    uint64_t seq;
} event;

static bool before(const event *a, const event *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    if (a->replica != b->replica)
        return a->replica < b->replica;
    return a->seq < b->seq;
}

KV_HEAP_DEFINE(event_heap, event, before)

typedef struct heap {
    event *e;
    size_t n;
} heap;

typedef struct driver {
    const kv_engine_config *cfg;
    uint32_t R;
    kv_engine **eng;
    kv_hasher *hasher;
    kv_router *router;
    kv_run_result *res;
    kv_cluster_result *cl; /* NULL with R = 1 */
    const kv_trace *trace;
    uint32_t shared_prefix;
    const kv_sim_hooks *hooks;
    heap heap;
    kv_arrivals *arr; /* the arrival path */
    uint64_t steps; /* step starts over all replicas, for progress */
    bool chain;     /* routing reads prompt chains */
    uint32_t *session_of; /* per request: dense session id (--router session), or NULL */
    /* --router-refresh */
    int64_t refresh_ns;            /* 0: live signals */
    int64_t next_sample;           /* the first multiple of D not yet sampled */
    kv_replica_signals *sig;       /* the signals routings see (refreshed live or sampled) */
    const kv_pool **pools;         /* each replica's pool, for the exact view */
    /* C8 peaks */
    uint64_t *cur_phys, *cur_log, sum_phys, sum_log;
} driver;

static void live_signals(const driver *d, kv_replica_signals *s)
{
    for (uint32_t r = 0; r < d->R; r++) {
        const kv_pool *p = kv_engine_pool(d->eng[r]);
        s[r] = (kv_replica_signals){kv_engine_num_running(d->eng[r]),
                                    kv_engine_num_waiting(d->eng[r]), kv_pool_num_used(p),
                                    kv_pool_num_free(p)};
    }
}

/* Take the last --router-refresh sample due before event ev (file comment). */
static void sample_before(driver *d, const event *ev)
{
    int64_t D = d->refresh_ns, last;
    if (ev->kind == EV_STEP_END) /* the sample at t comes after the step ends at t */
        last = ev->t > 0 ? (ev->t - 1) / D * D : -1;
    else
        last = ev->t / D * D;
    if (last < d->next_sample)
        return;
    live_signals(d, d->sig);
    d->next_sample = last > INT64_MAX - D ? INT64_MAX : last + D;
}

static void progress(const driver *d, int64_t now)
{
    if (!d->hooks || !d->hooks->on_progress)
        return;
    uint64_t finished = 0;
    for (uint32_t r = 0; r < d->R; r++) {
        kv_engine_stats st;
        kv_engine_get_stats(d->eng[r], &st);
        finished += st.sched.finished;
    }
    kv_progress p = {now, kv_arrivals_num_arrived(d->arr), finished, d->trace->n};
    d->hooks->on_progress(d->hooks->ctx, &p);
}

static void push_engine(driver *d, uint32_t r)
{
    int64_t at = 0;
    kv_engine_event ev = kv_engine_next(d->eng[r], &at);
    if (ev != KV_ENGINE_IDLE)
        event_heap_push(d->heap.e, &d->heap.n,
                  (event){at, ev == KV_ENGINE_STEP_END ? EV_STEP_END : EV_STEP_START, r, 0});
}

/* The router's decision for request i (R ≥ 2), recorded for C6.  Only the prompt's
 * shared-kind full blocks are hashed: a private block (DESIGN §9) can be in no view, and
 * a replay of one replica never hashes it either. */
static uint32_t route(driver *d, size_t i, kv_req *r, const kv_content *c)
{
    uint32_t b = d->cfg->block_size, len = r->spec->prompt_len;
    kv_route_input in = {NULL, len / b, (len - 1) / b, KV_ROUTER_NO_SESSION, 0, i};
    uint32_t shared = kv_content_first_private(c, b);
    in.n_private = shared < in.n_full ? in.n_full - shared : 0;
    if (d->chain && in.n_full > in.n_private)
        in.chain = kv_seq_chain(r->seq, d->hasher, in.n_full - in.n_private);
    if (d->session_of)
        in.session = d->session_of[i];
    if (d->refresh_ns == 0)
        live_signals(d, d->sig);
    kv_route out;
    kv_router_route(d->router, &in, d->sig, d->pools, &out);
    d->cl->replica_of[i] = out.replica;
    d->cl->predicted_tokens[i] = out.overlap * b;
    d->cl->replica[out.replica].routed++;
    return out.replica;
}

static int arrive(driver *d, size_t i, int64_t now, kv_diag *diag)
{
    kv_req *r = &d->res->reqs[i];
    uint32_t to = 0;
    if (d->R > 1) { /* the router reads the chain; one replica attaches at the head */
        kv_content c;
        kv_content_from_spec(&c, r->spec, d->trace->trace_block_size, d->shared_prefix);
        kv_req_attach(r, &c);
        to = route(d, i, r, &c);
    }
    if (now > d->res->last_arrival_ns)
        d->res->last_arrival_ns = now;
    int64_t at;
    bool idle = kv_engine_next(d->eng[to], &at) == KV_ENGINE_IDLE;
    kv_engine_arrive(d->eng[to], r, now);
    if (idle)
        push_engine(d, to);
    if (d->cfg->check_invariants && d->router) {
        kv_diag dg;
        if (kv_router_check(d->router, &dg) != 0)
            return kv_diag_set(diag, -KV_EINVARIANT, "after routing request %zu: %s", i, dg.msg);
    }
    return 0;
}

/* C8: replica r took a sample; the cluster-wide sums move and may peak. */
static void note_sample(driver *d, uint32_t r)
{
    const kv_sample *s = kv_engine_last_sample(d->eng[r]);
    d->sum_phys += s->physical_blocks - d->cur_phys[r];
    d->sum_log += s->logical_blocks - d->cur_log[r];
    d->cur_phys[r] = s->physical_blocks;
    d->cur_log[r] = s->logical_blocks;
    if (d->sum_phys > d->cl->peak_physical)
        d->cl->peak_physical = d->sum_phys;
    if (d->sum_log > d->cl->peak_logical)
        d->cl->peak_logical = d->sum_log;
}

/* Events until every request has ended, or an engine error (returned). */
static int loop(driver *d, kv_diag *diag)
{
    const uint64_t progress_every = 4096;
    for (;;) {
        event arr = {0, EV_ARRIVAL, 0, 0};
        bool more = kv_arrivals_next(d->arr, &arr.t);
        if (!more && d->heap.n == 0)
            break;
        bool arrival = more && (d->heap.n == 0 || before(&arr, &d->heap.e[0]));
        if (d->refresh_ns > 0)
            sample_before(d, arrival ? &arr : &d->heap.e[0]);
        if (arrival) {
            size_t i;
            int rc = kv_arrivals_pop(d->arr, &i) ? arrive(d, i, arr.t, diag) : 0;
            if (rc != 0)
                return rc;
            kv_arrivals_settle(d->arr, arr.t);
            continue;
        }
        event ev = event_heap_pop(d->heap.e, &d->heap.n);
        kv_engine *e = d->eng[ev.replica];
        kv_diag dg;
        int rc = kv_engine_advance(e, &dg);
        if (rc == -KV_ERANGE && d->trace->path) { /* the trace the row is in */
            kv_diag engine = dg;
            kv_diag_set(&dg, rc, "%s: %s", d->trace->path, engine.msg);
        }
        if (rc != 0)
            return d->R > 1 ? kv_diag_set(diag, rc, "replica %u: %s", ev.replica, dg.msg)
                            : kv_diag_set(diag, rc, "%s", dg.msg);
        kv_arrivals_settle(d->arr, ev.t);
        int64_t at;
        if (ev.kind == EV_STEP_START && kv_engine_next(e, &at) == KV_ENGINE_STEP_END) {
            if (d->cl)
                note_sample(d, ev.replica);
            if (++d->steps % progress_every == 0)
                progress(d, ev.t);
        }
        push_engine(d, ev.replica);
    }
    return 0;
}

/* After an engine error: everything not yet ended is unfinished. */
static void stop_run(driver *d)
{
    for (uint32_t r = 0; r < d->R; r++)
        d->res->unfinished += kv_engine_abandon(d->eng[r]);
    for (size_t i = 0; i < d->res->n; i++)
        if (d->res->reqs[i].status == KV_REQ_PENDING) { /* not arrived */
            kv_req_abandon(&d->res->reqs[i]);
            d->res->unfinished++;
        }
}

static void add_counters(kv_sched_counters *to, const kv_sched_counters *c)
{
    to->finished += c->finished;
    to->output_tokens += c->output_tokens;
    to->preemptions += c->preemptions;
    to->deferrals += c->deferrals;
    to->deferral_steps += c->deferral_steps;
    to->deferred_requests += c->deferred_requests;
    to->admitted += c->admitted;
    for (int k = 0; k < 4; k++)
        to->rejected[k] += c->rejected[k];
}

/* Every replica's stats, the cluster sums in res->stats, and C6. */
static void collect(driver *d)
{
    kv_engine_stats *tot = &d->res->stats;
    memset(tot, 0, sizeof *tot);
    for (uint32_t r = 0; r < d->R; r++) {
        kv_engine_stats st;
        kv_engine_get_stats(d->eng[r], &st);
        if (d->R == 1) {
            *tot = st;
            break;
        }
        d->cl->replica[r].stats = st;
        for (int k = KV_REJECT_CAPACITY; k <= KV_REJECT_BATCH; k++)
            d->cl->replica[r].rejected += st.sched.rejected[k];
        tot->steps += st.steps;
        if (st.last_step_end > tot->last_step_end)
            tot->last_step_end = st.last_step_end;
        add_counters(&tot->sched, &st.sched);
        tot->prefix.queries += st.prefix.queries;
        tot->prefix.hits += st.prefix.hits;
        tot->prefix.preempted_queries += st.prefix.preempted_queries;
        tot->prefix.preempted_hits += st.prefix.preempted_hits;
        tot->evictions += st.evictions;
        tot->metrics.steps += st.metrics.steps;
        tot->metrics.w_physical += st.metrics.w_physical;
        tot->metrics.w_logical += st.metrics.w_logical;
        tot->metrics.w_time += st.metrics.w_time;
        tot->watermark_blocks = st.watermark_blocks;
        tot->usable_blocks += st.usable_blocks;
    }
    if (!d->cl)
        return;
    kv_cluster_result *cl = d->cl;
    tot->metrics.peak_physical =
        cl->peak_physical > UINT32_MAX ? UINT32_MAX : (uint32_t)cl->peak_physical;
    tot->metrics.peak_logical = cl->peak_logical;
    for (size_t i = 0; i < d->res->n; i++) {
        uint64_t p = cl->predicted_tokens[i], g = d->res->reqs[i].hit_tokens;
        cl->predicted_hit_tokens += p;
        cl->granted_hit_tokens += g;
        cl->overpredicted += p > g;
        cl->underpredicted += p < g;
    }
}

/* ---- sessions ----------------------------------------------------------------------- */

typedef struct session_row {
    const char *session;
    size_t row; /* trace index */
} session_row;

static int by_session(const void *pa, const void *pb)
{
    const session_row *a = pa, *b = pb;
    int c = strcmp(a->session, b->session);
    return c ? c : (a->row > b->row) - (a->row < b->row);
}

/* Dense session ids (ids may be NULL: only count), numbered in the order of the session
 * strings, never of a hash table; returns how many sessions, *rows how many rows have one. */
static uint32_t number_sessions(const kv_trace *t, uint32_t *ids, uint64_t *rows)
{
    session_row *v = kv_xmalloc((t->n ? t->n : 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (ids)
            ids[i] = KV_ROUTER_NO_SESSION;
        if (t->reqs[i].session)
            v[m++] = (session_row){t->reqs[i].session, i};
    }
    *rows = m;
    uint32_t n = 0;
    if (ids && m > 0) {
        qsort(v, m, sizeof *v, by_session);
        for (size_t k = 0; k < m; k++) {
            if (k > 0 && strcmp(v[k].session, v[k - 1].session) != 0)
                n++;
            ids[v[k].row] = n;
        }
        n++;
    }
    free(v);
    return n;
}

/* ---- the replay --------------------------------------------------------------------- */

void kv_cluster_result_free(kv_cluster_result *c)
{
    if (!c)
        return;
    free(c->replica);
    free(c->replica_of);
    free(c->predicted_tokens);
    free(c);
}

static void release_driver(driver *d)
{
    for (uint32_t r = 0; d->eng && r < d->R; r++)
        kv_engine_destroy(d->eng[r]);
    free(d->eng);
    kv_router_destroy(d->router);
    kv_hasher_destroy(d->hasher);
    free(d->heap.e);
    free(d->session_of);
    free(d->sig);
    free(d->pools);
    free(d->cur_phys);
    free(d->cur_log);
    kv_arrivals_destroy(d->arr);
}

static int setup_cluster(driver *d, const kv_engine_config *cfg,
                         const kv_router_config *router, kv_diag *diag);

/* Everything before the first event: checks, the engines, the router.  0 or an error
 * (the driver is released by the caller). */
static int setup(driver *d, const kv_engine_config *cfg, const kv_router_config *router,
                 const char *model_name, const char *dtype_name, kv_diag *diag)
{
    kv_run_result *res = d->res;
    const kv_trace *trace = d->trace;
    if (d->R == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{replicas} must be at least 1");
    int rc = kv_router_config_check(router, diag);
    if (rc != 0)
        return rc;
    if (router->policy == KV_ROUTER_SESSION && trace->format != KV_TRACE_KVSIM_JSONL &&
        trace->format != KV_TRACE_KVSIM_CSV)
        return kv_diag_set(diag, -KV_EINVAL,
                           "'%s' is a %s trace, which has no 'session' field: {router} session "
                           "needs a kvsim JSONL or CSV trace",
                           trace->path ? trace->path : "(trace)",
                           kv_trace_format_name(trace->format));
    if (cfg->block_size == 0)
        return kv_diag_set(diag, -KV_EINVAL, "block size and {sample_every} must be ≥ 1");
    if ((rc = kv_replay_hasher(&d->hasher, cfg, trace, model_name, dtype_name,
                               d->shared_prefix, diag)) != 0)
        return rc; /* --hash-algo, plan's chain store and the chain memo, as kv_replay */
    res->n = trace->n;
    res->reqs = kv_xcalloc(trace->n ? trace->n : 1, sizeof *res->reqs);
    kv_engine_config ec = *cfg;
    ec.reqs = res->reqs;
    ec.n_reqs = res->n;
    ec.sched.attach_at_head = d->R == 1;
    ec.sched.content_tb = trace->trace_block_size;
    ec.sched.content_shared_prefix = d->shared_prefix;
    d->arr = kv_arrivals_create(trace, res->reqs, &cfg->frontend, cfg->max_concurrency);
    if (kv_arrivals_closed_loop(d->arr)) {
        ec.sched.on_end = kv_arrivals_ended;
        ec.sched.end_ctx = d->arr;
    }
    if (d->hooks) {
        ec.sample_every = d->hooks->sample_every ? d->hooks->sample_every : 1;
        ec.on_sample = d->hooks->on_sample;
        ec.on_step_end = d->hooks->on_step_end;
        ec.ctx = d->hooks->ctx;
    }
    d->eng = kv_xcalloc(d->R, sizeof *d->eng);
    for (uint32_t r = 0; r < d->R; r++) {
        ec.replica = r;
        if ((rc = kv_engine_create(&d->eng[r], &ec, d->hasher, diag)) != 0)
            return rc;
    }
    d->heap.e = kv_xmalloc((size_t)d->R * sizeof *d->heap.e);
    for (size_t i = 0; i < trace->n; i++) {
        kv_req_init(&res->reqs[i], &trace->reqs[i]);
        if (trace->reqs[i].arrival_ns > res->last_arrival_ns)
            res->last_arrival_ns = trace->reqs[i].arrival_ns;
    }
    return d->R == 1 ? 0 : setup_cluster(d, cfg, router, diag);
}

/* R > 1: the cluster result, the sessions, the router and its signals. */
static int setup_cluster(driver *d, const kv_engine_config *cfg,
                         const kv_router_config *router, kv_diag *diag)
{
    kv_run_result *res = d->res;
    const kv_trace *trace = d->trace;
    int rc;
    kv_cluster_result *cl = kv_xcalloc(1, sizeof *cl);
    res->cluster = d->cl = cl;
    cl->replicas = d->R;
    cl->router = *router;
    cl->replica = kv_xcalloc(d->R, sizeof *cl->replica);
    cl->replica_of = kv_xmalloc((trace->n ? trace->n : 1) * sizeof *cl->replica_of);
    for (size_t i = 0; i < trace->n; i++)
        cl->replica_of[i] = KV_CLUSTER_NOT_ROUTED;
    cl->predicted_tokens = kv_xcalloc(trace->n ? trace->n : 1, sizeof *cl->predicted_tokens);
    uint32_t n_sessions = 0;
    if (router->policy == KV_ROUTER_SESSION)
        d->session_of = kv_xmalloc((trace->n ? trace->n : 1) * sizeof *d->session_of);
    n_sessions = number_sessions(trace, d->session_of, &cl->session_rows);
    uint32_t usable = cfg->num_blocks - 1;
    if ((rc = kv_router_create(&d->router, router, d->R, usable, n_sessions, diag)) != 0)
        return rc;
    d->chain = router->view == KV_ROUTER_APPROX || cfg->prefix_caching;
    d->refresh_ns = router->refresh_s > 0 ? llround(router->refresh_s * 1e9) : 0;
    d->sig = kv_xcalloc(d->R, sizeof *d->sig);
    d->pools = kv_xmalloc(d->R * sizeof *d->pools);
    for (uint32_t r = 0; r < d->R; r++)
        d->pools[r] = kv_engine_pool(d->eng[r]);
    d->cur_phys = kv_xcalloc(d->R, sizeof *d->cur_phys);
    d->cur_log = kv_xcalloc(d->R, sizeof *d->cur_log);
    return 0;
}

int kv_cluster_replay(const kv_engine_config *cfg, uint32_t replicas,
                      const kv_router_config *router, const kv_trace *trace,
                      const char *model_name, const char *dtype_name, uint32_t shared_prefix,
                      const kv_sim_hooks *hooks, kv_run_result *res, kv_diag *diag)
{
    memset(res, 0, sizeof *res);
    driver d;
    memset(&d, 0, sizeof d);
    d.cfg = cfg;
    d.R = replicas;
    d.res = res;
    d.trace = trace;
    d.shared_prefix = shared_prefix;
    d.hooks = hooks;
    int rc = setup(&d, cfg, router, model_name, dtype_name, diag);
    if (rc != 0) {
        /* nothing has run: no request holds blocks, so the engines can go */
        release_driver(&d);
        kv_run_result_release(res);
        return rc;
    }
    rc = loop(&d, diag);
    if (rc != 0)
        stop_run(&d);
    res->stop = rc;
    res->sent_specs = kv_arrivals_finish(d.arr, res->reqs, res->n);
    collect(&d);
    for (int k = KV_REJECT_CAPACITY; k <= KV_REJECT_BATCH; k++)
        res->rejected += res->stats.sched.rejected[k];
    res->sim_time_ns = res->stats.last_step_end > res->last_arrival_ns ? res->stats.last_step_end
                                                                       : res->last_arrival_ns;
    progress(&d, res->sim_time_ns);
    res->blocks_hashed = kv_hasher_blocks_hashed(d.hasher);
    res->hashed_ahead = kv_hasher_is_ahead(d.hasher);
    release_driver(&d);
    return rc;
}
