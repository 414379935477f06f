/* setup: resolve model, GPU, sharding and pool capacity from options (setup.h).
 *
 * Order: exclusions between options, the model (preset or config.json) with its geometry
 * overrides and KV dtype, the GPU, sharding, then the pool from --num-blocks, --kv-budget
 * or the GPU.  A geometry that overflows comes from a config.json (a runtime input) unless
 * the overrides on the command line made it.  Every value was valid on its own, so a pool
 * that does not fit is a runtime outcome, not a usage error.
 */
#include "kvsim/setup.h"

#include <string.h>

void kv_setup_options_init(kv_setup_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = "llama-3-8b";
    o->gpu = "H100-SXM";
    o->gpu_util = 0.9;
    o->reserve = KV_SETUP_DEFAULT_RESERVE;
    o->tp = 1;
    o->pp = 1;
    o->block_size = 16;
}

bool kv_setup_model_is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n >= 5 && strcmp(s + n - 5, ".json") == 0);
}

/* The model with its overrides: 0, -KV_EINVAL (usage) or the config reader's error. */
static int resolve_model(const kv_setup_options *o, kv_setup *out, kv_diag *diag)
{
    kv_model *m = &out->model;
    kv_diag d;
    if (kv_setup_model_is_path(o->model)) {
        int rc = kv_model_from_hf_config(o->model, m, diag);
        if (rc != 0)
            return rc == -KV_EINVAL ? -KV_EPARSE : rc;
        out->model_path = o->model;
    } else if (kv_model_preset(o->model, m, &d) != 0) {
        return kv_diag_set(diag, -KV_EINVAL, "{model}: %s, or a config.json path", d.msg);
    }
    if (o->layers)
        m->num_layers = o->layers;
    if (o->kv_heads)
        m->num_kv_heads = o->kv_heads;
    if (o->head_dim)
        m->head_dim = o->head_dim;
    if (o->kv_dtype && kv_dtype_parse(o->kv_dtype, &m->kv_dtype) != 0)
        return kv_diag_set(diag, -KV_EINVAL, "{kv_dtype}: unknown dtype '%s'", o->kv_dtype);
    kv_dtype wd;
    if (o->weight_dtype) {
        if (kv_dtype_parse(o->weight_dtype, &wd) != 0)
            return kv_diag_set(diag, -KV_EINVAL, "{weight_dtype}: unknown dtype '%s'",
                               o->weight_dtype);
        m->weight_bytes = kv_dtype_bytes(wd);
        m->weight_quant[0] = '\0';
    } else if (m->weight_bytes <= 0) {
        /* Never a silent 2 bytes per parameter for a quantised checkpoint. */
        return kv_diag_set(diag, -KV_EPARSE,
                           "%s: %s: bytes per weight unknown; give {weight_dtype} (bf16, fp16, "
                           "fp8, int8 or int4)",
                           o->model, m->weight_quant[0] ? m->weight_quant : "quantization_config");
    }
    if (o->kv_scale_group) {
        if (m->kv_dtype == KV_DTYPE_FP16 || m->kv_dtype == KV_DTYPE_BF16)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{kv_scale_group}: scale metadata applies to quantised KV "
                               "dtypes (fp8, int8, int4), not %s",
                               kv_dtype_name(m->kv_dtype));
        m->kv_scale_group = o->kv_scale_group;
        m->kv_scale_bytes = o->kv_scale_bytes;
    }
    return 0;
}

/* The pool: from the block count, the budget or the GPU. */
static int resolve_pool(const kv_setup_options *o, kv_setup *out, kv_diag *diag)
{
    kv_diag d;
    int rc;
    out->block_size = o->block_size;
    if (o->num_blocks) {
        out->budget_source = "num-blocks";
        rc = kv_capacity_from_blocks(&out->shard, o->num_blocks, o->block_size, &out->cap, &d);
    } else if (o->kv_budget) {
        out->budget_source = "kv-budget";
        rc = kv_capacity_from_budget(&out->shard, o->kv_budget, o->block_size, &out->cap, &d);
    } else {
        out->budget_source = "gpu";
        if (out->model.num_params == 0)
            return kv_diag_set(diag, -KV_ECAPACITY,
                               "%s: weights unknown (the config has no vocab_size or "
                               "intermediate_size); give {kv_budget} or {num_blocks}",
                               o->model);
        rc = kv_capacity_from_gpu(&out->shard, &out->gpu, o->gpu_util, o->reserve, o->block_size,
                                  &out->cap, &d);
    }
    if (rc == -KV_ECAPACITY && strcmp(out->budget_source, "gpu") == 0)
        return kv_diag_set(diag, rc, "%s (more {tp} or {pp}, or a larger {gpu}, would help)",
                           d.msg);
    if (rc != 0)
        return kv_diag_set(diag, rc == -KV_EINVAL ? -KV_ERANGE : rc, "%s", d.msg);
    return 0;
}

int kv_setup_resolve(const kv_setup_options *o, kv_setup *out, kv_diag *diag)
{
    kv_diag d;
    int rc;
    memset(out, 0, sizeof *out);
    if (o->num_blocks && o->kv_budget)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{num_blocks} and {kv_budget} are mutually exclusive (give the pool "
                           "size one way)");
    if (!o->kv_scale_group != !o->kv_scale_bytes)
        return kv_diag_set(diag, -KV_EINVAL,
                           o->kv_scale_group ? "{kv_scale_group} needs {kv_scale_bytes} too"
                                             : "{kv_scale_bytes} needs {kv_scale_group} too");
    out->gpu_util = o->gpu_util;
    out->reserve = o->reserve;
    if ((rc = resolve_model(o, out, diag)) != 0)
        return rc;
    if (kv_gpu_preset(o->gpu, &out->gpu, &d) != 0)
        return kv_diag_set(diag, -KV_EINVAL, "{gpu}: %s", d.msg);
    if ((rc = kv_shard_compute(&out->model, o->tp, o->pp, &out->shard, &d)) != 0) {
        if (out->model_path && !o->layers && !o->kv_heads && !o->head_dim)
            return kv_diag_set(diag, -KV_ERANGE, "%s: %s", out->model_path, d.msg);
        return kv_diag_set(diag, -KV_EINVAL, "%s", d.msg);
    }
    return resolve_pool(o, out, diag);
}
