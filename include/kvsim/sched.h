/* sched: one vLLM-v1-style scheduling pass per engine step (DESIGN §6.1–§6.6), and the
 * owner of every request's lifecycle.
 *
 * Running requests first (preempting on allocation failure), then waiting admission
 * (only in steps that preempted nothing) under the token budget, max_seqs, the
 * full-prompt gate and the watermark.  Rejections happen when a request joins the waiting
 * queue.  At step end sched advances the scheduled requests, samples their tokens and
 * finishes them (kv_sched_step_end).  A request's state changes only here: the engine
 * owns time and asks; kvcache owns the block table behind the opaque kv_seq.
 *
 * With async scheduling (vLLM's AsyncScheduler, DESIGN §6.6) the engine runs the pass of
 * step k+1 before the end of step k: a pass advances num_computed at once and gives every
 * request whose step will sample an output placeholder (slots are allocated for it); the
 * end of step k then appends the sampled tokens, hashes the blocks they filled and
 * finishes requests, one step late.
 *
 * Lifecycle:  PENDING ─attach+arrive─► WAITING ─admit─► RUNNING ─step end─► FINISHED
 *                          │               ▲               │
 *                          ▼               └───preempt─────┘ (may be REJECTED on re-joining)
 *                       REJECTED        any live state ─abandon─► UNFINISHED
 * (async only: a request preempted while its last token was in flight finishes WAITING.)
 */
#ifndef KVSIM_SCHED_H
#define KVSIM_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "kvsim/error.h"
#include "kvsim/kvcache.h"
#include "kvsim/trace.h"

typedef enum kv_preempt_policy {
    KV_PREEMPT_FCFS = 0, /* the last running request */
    KV_PREEMPT_PRIORITY, /* max (priority, arrival), ties to the first in running order */
} kv_preempt_policy;

int kv_preempt_parse(const char *s, kv_preempt_policy *out); /* "fcfs" / "priority" */
const char *kv_preempt_name(kv_preempt_policy p);

/* The admission watermark (DESIGN §6.2, §6.6 "Watermark rule"). */
typedef enum kv_watermark_rule {
    KV_WATERMARK_VLLM = 0, /* W = ⌊watermark · N⌋, gate only while a request runs (#44594) */
    KV_WATERMARK_V0, /* W = ⌊watermark · (N − 1)⌋, always; exceeds_watermark rejections */
} kv_watermark_rule;

/* "vllm" / "v0" → 0, else -KV_EINVAL with "{watermark_rule}: 'x' is not vllm or v0". */
int kv_watermark_rule_parse(const char *s, kv_watermark_rule *out, kv_diag *diag);
const char *kv_watermark_rule_name(kv_watermark_rule r);

/* vLLM's SchedulerPolicy (DESIGN §6.6 "Scheduling policy"). */
typedef enum kv_sched_policy {
    KV_POLICY_FCFS = 0, /* waiting queue in arrival order, preempted requests at the front */
    KV_POLICY_PRIORITY, /* waiting queue by (priority, arrival, row); priority victims */
} kv_sched_policy;

/* "fcfs" / "priority" → 0, else -KV_EINVAL with "{policy}: 'x' is not fcfs or priority". */
int kv_sched_policy_parse(const char *s, kv_sched_policy *out, kv_diag *diag);
const char *kv_sched_policy_name(kv_sched_policy p);

typedef enum kv_req_status {
    KV_REQ_PENDING = 0, /* not arrived yet */
    KV_REQ_WAITING,
    KV_REQ_RUNNING,
    KV_REQ_FINISHED,
    KV_REQ_REJECTED,
    KV_REQ_UNFINISHED, /* stopped by the livelock guard */
} kv_req_status;

typedef enum kv_reject_reason {
    KV_REJECT_NONE = 0,
    KV_REJECT_CAPACITY,  /* ⌈(prompt + output − 1)/b⌉ > N − 1 */
    KV_REJECT_WATERMARK, /* ⌈known tokens/b⌉ > N − 1 − W */
    KV_REJECT_BATCH,     /* chunked prefill off and known tokens > max_batched_tokens */
} kv_reject_reason;

const char *kv_req_status_name(kv_req_status s);
const char *kv_reject_reason_name(kv_reject_reason r);

/* One request's simulation state.  num_tokens (known tokens) = prompt + generated.
 * Read anywhere; written only by sched.c. */
typedef struct kv_req {
    const kv_request_spec *spec;
    kv_seq *seq;            /* cache state: from kv_req_attach until the request ends */
    uint32_t num_generated; /* tokens sampled so far */
    uint32_t num_computed;  /* tokens whose KV is computed (at step end; see step_new) */
    uint32_t step_new;      /* tokens scheduled in the current step, 0 outside one */
    uint32_t preemptions;
    uint32_t placeholders;      /* async: scheduled tokens whose samples are still in flight
                                   (vLLM's num_output_placeholders); 0 when not async */
    uint32_t hit_tokens;        /* prefix hit at the first admission */
    uint32_t num_cached_tokens; /* prefix hit at the last admission before the first token
                                   (vLLM's Request.num_cached_tokens, PR #37460) */
    uint8_t status;             /* kv_req_status */
    uint8_t reject;             /* kv_reject_reason, when status is REJECTED */
    bool admitted;              /* admitted at least once */
    bool deferred_once;         /* held back by the watermark at least once */
    int64_t first_scheduled_ns; /* −1 until admitted */
    int64_t first_token_ns;     /* −1 until the first token is sampled */
    int64_t finish_ns;          /* −1 until finished */
} kv_req; /* 72 bytes, no padding (issue 9: memory per request) */

static inline uint32_t kv_req_num_tokens(const kv_req *r)
{
    return r->spec->prompt_len + r->num_generated;
}

/* PENDING, every time −1, no cache state.  Can't fail. */
void kv_req_init(kv_req *r, const kv_request_spec *spec);
/* Give a pending request its cache state for content c, sized for the most tokens it can
 * hold (prompt + output − 1), before it arrives anywhere (a router may read its chain);
 * under kv_sched_config.attach_at_head the scheduler does it when the request first heads
 * the waiting queue instead.  Idempotent.  Can't fail. */
void kv_req_attach(kv_req *r, const kv_content *c);
/* A request that never arrived before the run stopped: PENDING → UNFINISHED. */
void kv_req_abandon(kv_req *r);
/* The block table (NULL with *len 0 when the request holds none). */
const kv_block_id *kv_req_table(const kv_req *r, uint32_t *len);

typedef struct kv_sched_config {
    uint32_t max_batched_tokens;      /* per-step token budget, default 8192 */
    uint32_t max_seqs;                /* running requests cap, default 256 */
    bool chunked_prefill;             /* default on */
    bool admit_full_prompt;           /* watermark need for all known tokens (default) or chunk */
    double watermark;                 /* fraction of blocks kept free, default 0.01 */
    kv_watermark_rule watermark_rule; /* how W is derived and when it applies */
    kv_preempt_policy preempt;        /* the victim; --policy priority implies priority */
    kv_sched_policy policy;           /* the waiting queue's order (and, priority, victims) */
    bool async_scheduling;            /* vLLM's AsyncScheduler: see the top comment */
    /* Set by a replay driver with closed-loop clients (arrivals.h), else NULL: called when
     * a request ends, finished or rejected, during the call that ends it. */
    void (*on_end)(void *end_ctx, const kv_req *r);
    void *end_ctx;
    /* Set by a replay driver whose requests need no cache state before they queue (one
     * replica, no router), else false: a request may then arrive unattached and gets its
     * cache state (kv_req_attach of kv_content_from_spec(spec, content_tb,
     * content_shared_prefix)) when it first heads the waiting queue, so a queue of
     * millions holds no kv_seq (issue 9: memory per request).  Attaching creates no cache
     * state beyond the kv_seq and hashes nothing, so when it happens changes no output. */
    bool attach_at_head;
    uint32_t content_tb;            /* the trace's block size for hash_ids */
    uint32_t content_shared_prefix; /* --shared-prefix of content-less rows */
} kv_sched_config;

/* The victim rule in effect: priority when either policy or preempt says so. */
kv_preempt_policy kv_sched_victim_rule(const kv_sched_config *cfg);

typedef struct kv_sched_counters {
    uint64_t finished;      /* requests that sampled their output_len-th token */
    uint64_t output_tokens; /* Σ output_len of finished requests */
    uint64_t preemptions;
    uint64_t deferrals;         /* (step, held-back head) pairs */
    uint64_t deferral_steps;    /* steps with a deferral */
    uint64_t deferred_requests; /* distinct requests ever held back by the watermark */
    uint64_t admitted;          /* admissions, re-admissions after preemption included */
    uint64_t rejected[4];       /* by kv_reject_reason */
} kv_sched_counters;

/* The scheduled work of one step, in scheduling order (running loop, then admission). */
typedef struct kv_batch {
    kv_req **reqs;
    uint32_t *num_new; /* tokens scheduled for reqs[i] in this step */
    bool *samples;     /* async: whether reqs[i]'s step samples a token (set by the pass) */
    uint32_t n, cap;
    uint64_t tokens;             /* Σ step_new */
    uint64_t kv_tokens_read;     /* DESIGN's "KV tokens read": Σ over scheduled tokens of the
                                    positions its query attends to (itself included) */
    uint64_t kv_tokens_streamed; /* Σ over scheduled requests of their visible history
                                    (computed + new): KV bytes a tiled kernel streams */
    uint32_t preempted;          /* preemptions in this step */
} kv_batch;

typedef struct kv_sched kv_sched; /* opaque */

/* 0, or -KV_EINVAL when max_batched_tokens or max_seqs is 0, watermark ∉ [0, 1) or an
 * enum is out of range (diag says which, naming the field in braces). */
int kv_sched_create(kv_sched **out, const kv_sched_config *cfg, kv_cache *cache, kv_diag *diag);
void kv_sched_destroy(kv_sched *s); /* NULL ok; queues must be empty */

/* W: ⌊watermark · N⌋ (vllm rule) or ⌊watermark · (N − 1)⌋ (v0), floor() of the IEEE double
 * product either way. */
uint32_t kv_sched_watermark_blocks(const kv_sched *s);

/* An attached request joins the waiting queue at the back (an arrival).  It may be
 * rejected instead (status KV_REQ_REJECTED, reason set, cache state dropped); returns
 * whether it was queued. */
bool kv_sched_arrive(kv_sched *s, kv_req *r);

/* One scheduling pass at time now_ns; fills *batch (reset first).  Async: the pass also
 * advances num_computed by each request's num_new and gives a placeholder to every
 * request whose step samples (batch->samples), as vLLM's _update_after_schedule does. */
void kv_sched_step(kv_sched *s, int64_t now_ns, kv_batch *batch);

/* The step that scheduled *batch ends at now_ns (DESIGN §6.3, §6.5): in scheduling order
 * each request advances num_computed by its step_new; one whose computed tokens reach its
 * known tokens samples a token (the first sets first_token_ns); one that reaches
 * output_len finishes and frees its blocks (R7).  Async (§6.6): num_computed moved at the
 * pass; a request whose step samples turns a placeholder into a token, hashes the blocks
 * its known tokens fill (when still running) and may finish, also from the waiting queue
 * when it was preempted since; a request that has ended meanwhile (rejected on re-joining)
 * is skipped.  *batch stays readable until the next pass on it. */
void kv_sched_step_end(kv_sched *s, kv_batch *batch, int64_t now_ns);

/* Take every queued and running request out (the run stopped), freeing blocks; each gets
 * status KV_REQ_UNFINISHED.  Returns how many. */
uint32_t kv_sched_abandon(kv_sched *s);

/* Invariant walk (with kvcache's over the running tables), O(running + waiting + N):
 * running entries are RUNNING with a table of ⌈(computed + step_new)/b⌉ blocks and
 * computed ≤ known tokens + placeholders, at most max_seqs of them; waiting entries are
 * WAITING with nothing computed, no blocks and no placeholder, in the queue's order (the
 * heap property under the priority policy); the counters agree with the queues (the
 * effective-tokens counter with the running entries' computed and scheduled tokens).  0, or
 * -KV_EINVARIANT with the first violation in diag. */
int kv_sched_check(const kv_sched *s, kv_diag *diag);

uint32_t kv_sched_num_running(const kv_sched *s);
uint32_t kv_sched_num_waiting(const kv_sched *s);
/* Σ block-table lengths of running requests (logical entries, R8). */
uint64_t kv_sched_logical_blocks(const kv_sched *s);
/* Σ over running requests of tokens whose KV slots are filled after this step: O(1). */
uint64_t kv_sched_effective_tokens(const kv_sched *s);
const kv_sched_counters *kv_sched_counters_get(const kv_sched *s);

void kv_batch_release(kv_batch *b);

#endif
