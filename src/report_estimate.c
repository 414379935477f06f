/* report_estimate: the JSON of `kvsim estimate --json` (include/kvsim/report.h).
 *
 * One object whose keys come out in a fixed order (the insertion order below; printed
 * with KV_JSON_FLAGS) and whose whole numbers are JSON integers, so scripts and golden
 * tests can compare it byte for byte.  Sections: model, gpu, the KV element type and
 * bytes per token, sharding, capacity (the budget's source and its breakdown, blocks,
 * tokens, the three concurrencies), lengths, and the whole-model and per-rank ledgers.
 */
#include <math.h>
#include <string.h>

#include "kvsim/estimate.h"
#include "kvsim/report.h"

/* Whole numbers as JSON integers, others as reals. */
static json_t *jnum(double v)
{
    if (v == floor(v) && fabs(v) < 9.0e15)
        return json_integer((json_int_t)v);
    return json_real(v);
}

static json_t *ju(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static void set(json_t *o, const char *key, json_t *v)
{
    json_object_set_new(o, key, v);
}

static json_t *ledgers_json(const kv_ledgers *l)
{
    json_t *o = json_object();
    set(o, "effective_tokens", ju(l->effective_tokens));
    set(o, "padded_tokens", ju(l->padded_tokens));
    set(o, "allocated_tokens", ju(l->allocated_tokens));
    set(o, "effective_bytes", jnum(l->effective_bytes));
    set(o, "padded_bytes", jnum(l->padded_bytes));
    set(o, "paged_bytes", jnum(l->paged_bytes));
    set(o, "tail_waste_tokens", ju(l->tail_waste_tokens));
    set(o, "tail_waste_bytes", jnum(l->tail_waste_bytes));
    set(o, "logical_blocks", ju(l->logical_blocks));
    set(o, "physical_blocks", ju(l->physical_blocks));
    set(o, "physical_bytes", jnum(l->physical_bytes));
    return o;
}

static json_t *model_json(const kv_setup *s)
{
    const kv_model *m = &s->model;
    json_t *o = json_object();
    set(o, "name", kv_json_text(m->name));
    set(o, "source", kv_json_text(s->model_path ? s->model_path : "preset"));
    set(o, "num_layers", ju(m->num_layers));
    set(o, "num_heads", ju(m->num_heads));
    set(o, "num_kv_heads", ju(m->num_kv_heads));
    set(o, "head_dim", ju(m->head_dim));
    set(o, "hidden_size", ju(m->hidden_size));
    set(o, "vocab_size", ju(m->vocab_size));
    set(o, "num_params", ju(m->num_params));
    set(o, "active_params", ju(m->active_params));
    set(o, "weight_bytes_per_param", jnum(m->weight_bytes));
    return o;
}

static json_t *sharding_json(const kv_shard *sh)
{
    json_t *o = json_object();
    set(o, "tp", ju(sh->tp));
    set(o, "pp", ju(sh->pp));
    set(o, "layers_per_rank", ju(sh->layers_per_rank));
    set(o, "kv_heads_per_rank", ju(sh->kv_heads_per_rank));
    set(o, "kv_replicated", json_boolean(sh->kv_replicated));
    set(o, "kv_replication", ju(sh->kv_replication));
    set(o, "kv_indivisible", json_boolean(sh->kv_indivisible));
    set(o, "weight_bytes_per_rank", ju(sh->weight_bytes_rank));
    return o;
}

static json_t *capacity_json(const kv_setup *s, const kv_setup_options *so, const kv_estimate *e)
{
    json_t *o = json_object();
    set(o, "budget_source", json_string(s->budget_source));
    if (strcmp(s->budget_source, "gpu") == 0) {
        set(o, "gpu_util", json_real(so->gpu_util));
        set(o, "reserve_bytes", ju(so->reserve));
    }
    set(o, "kv_budget_bytes", ju(s->cap.kv_budget_bytes));
    set(o, "num_blocks", ju(s->cap.num_blocks));
    set(o, "usable_blocks", ju(s->cap.usable_blocks));
    set(o, "max_tokens", ju(s->cap.max_tokens));
    set(o, "target_len", ju(e->opt.target_len));
    set(o, "safety", json_real(e->opt.safety));
    set(o, "blocks_per_request", ju(e->blocks_per_request));
    set(o, "max_concurrency", ju(e->max_concurrency));
    set(o, "paged_max_concurrency", ju(e->paged_max_concurrency));
    set(o, "usable_token_concurrency", ju(e->usable_token_concurrency));
    return o;
}

json_t *kv_estimate_json(const kv_setup *s, const kv_setup_options *so, const kv_estimate *e)
{
    const kv_model *m = &s->model;
    json_t *root = json_object(), *o;
    set(root, "model", model_json(s));
    o = json_object();
    set(o, "name", json_string(s->gpu.name));
    set(o, "mem_bytes", ju(s->gpu.mem_bytes));
    set(o, "hbm_bytes_per_s", jnum(s->gpu.hbm_bw));
    set(o, "peak_flops", jnum(s->gpu.peak_flops));
    set(root, "gpu", o);
    set(root, "kv_dtype", json_string(kv_dtype_name(m->kv_dtype)));
    set(root, "kv_dtype_bytes", jnum(kv_dtype_bytes(m->kv_dtype)));
    set(root, "kv_scale_group", ju(m->kv_scale_group));
    set(root, "kv_scale_bytes", ju(m->kv_scale_bytes));
    set(root, "block_size", ju(s->block_size));
    set(root, "bytes_per_token", jnum(s->shard.bytes_per_token));
    set(root, "bytes_per_token_per_rank", jnum(s->shard.bytes_per_token_rank));
    set(root, "block_bytes", ju(s->cap.block_bytes));
    set(root, "sharding", sharding_json(&s->shard));
    set(root, "capacity", capacity_json(s, so, e));
    o = json_object();
    set(o, "count", ju(e->opt.n_lengths));
    set(o, "total_tokens", ju(e->sum_len));
    set(o, "min", ju(e->min_len));
    set(o, "max", ju(e->max_len));
    set(o, "shared_prefix", ju(e->opt.shared_prefix));
    set(root, "lengths", o);
    set(root, "ledgers", ledgers_json(&e->whole));
    set(root, "ledgers_per_rank", ledgers_json(&e->rank));
    return root;
}
