/* estimate: ledgers and concurrency of a setup for a set of lengths
 * (include/kvsim/estimate.h).
 *
 * Data: nothing beyond the result; the ledgers are model.c's kv_ledgers_compute at the
 * whole-model and the per-rank bytes per token.  Invariants: blocks_per_request ≥ 1 and
 * n_lengths ≥ 1 in a result (no lengths means one sequence of target_len).  O(n) in the
 * lengths.  Out of scope: printing (the CLI's table, report_estimate.c's JSON).
 */
#include "kvsim/estimate.h"

#include <math.h>
#include <string.h>

void kv_estimate_options_init(kv_estimate_options *o)
{
    memset(o, 0, sizeof *o);
    o->target_len = KV_ESTIMATE_TARGET_LEN;
    o->safety = 1.0;
}

int kv_estimate_compute(const kv_setup *s, const kv_estimate_options *o, kv_estimate *e,
                        kv_diag *diag)
{
    if (o->target_len == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{target_len} must be at least 1");
    if (!(o->safety > 0 && o->safety <= 1))
        return kv_diag_set(diag, -KV_EINVAL, "{safety} must be in (0, 1]");
    if (o->n_lengths > KV_ESTIMATE_MAX_SEQUENCES)
        return kv_diag_set(diag, -KV_EINVAL, "more than %d sequences", KV_ESTIMATE_MAX_SEQUENCES);
    memset(e, 0, sizeof *e);
    uint64_t one = o->target_len;
    const uint64_t *len = o->n_lengths ? o->lengths : &one;
    size_t n = o->n_lengths ? o->n_lengths : 1;
    e->opt = *o;
    e->opt.lengths = NULL;
    e->opt.n_lengths = n;
    e->min_len = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        e->sum_len += len[i];
        e->max_len = len[i] > e->max_len ? len[i] : e->max_len;
        e->min_len = len[i] < e->min_len ? len[i] : e->min_len;
    }
    uint32_t b = s->block_size;
    kv_ledgers_compute(s->shard.bytes_per_token, len, n, b, o->shared_prefix, &e->whole);
    kv_ledgers_compute(s->shard.bytes_per_token_rank, len, n, b, o->shared_prefix, &e->rank);
    uint64_t t = o->target_len;
    e->blocks_per_request = t / b + (t % b != 0);
    e->max_concurrency = (uint64_t)floor((double)s->cap.max_tokens * o->safety / (double)t);
    e->paged_max_concurrency =
        (uint64_t)floor((double)s->cap.usable_blocks * o->safety / (double)e->blocks_per_request);
    e->usable_token_concurrency =
        (uint64_t)floor((double)((uint64_t)s->cap.usable_blocks * b / t) * o->safety);
    return 0;
}
