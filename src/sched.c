/* sched: the continuous-batching scheduler, one pass per engine step (DESIGN §6).
 *
 * A pass, with budget = max_batched_tokens:
 *
 *  1. Running requests in list order, while budget > 0: num_new = min(remaining, budget)
 *     (1 when decoding), fixed before any retry.  allocate_slots; on failure preempt a
 *     victim and retry with the same num_new.  FCFS takes the last running request;
 *     priority takes max (priority, arrival), ties to the first in running order, and a
 *     victim already scheduled this step hands its budget back.  A request that is its
 *     own victim is not scheduled and ends the running loop.  Preemption = recompute:
 *     free the table (R7), num_computed = 0, back to the waiting queue (FCFS policy: at
 *     the FRONT; priority policy: at its place by key).
 *  2. Waiting admission, only if this pass preempted nothing, in queue order, while
 *     budget > 0 and running < max_seqs: look up hits; num_new = num_tokens − hit_tokens;
 *     without chunked prefill stop if it exceeds the budget (not a deferral), with it cap
 *     at the budget.  Then the gates on need (§5 need for all known tokens, or for the
 *     chunk with --no-admit-full-prompt): need > num_free is a plain pool-full wait;
 *     num_free − need < W is one watermark deferral.  Either way the head blocks the
 *     queue.  Under the vllm watermark rule the W part applies only while some request
 *     runs (vLLM's has_scheduled_reqs=bool(self.running)).
 *
 * Rejection happens when a request joins the waiting queue (arrival, and again after a
 * preemption), checked in the order exceeds_capacity, exceeds_watermark (v0 rule only),
 * exceeds_batch.  With those rules a waiting head always fits an empty pool, so work
 * always progresses.
 *
 * Async scheduling (§6.6, vLLM's AsyncScheduler): placeholders count a request's tokens
 * in flight, so remaining = known + placeholders − computed; a running request whose
 * last token is in flight is skipped (vLLM's "avoid scheduling an extra step"); at the
 * end of its pass a scheduled request's num_computed advances and, if its step samples,
 * it gains a placeholder.  Its step end (one pass later) turns the placeholder into a
 * token, hashes the blocks the known tokens fill and finishes the request.
 *
 * Data structures: running is an array in admission order (vLLM's list: FCFS victims pop
 * from its end; finished requests are marked and compacted once per step so a step with
 * many finishes stays O(running)); waiting is src/waitq.c (a deque, or a heap under the
 * priority policy).
 *
 * Step end (kv_sched_step_end) applies the step's work in scheduling order: computed
 * tokens advance, requests that computed all their known tokens sample one, and those
 * reaching output_len finish and free their blocks, so frees reach the free queue in
 * scheduling order (DESIGN §6.5).
 *
 * Invariants (kv_sched_check walks them): a running entry is RUNNING (or FINISHED until
 * the next pass compacts it out) and holds ⌈(computed + step_new)/b⌉ blocks; a waiting
 * entry is WAITING, has computed nothing, holds no block and no placeholder;
 * n_running − finished pending ≤ max_seqs; the effective-tokens counter (kept as
 * requests are scheduled, preempted and finished, so a written row reads it in O(1))
 * equals Σ computed + step_new over the live running entries.
 *
 * Out of scope: time and the event loop (engine), block tables (kvcache).
 */
#include "kvsim/sched.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/error.h"
#include "kvsim/mem.h"
#include "sched_internal.h"

struct kv_sched {
    kv_sched_config cfg;
    kv_cache *cache;
    kv_pool *pool;
    uint32_t block_size;
    uint32_t usable;          /* N − 1 */
    uint32_t wm_blocks;       /* W */
    kv_preempt_policy victim; /* the victim rule in effect */
    kv_req **running;         /* admission order; may hold finished entries until compacted */
    size_t n_running, cap_running;
    uint32_t n_finished_pending; /* finished but not yet compacted out of running */
    uint64_t effective;          /* Σ num_computed + step_new over the live running entries */
    kv__waitq wq;
    uint64_t last_deferral_step; /* step counter value of the last deferral, for _steps */
    uint64_t pass;               /* passes run so far */
    kv_sched_counters counters;
};

int kv_preempt_parse(const char *s, kv_preempt_policy *out)
{
    if (strcmp(s, "fcfs") == 0)
        *out = KV_PREEMPT_FCFS;
    else if (strcmp(s, "priority") == 0)
        *out = KV_PREEMPT_PRIORITY;
    else
        return -KV_EINVAL;
    return 0;
}

const char *kv_preempt_name(kv_preempt_policy p)
{
    return p == KV_PREEMPT_PRIORITY ? "priority" : "fcfs";
}

int kv_watermark_rule_parse(const char *s, kv_watermark_rule *out, kv_diag *diag)
{
    if (strcmp(s, "vllm") == 0)
        *out = KV_WATERMARK_VLLM;
    else if (strcmp(s, "v0") == 0)
        *out = KV_WATERMARK_V0;
    else
        return kv_diag_set(diag, -KV_EINVAL, "{watermark_rule}: '%s' is not vllm or v0", s);
    return 0;
}

const char *kv_watermark_rule_name(kv_watermark_rule r)
{
    return r == KV_WATERMARK_V0 ? "v0" : "vllm";
}

int kv_sched_policy_parse(const char *s, kv_sched_policy *out, kv_diag *diag)
{
    if (strcmp(s, "fcfs") == 0)
        *out = KV_POLICY_FCFS;
    else if (strcmp(s, "priority") == 0)
        *out = KV_POLICY_PRIORITY;
    else
        return kv_diag_set(diag, -KV_EINVAL, "{policy}: '%s' is not fcfs or priority", s);
    return 0;
}

const char *kv_sched_policy_name(kv_sched_policy p)
{
    return p == KV_POLICY_PRIORITY ? "priority" : "fcfs";
}

kv_preempt_policy kv_sched_victim_rule(const kv_sched_config *cfg)
{
    return cfg->policy == KV_POLICY_PRIORITY ? KV_PREEMPT_PRIORITY : cfg->preempt;
}

const char *kv_req_status_name(kv_req_status s)
{
    static const char *names[] = {"pending",  "waiting",  "running",
                                  "finished", "rejected", "unfinished"};
    return names[s];
}

const char *kv_reject_reason_name(kv_reject_reason r)
{
    static const char *names[] = {"", "exceeds_capacity", "exceeds_watermark", "exceeds_batch"};
    return names[r];
}

/* ---- a request's own lifecycle ------------------------------------------------------ */

void kv_req_init(kv_req *r, const kv_request_spec *spec)
{
    memset(r, 0, sizeof *r);
    r->spec = spec;
    r->status = KV_REQ_PENDING;
    r->first_scheduled_ns = r->first_token_ns = r->finish_ns = -1;
}

static void attach(kv_req *r, const kv_content *c)
{
    if (!r->seq)
        r->seq = kv_seq_create(c, r->spec->prompt_len + r->spec->output_len - 1);
}

void kv_req_attach(kv_req *r, const kv_content *c)
{
    assert(r->status == KV_REQ_PENDING);
    attach(r, c);
}

/* attach_at_head: the queue's head gets its cache state before its first lookup. */
static void attach_head(const kv_sched *s, kv_req *r)
{
    if (r->seq)
        return;
    assert(s->cfg.attach_at_head && !r->admitted);
    kv_content c;
    kv_content_from_spec(&c, r->spec, s->cfg.content_tb, s->cfg.content_shared_prefix);
    attach(r, &c);
}

/* The request ends (finished, rejected, unfinished): its table is already freed.  A token
 * still in flight for it (async: rejected on re-joining) will be dropped. */
static void req_end(kv_req *r, kv_req_status status)
{
    kv_seq_destroy(r->seq);
    r->seq = NULL;
    r->status = status;
    r->placeholders = 0;
}

void kv_req_abandon(kv_req *r)
{
    assert(r->status == KV_REQ_PENDING);
    req_end(r, KV_REQ_UNFINISHED);
}

const kv_block_id *kv_req_table(const kv_req *r, uint32_t *len)
{
    *len = r->seq ? kv_seq_len(r->seq) : 0;
    return *len ? kv_seq_table(r->seq) : NULL;
}

int kv_sched_create(kv_sched **out, const kv_sched_config *cfg, kv_cache *cache, kv_diag *diag)
{
    *out = NULL;
    if (cfg->max_batched_tokens == 0 || cfg->max_seqs == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{max_batched_tokens} and {max_seqs} must be ≥ 1");
    if (!(cfg->watermark >= 0) || !(cfg->watermark < 1))
        return kv_diag_set(diag, -KV_EINVAL, "{watermark} %g is not in [0, 1)", cfg->watermark);
    if ((unsigned)cfg->watermark_rule > KV_WATERMARK_V0)
        return kv_diag_set(diag, -KV_EINVAL, "{watermark_rule} %d is not vllm or v0",
                           (int)cfg->watermark_rule);
    if ((unsigned)cfg->policy > KV_POLICY_PRIORITY || (unsigned)cfg->preempt > KV_PREEMPT_PRIORITY)
        return kv_diag_set(diag, -KV_EINVAL, "{policy} %d or {preempt} %d is not fcfs or priority",
                           (int)cfg->policy, (int)cfg->preempt);
    kv_sched *s = kv_xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    s->cache = cache;
    s->pool = kv_cache_pool(cache);
    s->block_size = kv_cache_block_size(cache);
    s->usable = kv_pool_usable(s->pool);
    /* floor() of an IEEE double product: vLLM's int(watermark · num_blocks) counts the null
     * block (kv_cache_manager.py@bf292b5f:163); v0 counts the usable blocks (§6.2). */
    uint32_t base = cfg->watermark_rule == KV_WATERMARK_V0 ? s->usable : s->usable + 1;
    s->wm_blocks = (uint32_t)(cfg->watermark * (double)base);
    s->victim = kv_sched_victim_rule(cfg);
    kv__waitq_init(&s->wq, cfg->policy);
    s->last_deferral_step = UINT64_MAX;
    *out = s;
    return 0;
}

void kv_sched_destroy(kv_sched *s)
{
    if (!s)
        return;
    assert(s->wq.len == 0 && s->n_running == s->n_finished_pending);
    free(s->running);
    kv__waitq_release(&s->wq);
    free(s);
}

uint32_t kv_sched_watermark_blocks(const kv_sched *s)
{
    return s->wm_blocks;
}

/* ---- running list ------------------------------------------------------------------- */

static void running_append(kv_sched *s, kv_req *r)
{
    assert(r->status == KV_REQ_RUNNING);
    kv_grow((void **)&s->running, &s->cap_running, s->n_running + 1, sizeof *s->running);
    s->running[s->n_running++] = r;
}

static void running_remove_at(kv_sched *s, size_t i)
{
    assert(i < s->n_running && s->running[i]->status == KV_REQ_RUNNING);
    memmove(&s->running[i], &s->running[i + 1], (s->n_running - i - 1) * sizeof *s->running);
    s->n_running--;
}

/* Drop finished entries, keeping order. */
static void running_compact(kv_sched *s)
{
    if (!s->n_finished_pending)
        return;
    size_t k = 0;
    for (size_t i = 0; i < s->n_running; i++)
        if (s->running[i]->status == KV_REQ_RUNNING)
            s->running[k++] = s->running[i];
    s->n_running = k;
    s->n_finished_pending = 0;
}

/* ---- joining the waiting queue ------------------------------------------------------ */

static uint64_t cdiv(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static kv_reject_reason join_check(const kv_sched *s, const kv_req *r)
{
    uint64_t whole = (uint64_t)r->spec->prompt_len + r->spec->output_len - 1;
    if (cdiv(whole, s->block_size) > s->usable)
        return KV_REJECT_CAPACITY;
    if (s->cfg.watermark_rule == KV_WATERMARK_V0 &&
        cdiv(kv_req_num_tokens(r), s->block_size) > (uint64_t)s->usable - s->wm_blocks)
        return KV_REJECT_WATERMARK; /* vllm rule: an idle engine admits any head */
    if (!s->cfg.chunked_prefill && kv_req_num_tokens(r) > s->cfg.max_batched_tokens)
        return KV_REJECT_BATCH;
    return KV_REJECT_NONE;
}

/* A request finished or was rejected: its closed-loop client may send its next one. */
static void ended(const kv_sched *s, const kv_req *r)
{
    if (s->cfg.on_end)
        s->cfg.on_end(s->cfg.end_ctx, r);
}

static bool join(kv_sched *s, kv_req *r, bool front)
{
    kv_reject_reason why = join_check(s, r);
    if (why != KV_REJECT_NONE) {
        r->reject = (uint8_t)why;
        s->counters.rejected[why]++;
        req_end(r, KV_REQ_REJECTED);
        ended(s, r);
        return false;
    }
    r->status = KV_REQ_WAITING;
    assert(r->num_computed == 0);
    kv__waitq_push(&s->wq, r, front);
    return true;
}

bool kv_sched_arrive(kv_sched *s, kv_req *r)
{
    assert(r->status == KV_REQ_PENDING && (r->seq || s->cfg.attach_at_head) &&
           "kv_sched_arrive: attach first");
    return join(s, r, false);
}

/* ---- one pass ----------------------------------------------------------------------- */

static __attribute__((noinline)) void batch_grow(kv_batch *b)
{
    size_t cap = b->cap, cap2 = b->cap, cap3 = b->cap;
    kv_grow((void **)&b->reqs, &cap, (size_t)b->n + 1, sizeof *b->reqs);
    kv_grow((void **)&b->num_new, &cap2, cap, sizeof *b->num_new);
    kv_grow((void **)&b->samples, &cap3, cap, sizeof *b->samples);
    b->cap = (uint32_t)cap;
}

/* Once per scheduled request and step: inline, its rare growth out of line. */
static inline __attribute__((always_inline)) void batch_add(kv_batch *b, kv_req *r,
                                                            uint32_t num_new)
{
    if (b->n == b->cap)
        batch_grow(b);
    b->num_new[b->n] = num_new;
    b->samples[b->n] = false;
    b->reqs[b->n++] = r;
    r->step_new = num_new;
    uint64_t c = r->num_computed, n = num_new;
    b->tokens += n;
    b->kv_tokens_streamed += c + n;
    /* Scheduled token i (1-based) attends to c + i positions. */
    b->kv_tokens_read += n * c + n * (n + 1) / 2;
}

static void batch_remove(kv_batch *b, kv_req *r)
{
    uint32_t i = 0;
    while (i < b->n && b->reqs[i] != r)
        i++;
    assert(i < b->n);
    uint64_t c = r->num_computed, n = r->step_new;
    b->tokens -= n;
    b->kv_tokens_streamed -= c + n;
    b->kv_tokens_read -= n * c + n * (n + 1) / 2;
    memmove(&b->reqs[i], &b->reqs[i + 1], (b->n - i - 1) * sizeof *b->reqs);
    memmove(&b->num_new[i], &b->num_new[i + 1], (b->n - i - 1) * sizeof *b->num_new);
    b->n--;
    r->step_new = 0;
}

void kv_batch_release(kv_batch *b)
{
    free(b->reqs);
    free(b->num_new);
    free(b->samples);
    memset(b, 0, sizeof *b);
}

static size_t pick_victim(const kv_sched *s)
{
    if (s->victim == KV_PREEMPT_FCFS)
        return s->n_running - 1;
    size_t best = 0;
    for (size_t i = 1; i < s->n_running; i++) {
        const kv_request_spec *a = s->running[i]->spec, *m = s->running[best]->spec;
        if (a->priority > m->priority ||
            (a->priority == m->priority && a->arrival_ns > m->arrival_ns))
            best = i;
    }
    return best;
}

static void preempt(kv_sched *s, kv_req *v)
{
    /* An async victim keeps its placeholder: its in-flight token still arrives at its
     * step end, and the request waits with one more known token (async_scheduler.py). */
    kv_cache_free(s->cache, v->seq);
    v->num_computed = 0;
    v->step_new = 0;
    v->preemptions++;
    s->counters.preemptions++;
    join(s, v, true);
}

/* r (running[*i]) did not fit: preempt victims, each time retrying r's allocation of
 * num_new slots.  Returns whether r fits now; false when r was its own victim.  The budget
 * and the loop index follow the victims taken out of the batch.  Out of line: the running
 * loop's usual iteration stays free of it. */
static __attribute__((noinline)) bool make_room(kv_sched *s, kv_batch *batch, kv_req *r,
                                                uint32_t num_new, uint32_t *budget, size_t *i)
{
    for (;;) {
        size_t v = pick_victim(s);
        kv_req *victim = s->running[v];
        s->effective -= (uint64_t)victim->num_computed + victim->step_new;
        if (victim->step_new > 0) { /* already scheduled this step: its budget comes back */
            *budget += victim->step_new;
            batch_remove(batch, victim);
            /* vLLM moves its index back only for a victim it had scheduled, so a skipped
             * (async) victim before r makes the loop skip r's successor. */
            (*i)--;
        }
        running_remove_at(s, v);
        preempt(s, victim);
        batch->preempted++;
        if (victim == r)
            return false;
        if (kv_cache_allocate(s->cache, r->seq, r->num_computed, NULL, num_new,
                              kv_req_num_tokens(r)))
            return true;
    }
}

/* Step 1: the running loop.  Returns the budget left. */
static uint32_t schedule_running(kv_sched *s, kv_batch *batch, uint32_t budget)
{
    size_t i = 0;
    while (i < s->n_running && budget > 0) {
        kv_req *r = s->running[i];
        uint32_t tokens = kv_req_num_tokens(r);
        /* Async: its last token is in flight, so no extra step (scheduler.py@bf292b5f:442). */
        bool last_in_flight =
            r->placeholders > 0 && (uint64_t)r->num_computed + 2 - r->placeholders >=
                                       (uint64_t)r->spec->prompt_len + r->spec->output_len;
        if (last_in_flight) {
            i++;
            continue;
        }
        uint32_t remaining = tokens + r->placeholders - r->num_computed;
        uint32_t num_new = remaining < budget ? remaining : budget;
        assert(num_new > 0);
        if (!kv_cache_allocate(s->cache, r->seq, r->num_computed, NULL, num_new, tokens) &&
            !make_room(s, batch, r, num_new, &budget, &i))
            break;
        batch_add(batch, r, num_new);
        s->effective += num_new;
        budget -= num_new;
        i++;
    }
    return budget;
}

/* Step 2: waiting admission. */
static void schedule_waiting(kv_sched *s, kv_batch *batch, uint32_t budget, int64_t now_ns)
{
    uint32_t b = s->block_size;
    while (s->wq.len > 0 && budget > 0 && s->n_running < s->cfg.max_seqs) {
        kv_req *r = kv__waitq_peek(&s->wq);
        uint32_t tokens = kv_req_num_tokens(r);
        kv_hits hits;
        attach_head(s, r);
        kv_cache_lookup(s->cache, r->seq, tokens, &hits);
        uint32_t hit_tokens = hits.n * b;
        uint32_t num_new = tokens - hit_tokens;
        if (!s->cfg.chunked_prefill && num_new > budget)
            break; /* the budget stops the head: not a deferral */
        if (num_new > budget)
            num_new = budget;
        uint32_t gate_tokens = s->cfg.admit_full_prompt ? tokens - hit_tokens : num_new;
        uint32_t need = kv_cache_need(s->cache, r->seq, 0, &hits, gate_tokens);
        uint32_t num_free = kv_pool_num_free(s->pool);
        if (need > num_free)
            break; /* plain pool-full wait */
        /* vllm rule: the watermark applies only while some request runs
         * (kv_cache_manager.py@bf292b5f:363-370, scheduler.py:905
         * has_scheduled_reqs=bool(self.running)). */
        bool gated = s->cfg.watermark_rule == KV_WATERMARK_V0 || s->n_running > 0;
        if (gated && num_free - need < s->wm_blocks) {
            s->counters.deferrals++;
            if (s->last_deferral_step != s->pass) {
                s->counters.deferral_steps++;
                s->last_deferral_step = s->pass;
            }
            if (!r->deferred_once) {
                r->deferred_once = true;
                s->counters.deferred_requests++;
            }
            break;
        }
        bool ok = kv_cache_allocate(s->cache, r->seq, 0, &hits, num_new, tokens);
        assert(ok && "the gate guarantees the chunk fits");
        (void)ok;
        kv__waitq_pop(&s->wq);
        r->status = KV_REQ_RUNNING;
        r->num_computed = hit_tokens;
        kv_cache_record_admission(s->cache, tokens, hit_tokens, r->preemptions > 0);
        if (r->first_token_ns < 0)
            r->num_cached_tokens = hit_tokens; /* PrefillStats.set until the first token */
        if (!r->admitted) {
            r->admitted = true;
            r->hit_tokens = hit_tokens;
            r->first_scheduled_ns = now_ns;
        }
        s->counters.admitted++;
        running_append(s, r);
        batch_add(batch, r, num_new);
        s->effective += (uint64_t)hit_tokens + num_new;
        budget -= num_new;
    }
}

void kv_sched_step(kv_sched *s, int64_t now_ns, kv_batch *batch)
{
    running_compact(s);
    batch->n = 0;
    batch->tokens = batch->kv_tokens_streamed = batch->kv_tokens_read = 0;
    batch->preempted = 0;
    s->pass++;
    uint32_t budget = schedule_running(s, batch, s->cfg.max_batched_tokens);
    if (batch->preempted == 0)
        schedule_waiting(s, batch, budget, now_ns);
    if (!s->cfg.async_scheduling)
        return;
    /* vLLM's _update_after_schedule (scheduler.py) and AsyncScheduler's: computed tokens
     * advance now; a request whose step completes its known tokens plus placeholders is
     * no prefill chunk, samples, and gets a placeholder for that token.  (Without draft
     * tokens a request with a placeholder is decoding and always completes, so the test
     * equals computed ≥ known; the form is vLLM's.) */
    kv_req **reqs = batch->reqs;
    bool *samples = batch->samples;
    for (uint32_t i = 0, n = batch->n; i < n; i++) {
        kv_req *r = reqs[i];
        uint32_t computed = r->num_computed + r->step_new;
        bool sample = computed >= kv_req_num_tokens(r) + r->placeholders;
        r->num_computed = computed;
        r->step_new = 0;
        r->placeholders += sample;
        samples[i] = sample;
    }
}

/* A finished request leaves the running list (compacted at the next pass) and frees its
 * blocks (R7). */
static void finish(kv_sched *s, kv_req *r, int64_t now_ns)
{
    assert(r->status == KV_REQ_RUNNING);
    s->effective -= (uint64_t)r->num_computed + r->step_new;
    r->finish_ns = now_ns;
    kv_cache_free(s->cache, r->seq);
    req_end(r, KV_REQ_FINISHED);
    s->n_finished_pending++;
    s->counters.finished++;
    s->counters.output_tokens += r->spec->output_len;
    ended(s, r);
}

/* Async: a preempted request whose last token was in flight finishes in the queue (vLLM's
 * stopped_preempted_reqs); its blocks went back when it was preempted. */
static void finish_waiting(kv_sched *s, kv_req *r, int64_t now_ns)
{
    bool queued = kv__waitq_remove(&s->wq, r);
    assert(queued && kv_seq_len(r->seq) == 0);
    (void)queued;
    r->finish_ns = now_ns;
    req_end(r, KV_REQ_FINISHED);
    s->counters.finished++;
    s->counters.output_tokens += r->spec->output_len;
    ended(s, r);
}

/* Async step end: AsyncScheduler._update_request_with_output, in scheduling order.  It
 * stays a loop of its own beside kv_sched_step_end's sync one: the two mirror different
 * vLLM functions (placeholders, the deferred cache commit and finishing in the queue exist
 * only here), and a shared loop would need a branch on every line. */
static void step_end_async(kv_sched *s, kv_batch *batch, int64_t now_ns)
{
    for (uint32_t i = 0; i < batch->n; i++) {
        kv_req *r = batch->reqs[i];
        if (!batch->samples[i] || (r->status != KV_REQ_RUNNING && r->status != KV_REQ_WAITING))
            continue; /* a prefill chunk, or a request rejected on re-joining */
        assert(r->placeholders > 0);
        r->num_generated++;
        r->placeholders--;
        if (r->first_token_ns < 0)
            r->first_token_ns = now_ns;
        if (r->status == KV_REQ_RUNNING) /* cache_blocks(request, computed − placeholders) */
            kv_cache_commit(s->cache, r->seq, r->num_computed - r->placeholders);
        if (r->num_generated == r->spec->output_len) {
            if (r->status == KV_REQ_RUNNING)
                finish(s, r, now_ns);
            else
                finish_waiting(s, r, now_ns);
        }
    }
}

void kv_sched_step_end(kv_sched *s, kv_batch *batch, int64_t now_ns)
{
    if (s->cfg.async_scheduling) {
        step_end_async(s, batch, now_ns);
        return;
    }
    for (uint32_t i = 0; i < batch->n; i++) {
        kv_req *r = batch->reqs[i];
        r->num_computed += r->step_new;
        r->step_new = 0;
        if (r->num_computed != kv_req_num_tokens(r))
            continue; /* a prefill chunk: no token yet */
        r->num_generated++;
        if (r->first_token_ns < 0)
            r->first_token_ns = now_ns;
        if (r->num_generated == r->spec->output_len)
            finish(s, r, now_ns);
    }
}

uint32_t kv_sched_abandon(kv_sched *s)
{
    running_compact(s);
    uint32_t n = 0;
    for (size_t i = s->n_running; i-- > 0;) {
        kv_req *r = s->running[i];
        kv_cache_free(s->cache, r->seq);
        req_end(r, KV_REQ_UNFINISHED);
        n++;
    }
    s->n_running = 0;
    s->effective = 0;
    while (s->wq.len) {
        kv_req *r = kv__waitq_peek(&s->wq);
        kv__waitq_pop(&s->wq);
        req_end(r, KV_REQ_UNFINISHED);
        n++;
    }
    return n;
}

uint32_t kv_sched_num_running(const kv_sched *s)
{
    return (uint32_t)(s->n_running - s->n_finished_pending);
}

uint32_t kv_sched_num_waiting(const kv_sched *s)
{
    return (uint32_t)s->wq.len;
}

uint64_t kv_sched_logical_blocks(const kv_sched *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n_running; i++)
        if (s->running[i]->status == KV_REQ_RUNNING)
            n += kv_seq_len(s->running[i]->seq);
    return n;
}

/* The walk kv_sched_effective_tokens' counter must equal (kv_sched_check). */
static uint64_t effective_walk(const kv_sched *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n_running; i++)
        if (s->running[i]->status == KV_REQ_RUNNING)
            n += s->running[i]->num_computed + s->running[i]->step_new;
    return n;
}

uint64_t kv_sched_effective_tokens(const kv_sched *s)
{
    return s->effective;
}

const kv_sched_counters *kv_sched_counters_get(const kv_sched *s)
{
    return &s->counters;
}

/* ---- invariants --------------------------------------------------------------------- */

static int check_running(const kv_sched *s, kv_seq **seqs, size_t *n_seqs, kv_diag *d)
{
    uint32_t live = 0, b = s->block_size;
    for (size_t i = 0; i < s->n_running; i++) {
        const kv_req *r = s->running[i];
        if (r->status == KV_REQ_FINISHED)
            continue;
        if (r->status != KV_REQ_RUNNING || !r->seq)
            return kv_diag_set(d, -KV_EINVARIANT, "sched: running entry %zu is %s", i,
                               kv_req_status_name(r->status));
        uint64_t held = (uint64_t)r->num_computed + r->step_new;
        if (held > (uint64_t)kv_req_num_tokens(r) + r->placeholders)
            return kv_diag_set(d, -KV_EINVARIANT,
                               "sched: row %u computed %llu of %u known tokens and %u in flight",
                               r->spec->row, (unsigned long long)held, kv_req_num_tokens(r),
                               r->placeholders);
        if (kv_seq_len(r->seq) != (held + b - 1) / b)
            return kv_diag_set(d, -KV_EINVARIANT,
                               "sched: row %u holds %u blocks for %llu tokens (block size %u)",
                               r->spec->row, kv_seq_len(r->seq), (unsigned long long)held, b);
        seqs[(*n_seqs)++] = r->seq;
        live++;
    }
    if (live != kv_sched_num_running(s) || live > s->cfg.max_seqs)
        return kv_diag_set(d, -KV_EINVARIANT, "sched: %u live running entries, counter %u, cap %u",
                           live, kv_sched_num_running(s), s->cfg.max_seqs);
    if (effective_walk(s) != s->effective)
        return kv_diag_set(d, -KV_EINVARIANT,
                           "sched: running entries hold %llu computed and scheduled tokens, "
                           "counter %llu",
                           (unsigned long long)effective_walk(s), (unsigned long long)s->effective);
    return 0;
}

static int check_waiting(const kv_sched *s, kv_diag *d)
{
    for (size_t i = 0; i < s->wq.len; i++) {
        const kv_req *r = kv__waitq_at(&s->wq, i);
        /* Without cache state only under attach_at_head, and only until its first admission. */
        bool stateless = !r->seq && (!s->cfg.attach_at_head || r->admitted);
        if (r->status != KV_REQ_WAITING || r->num_computed != 0 || r->step_new != 0 ||
            stateless || (r->seq && kv_seq_len(r->seq) != 0) || r->placeholders != 0)
            return kv_diag_set(d, -KV_EINVARIANT,
                               "sched: waiting entry %zu (row %u) is %s with %u computed tokens, "
                               "%u blocks and %u in flight",
                               i, r->spec->row, kv_req_status_name(r->status), r->num_computed,
                               r->seq ? kv_seq_len(r->seq) : 0, r->placeholders);
        if (s->wq.policy == KV_POLICY_PRIORITY && i > 0 &&
            kv__req_before(r, kv__waitq_at(&s->wq, (i - 1) / 2)))
            return kv_diag_set(d, -KV_EINVARIANT,
                               "sched: waiting entry %zu (row %u) comes before its heap parent", i,
                               r->spec->row);
    }
    return 0;
}

int kv_sched_check(const kv_sched *s, kv_diag *diag)
{
    kv_seq **seqs = kv_xmalloc((s->n_running ? s->n_running : 1) * sizeof *seqs);
    size_t n = 0;
    int rc = check_running(s, seqs, &n, diag);
    if (rc == 0)
        rc = check_waiting(s, diag);
    if (rc == 0)
        rc = kv_cache_check(s->cache, seqs, n, diag);
    free(seqs);
    return rc;
}
