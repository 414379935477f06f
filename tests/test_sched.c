/* Scheduler and engine scenarios (DESIGN §6.1–§6.5) on tiny hand-made traces with a fixed
 * step time, replayed through the real engine.  Each test names the rule it covers; the
 * block ids come from vLLM's own behaviour (docs/design.md S6, S7, S12).  An on_step_end
 * hook snapshots block tables and the free queue after chosen steps; every run walks the
 * R9 invariants after every step. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/sim.h"
#include "sched_internal.h"
#include "support.h"

#define MAXR    8
#define MAXSTEP 64

typedef struct treq {
    double arrival_ms;
    uint32_t prompt_len, output_len;
    int32_t priority;
} treq;

typedef struct snap {
    bool taken;
    int64_t start_ns, end_ns;
    uint32_t generated[MAXR];
    kv_block_id table[MAXR][16];
    uint32_t len[MAXR];
    kv_req_status status[MAXR];
    kv_block_id queue[32];
    size_t qlen;
    uint32_t batch[MAXR]; /* request indices in scheduling order */
    uint32_t batch_n;
    uint64_t batch_tokens;
} snap;

static snap snaps[MAXSTEP + 1];
static kv_trace trace;
static kv_request_spec specs[MAXR];
static uint32_t *tokens[MAXR];
static kv_run_result res;

static void on_step_end(void *ctx, const kv_step_view *v)
{
    (void)ctx;
    if (v->step > MAXSTEP)
        return;
    snap *s = &snaps[v->step];
    s->taken = true;
    s->start_ns = v->start_ns;
    s->end_ns = v->end_ns;
    for (size_t i = 0; i < v->n && i < MAXR; i++) {
        const kv_block_id *t = kv_req_table(&v->reqs[i], &s->len[i]);
        s->status[i] = v->reqs[i].status;
        s->generated[i] = v->reqs[i].num_generated;
        for (uint32_t j = 0; j < s->len[i] && j < 16; j++)
            s->table[i][j] = t[j];
    }
    s->qlen = kv_pool_queue(v->pool, s->queue, 32);
    s->batch_n = v->batch->n;
    s->batch_tokens = v->batch->tokens;
    for (uint32_t k = 0; k < v->batch->n && k < MAXR; k++)
        s->batch[k] = (uint32_t)(v->batch->reqs[k] - v->reqs);
}

/* Requests get distinct explicit tokens (row · 1000 + position), so nothing is shared
 * unless a test says so.  The §6.6 scenarios below were also replayed through vLLM's own
 * scheduler (the reference harness of DESIGN §6.6, on the same tokens, N, b and 1 ms
 * steps), which printed the same tables and queues after every step. */
static void make_trace(const treq *r, size_t n)
{
    memset(&trace, 0, sizeof trace);
    memset(snaps, 0, sizeof snaps);
    for (size_t i = 0; i < n; i++) {
        tokens[i] = malloc(r[i].prompt_len * sizeof *tokens[i]);
        for (uint32_t p = 0; p < r[i].prompt_len; p++)
            tokens[i][p] = (uint32_t)(i * 1000 + p);
        specs[i] = (kv_request_spec){.arrival_ns = (int64_t)(r[i].arrival_ms * 1e6),
                                     .prompt_len = r[i].prompt_len,
                                     .output_len = r[i].output_len,
                                     .row = (uint32_t)i,
                                     .priority = r[i].priority,
                                     .content = KV_CONTENT_TOKENS,
                                     .tokens = tokens[i]};
    }
    trace.reqs = specs;
    trace.n = n;
    trace.trace_block_size = 512;
}

static kv_engine_config base_config(uint32_t num_blocks, uint32_t b)
{
    kv_engine_config c = test_engine_config(num_blocks, b, "fixed:0.001");
    c.on_step_end = on_step_end;
    return c;
}

static void run(const kv_engine_config *c)
{
    kv_diag d;
    cr_assert_eq(kv_replay(c, &trace, "test", "bf16", 0, NULL, &res, &d), 0,
                 "%s (R9 invariants, livelock guard)", d.msg);
    cr_assert_eq(res.stats.sched.finished + res.rejected + res.unfinished, res.n);
}

static void teardown(void)
{
    kv_run_result_release(&res);
    for (int i = 0; i < MAXR; i++) {
        free(tokens[i]);
        tokens[i] = NULL;
    }
}

TestSuite(sched, .fini = teardown);

static void assert_table(int step, int req, const kv_block_id *want, uint32_t n)
{
    snap *s = &snaps[step];
    cr_assert(s->taken, "step %d never ran", step);
    cr_assert_eq(s->len[req], n, "step %d r%d: table length %u, want %u", step, req, s->len[req],
                 n);
    for (uint32_t j = 0; j < n; j++)
        cr_assert_eq(s->table[req][j], want[j], "step %d r%d table[%u] = %d, want %d", step, req, j,
                     s->table[req][j], want[j]);
}

static void assert_queue(int step, const kv_block_id *want, size_t n)
{
    snap *s = &snaps[step];
    cr_assert_eq(s->qlen, n, "step %d: queue length %zu, want %zu", step, s->qlen, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(s->queue[i], want[i], "step %d: queue[%zu] = %d, want %d", step, i,
                     s->queue[i], want[i]);
}

/* ---- §6.1 FCFS victim is the last running request; it re-hits its own blocks (S6) ---- */

static void s6(kv_free_order order)
{
    treq r[] = {{0, 4, 8, 0}, {0, 4, 13, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.free_order = order;
    run(&c);

    kv_block_id r0s2[] = {1, 3}, r1s2[] = {2, 4};
    assert_table(2, 0, r0s2, 2);
    assert_table(2, 1, r1s2, 2);
    /* Step 6: R1 needs a third block; victim = R2 (the last); R1 pops R2's tail block 4. */
    kv_block_id r0s6[] = {1, 3, 4};
    assert_table(6, 0, r0s6, 3);
    cr_assert_eq(snaps[6].status[1], KV_REQ_WAITING);
    cr_assert_eq(snaps[6].len[1], 0);
    cr_assert_eq(snaps[6].batch_n, 1, "§6.2: no admission in a step that preempted");
    /* Steps 7–8: R2 hits block 2 only (its second block was evicted): need 3 > 1 free. */
    cr_assert_eq(snaps[7].status[1], KV_REQ_WAITING);
    cr_assert_eq(snaps[8].status[1], KV_REQ_WAITING);
    cr_assert_eq(snaps[8].status[0], KV_REQ_FINISHED);
    if (order == KV_FREE_SPLIT) {
        kv_block_id q[] = {4, 2, 3, 1};
        assert_queue(8, q, 4);
    } else {
        kv_block_id q[] = {2, 4, 3, 1};
        assert_queue(8, q, 4);
    }
    /* Step 9: R2 re-hits its own surviving block 2, then pops 4 and 3. */
    kv_block_id r1s9[] = {2, 4, 3};
    assert_table(9, 1, r1s9, 3);

    cr_assert_eq(res.stats.sched.finished, 2);
    cr_assert_eq(res.stats.sched.preemptions, 1);
    cr_assert_eq(res.reqs[1].preemptions, 1);
    cr_assert_eq(res.reqs[1].hit_tokens, 0, "requests.csv hit_tokens: first admission only");
    cr_assert_eq(res.reqs[1].num_cached_tokens, 0, "its first token came before the re-hit");
    cr_assert_eq(res.stats.prefix.queries, 8, "§5: first admissions, in tokens");
    cr_assert_eq(res.stats.prefix.hits, 0);
    cr_assert_eq(res.stats.prefix.preempted_queries, 9, "re-admission with 9 known tokens");
    cr_assert_eq(res.stats.prefix.preempted_hits, 4);
    cr_assert_eq(res.stats.sched.deferrals, 0, "pool-full waits are not watermark deferrals");
}

Test(sched, s6_1_fcfs_victim_last_and_resume_hit_split)
{
    s6(KV_FREE_SPLIT);
}

Test(sched, s6_1_fcfs_victim_last_and_resume_hit_append)
{
    s6(KV_FREE_APPEND);
}

/* ---- §6.1 priority victim: max (priority, arrival), budget handed back (S7) ---------- */

Test(sched, s6_1_priority_victim_already_scheduled_gives_back)
{
    treq r[] = {{0, 6, 10, 1}, {0.5, 3, 10, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.sched.preempt = KV_PREEMPT_PRIORITY;
    run(&c);
    kv_block_id low2[] = {1, 2}, high2[] = {3};
    assert_table(2, 0, low2, 2);
    assert_table(2, 1, high2, 1);
    /* Step 4: Rlow took block 4 and was scheduled; Rhigh fails; the victim is Rlow. */
    kv_block_id high4[] = {3, 4};
    assert_table(4, 1, high4, 2);
    cr_assert_eq(snaps[4].status[0], KV_REQ_WAITING);
    cr_assert_eq(snaps[4].batch_n, 1);
    cr_assert_eq(snaps[4].batch[0], 1, "Rlow left the batch");
    cr_assert_eq(snaps[4].batch_tokens, 1, "Rlow's budget came back");
    cr_assert_eq(res.reqs[0].preemptions, 1);
}

Test(sched, s6_1_fcfs_same_state_victim_is_self)
{
    treq r[] = {{0, 6, 10, 1}, {0.5, 3, 10, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    run(&c);
    /* Step 4 under FCFS: Rhigh's victim is itself; Rlow keeps [1,2,4]. */
    kv_block_id low4[] = {1, 2, 4};
    assert_table(4, 0, low4, 3);
    cr_assert_eq(snaps[4].status[1], KV_REQ_WAITING);
    cr_assert_eq(snaps[4].batch_n, 1);
    cr_assert_eq(snaps[4].batch[0], 0);
    cr_assert_eq(res.reqs[1].preemptions, 1);
}

Test(sched, s6_1_priority_self_victim_schedules_nothing_and_step_counts)
{
    /* Ra (priority 1) is first in running; at step 4 it needs a third block, and the
     * priority victim is Ra itself: the step schedules no token, stops the running loop
     * (Rb is not scheduled either), and still takes fixed:DT. */
    treq r[] = {{0, 6, 10, 1}, {0, 6, 10, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.sched.preempt = KV_PREEMPT_PRIORITY;
    run(&c);
    kv_block_id a1[] = {1, 2}, b1[] = {3, 4};
    assert_table(1, 0, a1, 2);
    assert_table(1, 1, b1, 2);
    cr_assert_eq(snaps[4].batch_n, 0, "self-preemption first: nothing scheduled");
    cr_assert_eq(snaps[4].status[0], KV_REQ_WAITING);
    cr_assert_eq(snaps[5].start_ns, 4000000, "the empty step still took DT");
    /* Step 5: Rb gets Ra's freed tail block (head of [2, 1]). */
    kv_block_id b5[] = {3, 4, 2};
    assert_table(5, 1, b5, 3);
    cr_assert_eq(res.stats.sched.finished, 2);
}

/* ---- §6.2 no admission in a step that preempted ------------------------------------- */

Test(sched, s6_2_no_admission_in_a_preempting_step)
{
    /* Chunked prefill off, budget 9.  At step 5 X needs a block: the victim V (known 12 >
     * 9) is rejected exceeds_batch on re-joining, so Y (tiny, waiting since 3.5 ms) would
     * fit — but is admitted only at step 6. */
    treq r[] = {{0, 1, 8, 0}, {0, 8, 8, 0}, {3.5, 1, 1, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(5, 4);
    c.sched.chunked_prefill = false;
    c.sched.max_batched_tokens = 9;
    run(&c);
    cr_assert_eq(res.reqs[1].status, KV_REQ_REJECTED);
    cr_assert_eq(res.reqs[1].reject, KV_REJECT_BATCH, "§6.5: rejected when it re-joins");
    cr_assert_eq(res.reqs[1].preemptions, 1);
    cr_assert_eq(snaps[5].batch_n, 1);
    cr_assert_eq(snaps[5].batch[0], 0);
    cr_assert_eq(res.reqs[2].first_scheduled_ns, 5000000, "admitted at step 6, not step 5");
    cr_assert_eq(res.stats.sched.rejected[KV_REJECT_BATCH], 1);
}

/* ---- §6.2 head-of-line blocking (S12) ----------------------------------------------- */

Test(sched, s6_2_head_of_line_blocking)
{
    /* R holds 3 of 4 blocks; X (8 tokens, 2 blocks) heads the queue, Y (3 tokens, 1 block)
     * would fit but waits behind X until R frees its blocks. */
    treq r[] = {{0, 11, 2, 0}, {0.5, 8, 2, 0}, {0.5, 3, 2, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(5, 4);
    run(&c);
    cr_assert_eq(snaps[2].batch_n, 1, "step 2: only R runs");
    cr_assert_eq(snaps[2].status[2], KV_REQ_WAITING, "Y fits but is blocked by X");
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 2000000);
    cr_assert_eq(res.reqs[2].first_scheduled_ns, 2000000);
    cr_assert_eq(res.stats.sched.deferrals, 0, "a full pool is not a watermark deferral");
}

/* ---- §6.2 watermark (the v0 rule): defer vs reject ---------------------------------- */

Test(sched, s6_2_watermark_defer_then_admit)
{
    /* N = 11 (10 usable), watermark 0.1 → W = 1.  R holds 8 blocks; X needs 2 = free:
     * free − need = 0 < W → one deferral per step until R finishes. */
    treq r[] = {{0, 29, 3, 0}, {0.5, 5, 1, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(11, 4);
    c.sched.watermark = 0.1;
    c.sched.watermark_rule = KV_WATERMARK_V0;
    run(&c);
    cr_assert_eq(res.stats.watermark_blocks, 1);
    /* R: 29-token prompt → 8 blocks at step 1; steps 2, 3 decode (slots 30, 31 fit).
     * X waits at steps 2 and 3 (deferred), admitted at step 4. */
    cr_assert_eq(res.stats.sched.deferrals, 2);
    cr_assert_eq(res.stats.sched.deferral_steps, 2);
    cr_assert_eq(res.stats.sched.deferred_requests, 1);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 3000000);
    cr_assert_eq(res.stats.sched.finished, 2);
}

Test(sched, s6_2_watermark_reject_never_admittable)
{
    /* ⌈37/4⌉ = 10 blocks > N − 1 − W = 9: rejected at arrival as exceeds_watermark, never
     * a silent hang; a 36-token prompt (9 blocks) is admitted. */
    treq r[] = {{0, 37, 1, 0}, {0, 36, 1, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(11, 4);
    c.sched.watermark = 0.1;
    c.sched.watermark_rule = KV_WATERMARK_V0;
    run(&c);
    cr_assert_eq(res.reqs[0].status, KV_REQ_REJECTED);
    cr_assert_eq(res.reqs[0].reject, KV_REJECT_WATERMARK);
    cr_assert_eq(res.reqs[1].status, KV_REQ_FINISHED);
    cr_assert_eq(res.stats.sched.rejected[KV_REJECT_WATERMARK], 1);
    cr_assert_eq(res.rejected, 1);
}

Test(sched, s6_2_admit_full_prompt_vs_chunk_gate)
{
    /* 8 usable blocks, budget 8 tokens/step.  From step 3 R holds 5 blocks (3 free); X
     * has a 16-token prompt (4 blocks).  The full-prompt gate waits (need 4 > 3) until R
     * finishes after step 7; the chunk gate admits X's first 7-token chunk (2 blocks) at
     * step 3. */
    for (int full = 0; full < 2; full++) {
        treq r[] = {{0, 16, 6, 0}, {0.5, 16, 1, 0}};
        make_trace(r, 2);
        kv_engine_config c = base_config(9, 4);
        c.sched.max_batched_tokens = 8;
        c.sched.admit_full_prompt = full;
        run(&c);
        int64_t want = full ? 7000000 : 2000000;
        cr_assert_eq(res.reqs[1].first_scheduled_ns, want, "admit_full_prompt=%d", full);
        cr_assert_eq(res.stats.sched.finished, 2);
        teardown();
    }
}

Test(sched, s6_2_watermark_blocks_floor_of_ieee_product)
{
    /* v0: W = floor(watermark · (N−1)) in doubles: 0.29 · 100 = 28.999999999999996 → 28.
     * vllm (§6.6): W = int(watermark · N), kv_cache_manager.py@bf292b5f:163, the null block
     * counted: 0.29 · 101 = 29.29 → 29, 0.01 · 100 = 1, 0.29 · 100 → 28 as in Python. */
    struct {
        double wm;
        uint32_t n, want_v0, want_vllm;
    } cases[] = {{0.29, 101, 28, 29}, {0.01, 101, 1, 1}, {0.0, 101, 0, 0},   {0.3, 11, 3, 3},
                 {0.7, 11, 7, 7},     {0.01, 100, 0, 1}, {0.29, 100, 28, 28}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int rule = 0; rule < 2; rule++) {
            treq r[] = {{0, 1, 1, 0}};
            make_trace(r, 1);
            kv_engine_config c = base_config(cases[i].n, 4);
            c.sched.watermark = cases[i].wm;
            c.sched.watermark_rule = rule ? KV_WATERMARK_V0 : KV_WATERMARK_VLLM;
            run(&c);
            uint32_t want = rule ? cases[i].want_v0 : cases[i].want_vllm;
            cr_assert_eq(res.stats.watermark_blocks, want, "watermark %g, N %u, rule %s",
                         cases[i].wm, cases[i].n, kv_watermark_rule_name(c.sched.watermark_rule));
            teardown();
        }
    }
}

/* ---- §6.2 chunked vs unchunked prefill ---------------------------------------------- */

Test(sched, s6_2_chunked_prefill_splits_long_prompts)
{
    treq r[] = {{0, 20, 2, 0}};
    make_trace(r, 1);
    kv_engine_config c = base_config(20, 4);
    c.sched.max_batched_tokens = 8;
    run(&c);
    /* 8 + 8 + 4 tokens: the first token comes at the end of step 3. */
    cr_assert_eq(res.reqs[0].first_token_ns, 3000000);
    cr_assert_eq(snaps[1].batch_tokens, 8);
    cr_assert_eq(snaps[3].batch_tokens, 4);
    cr_assert_eq(res.reqs[0].finish_ns, 4000000);
}

Test(sched, s6_2_unchunked_budget_stops_head_not_a_deferral)
{
    /* Without chunking, X (8 tokens) does not fit the 7 tokens left after R's decode and
     * waits for a step with room; longer than the budget at all → exceeds_batch. */
    treq r[] = {{0, 4, 3, 0}, {0.5, 8, 1, 0}, {0.5, 9, 1, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(30, 4);
    c.sched.chunked_prefill = false;
    c.sched.max_batched_tokens = 8;
    c.sched.watermark = 0.5;
    c.sched.watermark_rule = KV_WATERMARK_V0;
    run(&c);
    cr_assert_eq(res.reqs[2].reject, KV_REJECT_BATCH, "9 known tokens > budget 8");
    /* Steps 2 and 3: R decodes (1 token), X needs 8 > 7; step 4: R finished → X runs. */
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 3000000);
    cr_assert_eq(res.stats.sched.deferrals, 0, "the budget check comes before the watermark");
}

/* ---- §6.4 rejection at arrival ------------------------------------------------------- */

Test(sched, s6_4_exceeds_capacity_at_arrival)
{
    /* N − 1 = 4 blocks of 4: prompt + output − 1 = 17 tokens needs 5 → rejected; 16 fits
     * (the last sampled token is never computed). */
    treq r[] = {{0, 10, 8, 0}, {0, 10, 7, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    run(&c);
    cr_assert_eq(res.reqs[0].reject, KV_REJECT_CAPACITY);
    cr_assert_eq(res.reqs[1].status, KV_REQ_FINISHED);
    cr_assert_eq(res.stats.sched.rejected[KV_REJECT_CAPACITY], 1);
    cr_assert_eq(snaps[6].len[1], 4, "it holds ⌈(prompt + output − 1)/b⌉ blocks at most");
}

/* ---- §6.5 exact rules ---------------------------------------------------------------- */

Test(sched, s6_5_arrival_at_step_start_is_visible)
{
    /* A step starts at 1 ms (the end of step 1); Y arriving at exactly 1 ms joins it. */
    treq r[] = {{0, 4, 3, 0}, {1.0, 4, 1, 0}, {1.001, 4, 1, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(20, 4);
    run(&c);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 1000000);
    cr_assert_eq(res.reqs[2].first_scheduled_ns, 2000000, "arrivals during a step wait");
}

Test(sched, s6_5_idle_clock_jumps_and_sim_time)
{
    treq r[] = {{0, 4, 1, 0}, {500, 4, 2, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    run(&c);
    cr_assert_eq(res.stats.steps, 3, "1 step for the first, 2 for the second; no idle steps");
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 500000000);
    cr_assert_eq(res.sim_time_ns, 502000000, "max(end of the last step, last arrival)");
    cr_assert_eq(res.reqs[1].first_token_ns, 501000000);
}

Test(sched, s6_5_sim_time_ends_at_a_rejected_last_arrival)
{
    treq r[] = {{0, 4, 1, 0}, {900, 400, 1, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    run(&c);
    cr_assert_eq(res.reqs[1].reject, KV_REJECT_CAPACITY);
    cr_assert_eq(res.sim_time_ns, 900000000);
}

Test(sched, s6_3_ttft_tpot_e2e_from_step_ends)
{
    treq r[] = {{0, 4, 5, 0}};
    make_trace(r, 1);
    kv_engine_config c = base_config(20, 4);
    run(&c);
    cr_assert_eq(res.reqs[0].first_token_ns, 1000000);
    cr_assert_eq(res.reqs[0].finish_ns, 5000000);
    cr_assert_float_eq(kv_req_tpot_s(&res.reqs[0]), 0.001, 1e-12);
    cr_assert_float_eq(kv_req_e2e_s(&res.reqs[0]), 0.005, 1e-12);
}

Test(sched, s5_prefix_caching_off_no_queries)
{
    treq r[] = {{0, 8, 2, 0}, {0, 8, 2, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    c.prefix_caching = false;
    run(&c);
    cr_assert_eq(res.stats.prefix.queries, 0);
    cr_assert_eq(res.stats.prefix.hits, 0);
    cr_assert_eq(res.stats.evictions, 0);
}

Test(sched, s5_shared_prefix_is_physically_shared)
{
    /* Two requests whose prompts share 8 tokens (2 blocks of 4): the second hits both,
     * so unique physical < logical during the overlap. */
    treq r[] = {{0, 9, 3, 0}, {0.5, 9, 3, 0}};
    make_trace(r, 2);
    for (uint32_t p = 0; p < 8; p++)
        tokens[1][p] = tokens[0][p];
    kv_engine_config c = base_config(20, 4);
    run(&c);
    cr_assert_eq(res.reqs[1].hit_tokens, 8);
    cr_assert_eq(res.stats.prefix.hits, 8);
    cr_assert_eq(res.stats.prefix.queries, 18);
    cr_assert_eq(res.stats.metrics.peak_logical, 6);
    cr_assert_eq(res.stats.metrics.peak_physical, 4, "shared blocks are counted once");
    cr_assert_gt(kv_metrics_sharing_ratio(&res.stats.metrics), 1.0);
}

/* ---- §6 step time -------------------------------------------------------------------- */

Test(sched, s6_time_linear_reads_every_tokens_history)
{
    /* linear:A,B,C with C per KV token read: a 100-token prefill's queries read
     * 1 + 2 + … + 100 = 5050 positions (5.05 s); the decode step reads 101 (0.101 s). */
    treq r[] = {{0, 100, 2, 0}};
    make_trace(r, 1);
    kv_engine_config c = base_config(100, 16);
    kv_diag d;
    cr_assert_eq(kv_timing_parse("linear:0,0,0.001", &c.timing, &d), 0);
    run(&c);
    cr_assert_eq(res.reqs[0].first_token_ns, 5050000000);
    cr_assert_eq(res.reqs[0].finish_ns, 5151000000);
    /* A and B: 2 ms per step + 10 µs per scheduled token. */
    teardown();
    make_trace(r, 1);
    cr_assert_eq(kv_timing_parse("linear:0.002,0.00001,0", &c.timing, &d), 0);
    run(&c);
    cr_assert_eq(res.reqs[0].first_token_ns, 3000000);
    cr_assert_eq(res.reqs[0].finish_ns, 3000000 + 2010000);
}

Test(sched, s6_time_roofline_decode_is_memory_bound)
{
    /* One decode step of llama-3-8b-like figures: weights dominate the bytes, so the step
     * takes overhead + weights / (bandwidth · mbu). */
    kv_timing t;
    kv_diag d;
    cr_assert_eq(
        kv_timing_parse("roofline:overhead=0.001,seq_overhead=0,mfu=0.5,mbu=0.5", &t, &d), 0);
    t.peak_flops = 1e15;
    t.hbm_bw = 2e12;
    t.active_params = 8e9;
    t.attn_flops_per_pair = 4.0 * 32 * 32 * 128;
    t.weight_bytes_rank = 16e9;
    t.kv_bytes_rank = 131072;
    t.tp = t.pp = 1;
    /* 1 token reading 1000 positions: memory = (16e9 + 1001·131072) / 1e12 s. */
    double want = 0.001 + (16e9 + 1001.0 * 131072) / (2e12 * 0.5);
    cr_assert_eq(kv_timing_step_ns(&t, 1, 1000, 1000), llround(want * 1e9));
    /* An 8k prefill is compute-bound: 2·8e9·8192 + attention pairs. */
    uint64_t pairs = 8192ull * 8193 / 2;
    double flops = 2 * 8e9 * 8192 + t.attn_flops_per_pair * (double)pairs;
    double want2 = 0.001 + flops / (1e15 * 0.5);
    cr_assert_eq(kv_timing_step_ns(&t, 8192, pairs, 8192), llround(want2 * 1e9));
}

/* ---- §6.2 max_seqs caps admissions -------------------------------------------------- */

Test(sched, s6_2_max_seqs_caps_running_requests)
{
    /* Two requests at 0 with max_seqs 1: the second is admitted only once the first has
     * finished (end of step 2), although blocks and budget would allow both. */
    treq r[] = {{0, 4, 2, 0}, {0, 4, 2, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    c.sched.max_seqs = 1;
    run(&c);
    cr_assert_eq(snaps[1].batch_n, 1, "step 1 admits one request");
    cr_assert_eq(snaps[1].status[1], KV_REQ_WAITING);
    cr_assert_eq(res.reqs[0].finish_ns, 2000000);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 2000000, "admitted at step 3");
    cr_assert_eq(res.stats.steps, 4);
}

/* ---- §6.5 priority victim ties go to the first in running order --------------------- */

Test(sched, s6_5_priority_victim_ties_to_the_first_in_running_order)
{
    /* Equal priority and arrival: the victim is max (priority, arrival) with ties to the
     * first such request in running order — R0 itself when it needs a block at step 4,
     * so R1 keeps its table and runs alone. */
    treq r[] = {{0, 6, 10, 0}, {0, 6, 10, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.sched.preempt = KV_PREEMPT_PRIORITY;
    run(&c);
    cr_assert_eq(snaps[4].status[0], KV_REQ_WAITING, "the first in running order is the victim");
    cr_assert_eq(snaps[4].status[1], KV_REQ_RUNNING);
    kv_block_id b4[] = {3, 4};
    assert_table(4, 1, b4, 2);
    cr_assert_eq(res.reqs[0].preemptions, 1);
    cr_assert_eq(res.reqs[1].preemptions, 0);
}

/* ---- §6.5 step end frees in scheduling order ----------------------------------------- */

Test(sched, s6_5_step_end_frees_in_scheduling_order)
{
    /* Both finish at the end of step 2 with tables [1 hashed, 3 partial] and [2 hashed,
     * 4 partial].  Freed in scheduling order (R0 then R1), each table tail first: the
     * partial blocks are prepended (R1's last, so first), the hashed appended (R0's
     * first). */
    treq r[] = {{0, 4, 2, 0}, {0, 4, 2, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(8, 4);
    run(&c);
    kv_block_id t0[] = {1}, t1[] = {2};
    assert_table(1, 0, t0, 1);
    assert_table(1, 1, t1, 1);
    cr_assert_eq(snaps[2].batch[0], 0);
    cr_assert_eq(snaps[2].batch[1], 1);
    cr_assert_eq(snaps[2].status[0], KV_REQ_FINISHED);
    kv_block_id q[] = {4, 3, 5, 6, 7, 1, 2};
    assert_queue(2, q, 7);
}

/* ---- §6.1 an already-scheduled victim's budget serves the requests after it ---------- */

Test(sched, s6_1_victim_budget_serves_later_requests)
{
    /* b 4, N 5, budget 4, gate on the chunk.  Step 4: A (priority 1, decoding) is
     * scheduled first; B needs a block with none free; the victim is A, already
     * scheduled, so its token of budget comes back and C's prefill chunk is 3 tokens,
     * not 2 — enough to need a second block (A's freed hashed block 1). */
    treq r[] = {{0, 4, 6, 1}, {0, 4, 6, 0}, {0, 12, 1, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(5, 4);
    c.sched.max_batched_tokens = 4;
    c.sched.admit_full_prompt = false;
    c.sched.preempt = KV_PREEMPT_PRIORITY;
    run(&c);
    kv_block_id a3[] = {1, 2}, b3[] = {3}, c3[] = {4};
    assert_table(3, 0, a3, 2);
    assert_table(3, 1, b3, 1);
    assert_table(3, 2, c3, 1);
    cr_assert_eq(snaps[4].status[0], KV_REQ_WAITING, "A is the victim");
    cr_assert_eq(snaps[4].batch_n, 2);
    cr_assert_eq(snaps[4].batch[0], 1);
    cr_assert_eq(snaps[4].batch[1], 2);
    cr_assert_eq(snaps[4].batch_tokens, 4, "B's 1 token + C's 3: A's budget came back");
    kv_block_id b4[] = {3, 2}, c4[] = {4, 1};
    assert_table(4, 1, b4, 2);
    assert_table(4, 2, c4, 2);
}

/* ---- §6.1 a preempted request re-joins at the front of the waiting queue -------------- */

Test(sched, s6_1_preempted_request_rejoins_at_the_front)
{
    /* N 5: A and B take 2 blocks each; C waits.  At step 4 A needs a third block and
     * preempts B (the last).  B goes to the FRONT: it needs 3 blocks and one is free, so
     * it blocks C — which would fit — until A finishes; both are admitted at step 11,
     * B first. */
    treq r[] = {{0, 6, 10, 0}, {0, 6, 10, 0}, {0.5, 4, 1, 0}};
    make_trace(r, 3);
    kv_engine_config c = base_config(5, 4);
    run(&c);
    cr_assert_eq(snaps[4].status[1], KV_REQ_WAITING);
    cr_assert_eq(res.reqs[1].preemptions, 1);
    cr_assert_eq(snaps[5].status[2], KV_REQ_WAITING, "C fits but waits behind B");
    cr_assert_eq(snaps[5].batch_n, 1);
    cr_assert_eq(snaps[11].batch_n, 2);
    cr_assert_eq(snaps[11].batch[0], 1, "B, at the front, is admitted first");
    cr_assert_eq(snaps[11].batch[1], 2);
    cr_assert_eq(res.reqs[2].first_scheduled_ns, 10000000);
}

/* ==== §6.6 vLLM parity ================================================================ */

/* ---- watermark rule vllm: W = int(w·N), gated only while a request runs -------------- */

Test(sched, s6_6_watermark_vllm_gate_needs_a_running_request)
{
    /* N 10, w 0.1: vllm W = int(0.1 · 10) = 1 (kv_cache_manager.py@bf292b5f:163), v0
     * ⌊0.1 · 9⌋ = 0.  A (4 blocks) and B (5 blocks) arrive together.  A is admitted with
     * nothing running (the gate is off: has_scheduled_reqs=bool(self.running),
     * scheduler.py@bf292b5f:905); B then finds A running, 5 free − 5 needed < W: one
     * deferral, and it runs alone at step 2 with the queue's head blocks [5..9]. */
    treq r[] = {{0, 16, 1, 0}, {0, 20, 1, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(10, 4);
    c.sched.watermark = 0.1;
    run(&c);
    cr_assert_eq(res.stats.watermark_blocks, 1);
    kv_block_id q1[] = {5, 6, 7, 8, 9, 4, 3, 2, 1};
    assert_queue(1, q1, 9);
    cr_assert_eq(snaps[1].batch_n, 1, "B waits for the watermark");
    cr_assert_eq(res.stats.sched.deferrals, 1);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 1000000);
    kv_block_id q2[] = {4, 3, 2, 1, 9, 8, 7, 6, 5};
    assert_queue(2, q2, 9);
    teardown();
    /* v0: W = 0, B is admitted at step 1 beside A. */
    make_trace(r, 2);
    c.sched.watermark_rule = KV_WATERMARK_V0;
    run(&c);
    cr_assert_eq(res.stats.watermark_blocks, 0);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 0);
    cr_assert_eq(res.stats.sched.deferrals, 0);
}

Test(sched, s6_6_watermark_vllm_idle_engine_admits_any_head)
{
    /* N 11, w 0.1 (W 1): a 37-token prompt needs all 10 usable blocks.  v0 rejects it
     * (exceeds_watermark, §6.2); vllm never rejects: an idle engine admits it (the gate is
     * off with nothing running), and the 36-token request follows at step 2 into its
     * freed blocks, [10, 9, …, 2] (the unhashed tail first, R7). */
    treq r[] = {{0, 37, 1, 0}, {0, 36, 1, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(11, 4);
    c.sched.watermark = 0.1;
    run(&c);
    cr_assert_eq(res.reqs[0].status, KV_REQ_FINISHED);
    cr_assert_eq(res.rejected, 0);
    cr_assert_eq(res.stats.sched.rejected[KV_REJECT_WATERMARK], 0);
    kv_block_id q1[] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
    assert_queue(1, q1, 10);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 1000000);
    kv_block_id q2[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_queue(2, q2, 10);
    cr_assert_eq(res.stats.evictions, 8, "the second request evicts 8 of the first's blocks");
}

/* ---- policy priority: the waiting queue by (priority, arrival, row) ------------------- */

Test(sched, s6_6_policy_priority_orders_the_waiting_queue)
{
    /* vLLM's test_priority_scheduling_waiting_queue_order (tests/v1/core/
     * test_scheduler.py@bf292b5f): max_seqs 1, priorities 3, 1, 2, 0 arriving in that order
     * while a request runs.  Under --policy priority they are admitted by priority, the
     * ties of the next check by arrival then row; under fcfs in arrival order. */
    treq r[] = {{0, 4, 6, 0},  {1, 10, 1, 3}, {2, 10, 1, 1},
                {3, 10, 1, 2}, {4, 10, 1, 0}, {4, 10, 1, 0}};
    for (int pol = 0; pol < 2; pol++) {
        make_trace(r, 6);
        kv_engine_config c = base_config(20, 4);
        c.sched.max_seqs = 1;
        c.sched.policy = pol ? KV_POLICY_PRIORITY : KV_POLICY_FCFS;
        run(&c);
        /* The running request frees [1, 2, 3] at the end of step 6. */
        kv_block_id q6[] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 2, 1};
        assert_queue(6, q6, 19);
        /* priority: rows 4 and 5 (priority 0, equal arrival: row order), 2, 3, 1. */
        int64_t want_pri[] = {0, 10000000, 8000000, 9000000, 6000000, 7000000};
        int64_t want_fcfs[] = {0, 6000000, 7000000, 8000000, 9000000, 10000000};
        for (int i = 1; i < 6; i++)
            cr_assert_eq(res.reqs[i].first_scheduled_ns, pol ? want_pri[i] : want_fcfs[i],
                         "policy %s: row %d", kv_sched_policy_name(c.sched.policy), i);
        teardown();
    }
}

Test(sched, s6_6_policy_priority_preempted_request_reenters_by_its_key)
{
    /* N 6, b 4.  A (priority 0) and B (priority 2) hold [1,2] and [3,4]; C (priority 1,
     * 2 blocks) waits.  Step 2: A takes the last block, B needs one and is the priority
     * victim (itself), freeing [4, 3].  Under --policy priority B re-enters the heap
     * behind C (vLLM's PriorityRequestQueue.prepend_request is a plain push), so C is
     * admitted at step 3 into [4, 3].  Under --policy fcfs --preempt priority B goes to
     * the front: its resume needs 3 blocks (2 hits at refcount 0 + 1), it blocks C, and B
     * is admitted first when A finishes. */
    treq r[] = {{0, 8, 10, 0}, {0, 8, 10, 2}, {0.5, 8, 3, 1}};
    make_trace(r, 3);
    kv_engine_config c = base_config(6, 4);
    c.sched.policy = KV_POLICY_PRIORITY;
    run(&c);
    kv_block_id a2[] = {1, 2, 5}, q2[] = {4, 3};
    assert_table(2, 0, a2, 3);
    assert_queue(2, q2, 2);
    cr_assert_eq(snaps[2].status[1], KV_REQ_WAITING);
    kv_block_id c3[] = {4, 3};
    assert_table(3, 2, c3, 2);
    cr_assert_eq(snaps[3].status[1], KV_REQ_WAITING, "B waits behind C");
    cr_assert_eq(res.reqs[2].first_scheduled_ns, 2000000);
    cr_assert_eq(res.stats.sched.preemptions, 2);
    teardown();

    make_trace(r, 3);
    c.sched.policy = KV_POLICY_FCFS;
    c.sched.preempt = KV_PREEMPT_PRIORITY;
    run(&c);
    assert_queue(3, q2, 2);
    cr_assert_eq(snaps[3].status[2], KV_REQ_WAITING, "C fits but waits behind B");
    kv_block_id b11[] = {3, 4, 5}, c11[] = {2, 1};
    assert_table(11, 1, b11, 3);
    assert_table(11, 2, c11, 2);
    cr_assert_eq(snaps[11].batch[0], 1, "B, at the front, is admitted first");
}

Test(sched, s6_6_policy_priority_implies_priority_victims)
{
    cr_assert_eq(kv_sched_victim_rule(
                     &(kv_sched_config){.policy = KV_POLICY_PRIORITY, .preempt = KV_PREEMPT_FCFS}),
                 KV_PREEMPT_PRIORITY);
    cr_assert_eq(kv_sched_victim_rule(
                     &(kv_sched_config){.policy = KV_POLICY_FCFS, .preempt = KV_PREEMPT_PRIORITY}),
                 KV_PREEMPT_PRIORITY);
    cr_assert_eq(kv_sched_victim_rule(&(kv_sched_config){0}), KV_PREEMPT_FCFS);
}

Test(sched, s6_6_policy_priority_heap_serves_by_key)
{
    /* The queue itself: pushes in any order (front or not) pop by (priority, arrival,
     * row); the FCFS deque keeps arrival order with preempted requests in front. */
    kv_request_spec sp[6] = {
        {.arrival_ns = 5, .priority = 1, .row = 0}, {.arrival_ns = 3, .priority = 1, .row = 1},
        {.arrival_ns = 3, .priority = 1, .row = 2}, {.arrival_ns = 9, .priority = -2, .row = 3},
        {.arrival_ns = 1, .priority = 4, .row = 4}, {.arrival_ns = 0, .priority = 1, .row = 5}};
    kv_req rq[6];
    for (int i = 0; i < 6; i++)
        kv_req_init(&rq[i], &sp[i]);
    kv__waitq q;
    kv__waitq_init(&q, KV_POLICY_PRIORITY);
    for (int i = 0; i < 6; i++)
        kv__waitq_push(&q, &rq[i], i % 2 == 0);
    cr_assert(kv__waitq_remove(&q, &rq[0]));
    cr_assert(!kv__waitq_remove(&q, &rq[0]));
    int want[] = {3, 5, 1, 2, 4};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(kv__waitq_peek(&q), &rq[want[k]], "pop %d", k);
        kv__waitq_pop(&q);
    }
    cr_assert_eq(q.len, 0);
    kv__waitq_release(&q);
    kv__waitq_init(&q, KV_POLICY_FCFS);
    for (int i = 0; i < 6; i++)
        kv__waitq_push(&q, &rq[i], i == 4);
    cr_assert(kv__waitq_remove(&q, &rq[2]));
    int want_fcfs[] = {4, 0, 1, 3, 5};
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(kv__waitq_peek(&q), &rq[want_fcfs[k]], "fcfs pop %d", k);
        kv__waitq_pop(&q);
    }
    kv__waitq_release(&q);
}

/* ---- num_cached_tokens: the hit of the last admission before the first token --------- */

Test(sched, s6_6_num_cached_tokens_is_the_last_admission_before_the_first_token)
{
    /* N 9, b 4, budget 4, chunk gate.  Row 2 (19 tokens) is admitted with no hit, then
     * preempted three times before its first token; its last admission hits its own first
     * block (4 tokens).  hit_tokens keeps the first admission's 0 (§6.5); vLLM's
     * PrefillStats.num_local_cached_tokens (PR #37460, set on every lookup until the
     * first output takes it, scheduler.py@bf292b5f:769) says 4.  Row 1 re-hits the 8
     * tokens it shares with row 0 at both its admissions. */
    treq r[] = {{0, 13, 13, 0}, {0.5, 18, 11, 0}, {1.5, 19, 4, 0}};
    make_trace(r, 3);
    for (uint32_t p = 0; p < 8; p++)
        tokens[1][p] = tokens[0][p];
    kv_engine_config c = base_config(9, 4);
    c.sched.max_batched_tokens = 4;
    c.sched.admit_full_prompt = false;
    run(&c);
    cr_assert_eq(res.reqs[2].preemptions, 3);
    cr_assert_eq(res.reqs[2].hit_tokens, 0);
    cr_assert_eq(res.reqs[2].num_cached_tokens, 4);
    cr_assert_eq(res.reqs[1].hit_tokens, 8);
    cr_assert_eq(res.reqs[1].num_cached_tokens, 8);
    cr_assert_eq(res.reqs[0].num_cached_tokens, 0);
    cr_assert_eq(res.reqs[2].first_token_ns, 30000000);
    kv_block_id t27[] = {4, 3};
    assert_table(27, 2, t27, 2);
    cr_assert_eq(res.stats.steps, 33);
}

/* ---- free order append with caching off appends ------------------------------------- */

Test(sched, s6_6_free_order_append_with_caching_off_appends)
{
    /* A holds [1,2,3] and finishes; B arrives later and takes the queue's head: block 4
     * under append (vLLM before PR #42656, block_pool.py@9d4dc4ca free_blocks appends all),
     * block 3 under split (every freed block is hashless, so all are prepended; S13). */
    treq r[] = {{0, 12, 1, 0}, {5, 4, 1, 0}};
    for (int o = 0; o < 2; o++) {
        make_trace(r, 2);
        kv_engine_config c = base_config(8, 4);
        c.prefix_caching = false;
        c.free_order = o ? KV_FREE_APPEND : KV_FREE_SPLIT;
        run(&c);
        kv_block_id split1[] = {3, 2, 1, 4, 5, 6, 7}, append1[] = {4, 5, 6, 7, 3, 2, 1};
        assert_queue(1, o ? append1 : split1, 7);
        kv_block_id split2[] = {3, 2, 1, 4, 5, 6, 7}, append2[] = {5, 6, 7, 3, 2, 1, 4};
        assert_queue(2, o ? append2 : split2, 7);
        teardown();
    }
}

/* ---- async scheduling (vLLM's AsyncScheduler) ---------------------------------------- */

ParameterizedTestParameters(sched, s6_6_async_stop_by_max_tokens)
{
    static uint32_t max_tokens[] = {1, 2, 3, 5};
    return cr_make_param_array(uint32_t, max_tokens, 4);
}

ParameterizedTest(uint32_t *m, sched, s6_6_async_stop_by_max_tokens)
{
    /* vLLM's test_stop_by_max_tokens (tests/v1/core/test_async_scheduler.py@bf292b5f):
     * two 10-token prompts; exactly prompt + max_tokens − 1 tokens are scheduled per
     * request, no extra step for the token in flight (scheduler.py@bf292b5f:442: a
     * request whose last token is in flight is skipped).  The pass that finds only such
     * requests is an empty batch: one more step, 0 ns long, so the finish times are the
     * sync ones. */
    treq r[] = {{0, 10, *m, 0}, {0, 10, *m, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    c.sched.async_scheduling = true;
    run(&c);
    uint64_t scheduled = 0;
    for (int k = 1; k <= (int)res.stats.steps; k++)
        scheduled += snaps[k].batch_tokens;
    cr_assert_eq(scheduled, 2 * (10 + *m - 1));
    cr_assert_eq(res.stats.steps, *m + 1, "one empty step for the last tokens in flight");
    int64_t last = (int64_t)res.stats.steps;
    cr_assert_eq(snaps[last].batch_n, 0);
    cr_assert_eq(snaps[last].start_ns, snaps[last].end_ns, "an empty batch takes no time");
    cr_assert_eq(res.reqs[0].finish_ns, *m * 1000000);
    cr_assert_eq(res.sim_time_ns, *m * 1000000);
}

Test(sched, s6_6_async_slots_are_allocated_for_the_placeholder)
{
    /* Same two requests, max_tokens 5 (b 4): the pass of step k+1 runs before step k
     * ends and allocates the slot of the token in flight, so after step 3 each table
     * already holds the block for position 12 (sync: only after step 4). */
    treq r[] = {{0, 10, 5, 0}, {0, 10, 5, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(20, 4);
    c.sched.async_scheduling = true;
    run(&c);
    kv_block_id t2[] = {1, 2, 3}, t3a[] = {1, 2, 3, 7}, t3b[] = {4, 5, 6, 8};
    assert_table(2, 0, t2, 3);
    assert_table(3, 0, t3a, 4);
    assert_table(3, 1, t3b, 4);
    kv_block_id q5[] = {8, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 3, 2, 1, 6, 5, 4};
    assert_queue(5, q5, 19);
    teardown();
    make_trace(r, 2);
    c.sched.async_scheduling = false;
    run(&c);
    assert_table(3, 0, t2, 3);
    assert_table(4, 0, t3a, 4);
}

Test(sched, s6_6_async_frees_come_one_pass_late_in_zero_time)
{
    /* N 6: R (8 + 3 tokens, 3 blocks) runs, X (3 blocks) waits.  R's last token is in
     * flight when step 4 is scheduled, so step 4 is empty (R skipped, X does not fit);
     * R frees at the end of step 3, step 4 takes no time, and step 5 admits X at 3 ms,
     * as sync does at step 4.  Blocks identical to sync's. */
    treq r[] = {{0, 8, 3, 0}, {0.5, 12, 2, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(6, 4);
    c.sched.async_scheduling = true;
    run(&c);
    cr_assert_eq(res.stats.steps, 7);
    cr_assert_eq(snaps[4].batch_n, 0);
    cr_assert_eq(snaps[4].start_ns, 3000000);
    cr_assert_eq(snaps[4].end_ns, 3000000);
    kv_block_id q3[] = {3, 4, 5, 2, 1}, x4[] = {3, 4, 5};
    assert_queue(3, q3, 5);
    assert_table(4, 1, x4, 3);
    cr_assert_eq(res.reqs[1].first_scheduled_ns, 3000000);
    cr_assert_eq(res.reqs[1].finish_ns, 5000000);
}

Test(sched, s6_6_async_victim_with_its_last_token_in_flight_finishes_waiting)
{
    /* N 5, b 4: A (4 + 10) and B (4 + 5) fill the pool by step 1 ([1,3] and [2,4]: the
     * placeholder slots).  At the pass of step 6 (during step 5) B's last token is in
     * flight, so B is skipped, yet it is still the last running request: A needs a block
     * and B is preempted (sync: B has finished and freed by then).  B's in-flight token
     * arrives at the end of step 5 and B finishes from the waiting queue
     * (scheduler.py@bf292b5f update_from_output, stopped_preempted_reqs); A took B's tail block 4.
     */
    treq r[] = {{0, 4, 10, 0}, {0, 4, 5, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.sched.async_scheduling = true;
    run(&c);
    kv_block_id a1[] = {1, 3}, b1[] = {2, 4}, a5[] = {1, 3, 4}, q5[] = {2};
    assert_table(1, 0, a1, 2);
    assert_table(1, 1, b1, 2);
    assert_table(5, 0, a5, 3);
    assert_queue(5, q5, 1);
    cr_assert_eq(snaps[5].status[1], KV_REQ_FINISHED);
    cr_assert_eq(res.reqs[1].preemptions, 1);
    cr_assert_eq(res.reqs[1].finish_ns, 5000000);
    cr_assert_eq(res.stats.sched.preemptions, 1);
    cr_assert_eq(res.stats.sched.finished, 2);
    teardown();
    make_trace(r, 2);
    c.sched.async_scheduling = false;
    run(&c);
    cr_assert_eq(res.stats.sched.preemptions, 0, "sync: no preemption");
}

Test(sched, s6_6_async_victim_keeps_its_in_flight_token)
{
    /* As above with B's output 7: B is preempted during step 5 with its 5th token in
     * flight; the token still arrives (B waits with 9 known tokens), so its re-admission
     * counts 9 preempted query tokens, and B finishes once A is done. */
    treq r[] = {{0, 4, 10, 0}, {0, 4, 7, 0}};
    make_trace(r, 2);
    kv_engine_config c = base_config(5, 4);
    c.sched.async_scheduling = true;
    run(&c);
    cr_assert_eq(snaps[5].status[1], KV_REQ_WAITING);
    cr_assert_eq(snaps[5].generated[1], 5, "the in-flight token arrived while B waited");
    cr_assert_eq(snaps[4].generated[1], 4);
    kv_block_id b11[] = {2, 4, 3};
    assert_table(11, 1, b11, 3);
    cr_assert_eq(res.stats.prefix.preempted_queries, 9);
    cr_assert_eq(res.reqs[1].finish_ns, 12000000);
    cr_assert_eq(res.stats.steps, 14);
}

Test(sched, s6_6_async_last_token_hashes_the_block_it_fills)
{
    /* A 1-token prompt with 8 outputs fills 2 blocks.  Its last pass could not hash block
     * 2 (the 8th token was still in flight); the step end that delivers the last token
     * hashes it (AsyncScheduler._update_request_with_output: cache_blocks(request,
     * num_computed_tokens − num_output_placeholders)) before the request frees, so block
     * 2 goes to the tail as a cached block, as in sync: queue [3, 2, 1], not [2, 3, 1]. */
    treq r[] = {{0, 1, 8, 0}};
    make_trace(r, 1);
    kv_engine_config c = base_config(4, 4);
    c.sched.async_scheduling = true;
    run(&c);
    kv_block_id q8[] = {3, 2, 1};
    assert_queue(8, q8, 3);
    cr_assert_eq(res.stats.steps, 9);
}

Test(sched, s6_6_async_skipped_priority_victim_before_the_request_skips_its_successor)
{
    /* N 9, b 4, --policy priority, async.  During step 8 the pass of step 9 runs with
     * running = [row 1 (priority 1, its last token in flight: skipped), row 2, row 3].
     * Row 2 needs a block; the victim is row 1, before it and not scheduled.  vLLM removes
     * it and moves its index back only for a scheduled victim (scheduler.py@bf292b5f:
     * 540-562), so the index now points past row 2's successor: row 3 is not scheduled in
     * step 9.  Row 1's last token arrives at the end of step 8: it finishes waiting. */
    treq r[] = {{0, 5, 2, 0}, {1.5, 6, 5, 1}, {2.5, 10, 8, 0}, {2.5, 3, 5, 0}};
    make_trace(r, 4);
    for (uint32_t p = 0; p < 5; p++)
        tokens[1][p] = tokens[0][p];
    for (uint32_t p = 0; p < 3; p++)
        tokens[3][p] = tokens[0][p];
    kv_engine_config c = base_config(9, 4);
    c.sched.policy = KV_POLICY_PRIORITY;
    c.sched.async_scheduling = true;
    run(&c);
    kv_block_id r2[] = {3, 4, 5, 7}, r3[] = {6, 8};
    assert_table(8, 2, r2, 4);
    assert_table(8, 3, r3, 2);
    cr_assert_eq(snaps[8].status[1], KV_REQ_FINISHED);
    cr_assert_eq(res.reqs[1].preemptions, 1);
    cr_assert_eq(res.reqs[1].finish_ns, 7000000);
    cr_assert_eq(snaps[9].batch_n, 1, "row 3 is skipped by the index arithmetic");
    cr_assert_eq(snaps[9].batch[0], 2);
    kv_block_id q11[] = {8, 2, 1, 6};
    assert_queue(11, q11, 4);
    assert_table(11, 2, r2, 4);
    cr_assert_eq(res.stats.steps, 14);
}

/* ---- bad input -------------------------------------------------------------------------- */

Test(sched, s6_6_rule_and_policy_names_parse_and_print)
{
    kv_diag d;
    kv_watermark_rule w;
    kv_sched_policy p;
    cr_assert_eq(kv_watermark_rule_parse("v0", &w, &d), 0);
    cr_assert_eq(w, KV_WATERMARK_V0);
    cr_assert_eq(kv_watermark_rule_parse("vllm", &w, &d), 0);
    cr_assert_eq(w, KV_WATERMARK_VLLM);
    cr_assert_str_eq(kv_watermark_rule_name(KV_WATERMARK_V0), "v0");
    cr_assert_eq(kv_watermark_rule_parse("v1", &w, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{watermark_rule}: 'v1' is not vllm or v0");
    cr_assert_eq(kv_sched_policy_parse("priority", &p, &d), 0);
    cr_assert_eq(p, KV_POLICY_PRIORITY);
    cr_assert_str_eq(kv_sched_policy_name(KV_POLICY_FCFS), "fcfs");
    cr_assert_eq(kv_sched_policy_parse("lifo", &p, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{policy}: 'lifo' is not fcfs or priority");
}

Test(sched, s6_6_engine_refuses_out_of_range_enums)
{
    treq r[] = {{0, 4, 1, 0}};
    make_trace(r, 1);
    kv_engine_config c = base_config(8, 4);
    kv_diag d;
    c.sched.watermark_rule = (kv_watermark_rule)7;
    cr_assert_eq(kv_replay(&c, &trace, "test", "bf16", 0, NULL, &res, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{watermark_rule} 7 is not vllm or v0");
    c.sched.watermark_rule = KV_WATERMARK_VLLM;
    c.sched.policy = (kv_sched_policy)3;
    cr_assert_eq(kv_replay(&c, &trace, "test", "bf16", 0, NULL, &res, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{policy} 3 or {preempt} 0 is not fcfs or priority");
    c.sched.policy = KV_POLICY_FCFS;
    c.sched.watermark = 1.0;
    cr_assert_eq(kv_replay(&c, &trace, "test", "bf16", 0, NULL, &res, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{watermark} 1 is not in [0, 1)");
}
