/* estimate: the library half of `kvsim estimate` — lengths statistics, blocks per request,
 * the three concurrencies and their rounding, the default single sequence, the option
 * checks, and the JSON object's sections in order.  The CLI's golden output is
 * tests/test_cli_estimate.c's. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kvsim/estimate.h"
#include "kvsim/report.h"

static kv_setup setup_blocks(uint32_t num_blocks, uint32_t block_size)
{
    kv_setup_options o;
    kv_setup_options_init(&o);
    o.num_blocks = num_blocks;
    o.block_size = block_size;
    kv_setup s;
    kv_diag d;
    cr_assert_eq(kv_setup_resolve(&o, &s, &d), 0, "%s", d.msg);
    return s;
}

Test(estimate, concurrencies_round_down_each_their_way)
{
    kv_setup s = setup_blocks(1001, 16); /* 1000 usable blocks */
    cr_assert_eq(s.cap.usable_blocks, 1000);
    const uint64_t lengths[] = {100, 300, 200};
    kv_estimate_options o;
    kv_estimate_options_init(&o);
    o.lengths = lengths;
    o.n_lengths = 3;
    o.target_len = 4097; /* one token into a 257th block */
    o.safety = 0.5;
    kv_estimate e;
    kv_diag d;
    cr_assert_eq(kv_estimate_compute(&s, &o, &e, &d), 0, "%s", d.msg);
    cr_assert_eq(e.blocks_per_request, 257);
    cr_assert_eq(e.paged_max_concurrency, 1);    /* floor(1000 * 0.5 / 257) */
    cr_assert_eq(e.usable_token_concurrency, 1); /* floor(floor(16000 / 4097) * 0.5) */
    cr_assert_eq(e.max_concurrency, (uint64_t)floor((double)s.cap.max_tokens * 0.5 / 4097.0));
    cr_assert_eq(e.opt.n_lengths, 3);
    cr_assert_null(e.opt.lengths, "the lengths are not kept");
    cr_assert_eq(e.sum_len, 600);
    cr_assert_eq(e.min_len, 100);
    cr_assert_eq(e.max_len, 300);
    cr_assert_eq(e.whole.effective_tokens, 600);
    cr_assert_eq(e.whole.logical_blocks, 7 + 19 + 13);
}

Test(estimate, no_lengths_is_one_sequence_of_target_len)
{
    kv_setup s = setup_blocks(1001, 16);
    kv_estimate_options o;
    kv_estimate_options_init(&o);
    cr_assert_eq(o.target_len, KV_ESTIMATE_TARGET_LEN);
    cr_assert_eq(o.safety, 1.0);
    kv_estimate e;
    kv_diag d;
    cr_assert_eq(kv_estimate_compute(&s, &o, &e, &d), 0, "%s", d.msg);
    cr_assert_eq(e.opt.n_lengths, 1);
    cr_assert_eq(e.sum_len, 4096);
    cr_assert_eq(e.whole.logical_blocks, 256);
    cr_assert_eq(e.paged_max_concurrency, 3); /* floor(1000 / 256) */
}

Test(estimate, options_out_of_range)
{
    kv_setup s = setup_blocks(1001, 16);
    kv_estimate_options o;
    kv_estimate e;
    kv_diag d;
    kv_estimate_options_init(&o);
    o.target_len = 0;
    cr_assert_eq(kv_estimate_compute(&s, &o, &e, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{target_len} must be at least 1");
    kv_estimate_options_init(&o);
    o.safety = 0;
    cr_assert_eq(kv_estimate_compute(&s, &o, &e, &d), -KV_EINVAL);
    cr_assert_str_eq(d.msg, "{safety} must be in (0, 1]");
}

Test(estimate, json_sections_in_order)
{
    kv_setup_options so;
    kv_setup_options_init(&so);
    kv_setup s = setup_blocks(1001, 16);
    kv_estimate_options o;
    kv_estimate_options_init(&o);
    kv_estimate e;
    kv_diag d;
    cr_assert_eq(kv_estimate_compute(&s, &o, &e, &d), 0);
    json_t *j = kv_estimate_json(&s, &so, &e);
    const char *want[] = {"model",
                          "gpu",
                          "kv_dtype",
                          "kv_dtype_bytes",
                          "kv_scale_group",
                          "kv_scale_bytes",
                          "block_size",
                          "bytes_per_token",
                          "bytes_per_token_per_rank",
                          "block_bytes",
                          "sharding",
                          "capacity",
                          "lengths",
                          "ledgers",
                          "ledgers_per_rank"};
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v)
    {
        cr_assert_lt(i, sizeof want / sizeof want[0]);
        cr_assert_str_eq(key, want[i], "key %zu", i);
        i++;
    }
    cr_assert_eq(i, sizeof want / sizeof want[0]);
    const json_t *cap = json_object_get(j, "capacity");
    cr_assert_str_eq(json_string_value(json_object_get(cap, "budget_source")), "num-blocks");
    cr_assert_null(json_object_get(cap, "gpu_util"), "the GPU breakdown only for a GPU budget");
    cr_assert_eq(json_integer_value(json_object_get(cap, "paged_max_concurrency")), 3);
    json_decref(j);
}
