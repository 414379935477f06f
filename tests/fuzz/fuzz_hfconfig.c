/* Harness: the config.json reader (kv_model_from_hf_stream; README "Any Hugging Face
 * config.json").
 *
 * Checks on an accepted config: every geometry field ≥ 1, KV heads ≤ attention heads and
 * dividing them, active parameters ≤ total, a weight size in (0, 2]; the capacity model
 * downstream (bytes per token, sharding at TP 1, 2, 3, 8 and PP 1, 3, a block and a
 * budget) returns a result or a diagnosed error, never undefined behaviour.  A rejected
 * config has a diagnostic that names the file.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/model.h"

#define NAME "fuzz/Model/config.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fuzz_stream(data, size);
    if (!f)
        return 0;
    kv_model m;
    kv_diag d = {{0}};
    int rc = kv_model_from_hf_stream(f, NAME, &m, &d);
    fclose(f);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(strncmp(d.msg, NAME, strlen(NAME)) == 0, "diag does not name the file: %s",
                   d.msg);
        return 0;
    }
    FUZZ_CHECK(!strcmp(m.name, "Model"), "name '%s'", m.name);
    FUZZ_CHECK(m.num_layers >= 1 && m.num_heads >= 1 && m.num_kv_heads >= 1 && m.head_dim >= 1 &&
                   m.hidden_size >= 1,
               "a zero dimension");
    FUZZ_CHECK(m.num_kv_heads <= m.num_heads && m.num_heads % m.num_kv_heads == 0,
               "KV heads %u vs heads %u", m.num_kv_heads, m.num_heads);
    FUZZ_CHECK(m.active_params <= m.num_params, "active %llu > total %llu",
               (unsigned long long)m.active_params, (unsigned long long)m.num_params);
    FUZZ_CHECK((m.weight_bytes > 0 && m.weight_bytes <= 2 && !m.weight_quant[0]) ||
                   (m.weight_bytes == 0 && m.weight_quant[0]),
               "weight bytes %g, quantisation '%s'", m.weight_bytes, m.weight_quant);
    FUZZ_CHECK(m.kv_dtype == KV_DTYPE_BF16 || m.kv_dtype == KV_DTYPE_FP16, "dtype");
    double c = kv_model_bytes_per_token(&m);
    FUZZ_CHECK(c > 0 && isfinite(c), "bytes per token %g", c);
    static const uint32_t tps[] = {1, 2, 3, 8}, pps[] = {1, 3};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 2; j++) {
            kv_shard s;
            rc = kv_shard_compute(&m, tps[i], pps[j], &s, &d);
            if (rc != 0) {
                fuzz_check_diag(rc, &d);
                continue;
            }
            FUZZ_CHECK(s.bpt_rank_den >= 1 && s.bpt_rank_num >= 1, "c_rank %llu/%llu",
                       (unsigned long long)s.bpt_rank_num, (unsigned long long)s.bpt_rank_den);
            FUZZ_CHECK(s.layers_per_rank >= 1 && s.kv_heads_per_rank >= 1, "per rank");
            kv_capacity cap;
            rc = kv_capacity_from_budget(&s, (uint64_t)80 << 30, 16, &cap, &d);
            if (rc != 0)
                fuzz_check_diag(rc, &d);
            else
                FUZZ_CHECK(cap.num_blocks >= 2 && cap.usable_blocks == cap.num_blocks - 1 &&
                               (uint64_t)cap.num_blocks * cap.block_bytes <= cap.kv_budget_bytes,
                           "capacity");
        }
    return 0;
}
