/* hfconfig: read a Hugging Face config.json into a kv_model (DESIGN §2 "Any HF config.json").
 *
 * Fields read (all JSON integers; a real such as 32.0, a string, zero or a negative number
 * is an error naming the file and the field; null counts as absent):
 *   required  num_hidden_layers, num_attention_heads, hidden_size
 *   optional  num_key_value_heads (absent: MHA, = num_attention_heads),
 *             head_dim (absent: hidden_size / num_attention_heads, which must divide),
 *             vocab_size, intermediate_size, MoE fields (below), tie_word_embeddings,
 *             attention_bias, model_type, torch_dtype / dtype, quantization_config.
 * Multimodal configs that keep the language model under "text_config" are read from there.
 *
 * Parameters (weights = params · bytes per weight) are derived when vocab_size and an MLP
 * width are present, for a decoder with a gated (SwiGLU) MLP as in Llama, Mistral, Qwen and
 * Mixtral:
 *   per layer  attention  h·(H·d) + 2·h·(H_kv·d) + (H·d)·h      q, k, v, o projections
 *                         + (H·d + 2·H_kv·d) if attention_bias or model_type qwen2*
 *              MLP        3·h·I                                   dense
 *                         E·3·h·I_e + h·E (+ 3·h·I_s + h shared expert)   MoE
 *              norms      2·h
 *   total      V·h (embedding) + L·layer + h (final norm) + V·h (LM head, unless tied)
 * MoE: E = num_local_experts | num_experts | n_routed_experts, k = num_experts_per_tok,
 * I_e = moe_intermediate_size else intermediate_size, I_s = shared_expert_intermediate_size.
 * Active parameters count k experts instead of E.  The formula reproduces the published
 * counts of every model preset exactly (tests/test_model.c checks it on their configs).
 * Without vocab_size or an MLP width the parameter count is 0 = unknown, and the budget
 * must then be given (--kv-budget / --num-blocks).
 *
 * KV dtype: bf16 unless torch_dtype is float16 (vLLM's "auto" KV dtype is the model dtype,
 * and it serves float32 checkpoints in 16 bits).  Weight bytes: 2, or from
 * quantization_config (src/hfquant.c: "bits", fp8, bitsandbytes, compressed-tensors, …),
 * an approximation that ignores unquantised embeddings and scales; a quantisation it
 * cannot read leaves them 0 (unknown), which setup refuses without --weight-dtype.
 *
 * Out of scope: MLA (DeepSeek's kv_lora_rank), sliding-window and hybrid attention, whose
 * per-token KV is not 2·L·H_kv·d — such configs are read as plain full attention.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hfconfig_internal.h"
#include "kvsim/model.h"

typedef struct reader {
    const char *path;   /* for messages */
    const char *prefix; /* "text_config." when reading the nested object, else "" */
    const json_t *obj;  /* the object holding the language-model fields; borrowed */
    kv_diag *diag;      /* may be NULL */
} reader;

/* An integer field ≥ min: 0 with *present set, or -KV_EPARSE. */
static int get_uint(const reader *r, const char *key, bool required, uint64_t min, uint64_t max,
                    uint64_t *out, bool *present)
{
    const json_t *v = json_object_get(r->obj, key);
    *present = false;
    if (!v || json_is_null(v)) {
        if (required)
            return kv_diag_set(r->diag, -KV_EPARSE, "%s: missing required field '%s%s'", r->path,
                               r->prefix, key);
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < min ||
        (uint64_t)json_integer_value(v) > max) {
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        int rc = kv_diag_set(r->diag, -KV_EPARSE, "%s: '%s%s' must be %s integer, not %.40s",
                             r->path, r->prefix, key, min > 0 ? "a positive" : "a non-negative",
                             text ? text : "?");
        free(text);
        return rc;
    }
    *out = (uint64_t)json_integer_value(v);
    *present = true;
    return 0;
}

static int get_u32(const reader *r, const char *key, bool required, uint32_t *out, bool *present)
{
    uint64_t v = 0;
    int rc = get_uint(r, key, required, 1, UINT32_MAX, &v, present);
    if (rc == 0 && *present)
        *out = (uint32_t)v;
    return rc;
}

static bool get_bool(const json_t *obj, const char *key, bool dflt)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static const char *get_str(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Model name: the directory of ".../NAME/config.json", else the file name without .json. */
static void model_name(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "config.json") == 0 && base != path) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        if (end > start) {
            snprintf(buf, n, "%.*s", (int)(end - start), start);
            return;
        }
    }
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    snprintf(buf, n, "%.*s", (int)len, base);
}

/* The dimensions the parameter formula needs, named as in the comment at the top. */
typedef struct dims {
    uint64_t L, H, Hkv, d, h; /* layers, heads, KV heads, head dim, hidden size */
    uint64_t V, I;            /* vocab size, dense MLP width */
    uint64_t E, k;            /* experts (0 = dense), experts per token (0 = all) */
    uint64_t Ie, Is;          /* expert MLP width, shared-expert width (0 = none) */
    bool tied;                /* LM head shares the embedding matrix */
    bool bias;                /* q/k/v projections carry biases */
} dims;

static void derive_params(const dims *m, uint64_t *total, uint64_t *active)
{
    uint64_t qo = 2 * m->h * m->H * m->d, kv = 2 * m->h * m->Hkv * m->d;
    uint64_t attn = qo + kv + (m->bias ? m->H * m->d + 2 * m->Hkv * m->d : 0);
    uint64_t mlp_total, mlp_active;
    if (m->E > 0) {
        uint64_t expert = 3 * m->h * m->Ie, router = m->h * m->E;
        uint64_t shared = m->Is ? 3 * m->h * m->Is + m->h : 0;
        mlp_total = m->E * expert + router + shared;
        mlp_active = (m->k ? m->k : m->E) * expert + router + shared;
    } else {
        mlp_total = mlp_active = 3 * m->h * m->I;
    }
    uint64_t norms = 2 * m->h, embed = m->V * m->h;
    uint64_t outer = embed + m->h + (m->tied ? 0 : embed);
    *total = outer + m->L * (attn + mlp_total + norms);
    *active = outer + m->L * (attn + mlp_active + norms);
}

static int read_model(const reader *r, const json_t *root, kv_model *out)
{
    dims m = {0};
    uint32_t L = 0, H = 0, Hkv = 0, d = 0, h = 0, V = 0;
    bool has_kv, has_d, has_v, has_i, has_ie, has_is, has_e = false, has_k, p;
    int rc;
    uint64_t u;
    if ((rc = get_u32(r, "num_hidden_layers", true, &L, &p)) ||
        (rc = get_u32(r, "num_attention_heads", true, &H, &p)) ||
        (rc = get_u32(r, "hidden_size", true, &h, &p)) ||
        (rc = get_u32(r, "num_key_value_heads", false, &Hkv, &has_kv)) ||
        (rc = get_u32(r, "head_dim", false, &d, &has_d)) ||
        (rc = get_u32(r, "vocab_size", false, &V, &has_v)) ||
        (rc = get_uint(r, "intermediate_size", false, 1, UINT32_MAX, &m.I, &has_i)) ||
        (rc = get_uint(r, "moe_intermediate_size", false, 1, UINT32_MAX, &m.Ie, &has_ie)) ||
        (rc = get_uint(r, "shared_expert_intermediate_size", false, 0, UINT32_MAX, &m.Is,
                       &has_is)) ||
        (rc = get_uint(r, "num_experts_per_tok", false, 0, 65536, &m.k, &has_k)))
        return rc;
    /* Expert count under its three spellings; 0 means a dense model. */
    static const char *const expert_keys[] = {"num_local_experts", "num_experts",
                                              "n_routed_experts"};
    for (size_t i = 0; i < 3 && !has_e; i++) {
        if ((rc = get_uint(r, expert_keys[i], false, 0, 65536, &u, &has_e)))
            return rc;
        if (has_e)
            m.E = u;
    }
    if (!has_kv)
        Hkv = H;
    if (!has_d) {
        if (h % H != 0)
            return kv_diag_set(r->diag, -KV_EPARSE,
                               "%s: no 'head_dim', and hidden_size %u is not a multiple of "
                               "num_attention_heads %u",
                               r->path, h, H);
        d = h / H;
    }
    memset(out, 0, sizeof *out);
    model_name(r->path, out->name, sizeof out->name);
    out->num_layers = L;
    out->num_heads = H;
    out->num_kv_heads = Hkv;
    out->head_dim = d;
    out->hidden_size = h;
    out->vocab_size = has_v ? V : 0;

    const char *type = get_str(r->obj, "model_type");
    const char *dtype = get_str(r->obj, "torch_dtype");
    if (!dtype)
        dtype = get_str(r->obj, "dtype");
    if (!dtype)
        dtype = get_str(root, "torch_dtype");
    out->kv_dtype = dtype && strcmp(dtype, "float16") == 0 ? KV_DTYPE_FP16 : KV_DTYPE_BF16;
    /* Unknown quantisation leaves weight_bytes 0 for kv_setup_resolve to refuse. */
    kv__hf_weight_bytes(json_object_get(root, "quantization_config"), &out->weight_bytes,
                        out->weight_quant, sizeof out->weight_quant);

    m.L = L, m.H = H, m.Hkv = Hkv, m.d = d, m.h = h, m.V = V;
    m.tied = get_bool(r->obj, "tie_word_embeddings", get_bool(root, "tie_word_embeddings", false));
    out->tied_embeddings = m.tied; /* the step-time model streams the table once, not twice */
    m.bias = get_bool(r->obj, "attention_bias", false) || (type && strncmp(type, "qwen2", 5) == 0);
    if (!has_ie)
        m.Ie = m.I;
    bool has_mlp = m.E > 0 ? (has_ie || has_i) : has_i;
    if (has_v && has_mlp) {
        /* Every factor is < 2^32 and the sums stay far below 2^64 for any real model; a
         * config that claims otherwise gets an absurd count, not undefined behaviour. */
        derive_params(&m, &out->num_params, &out->active_params);
    }
    return 0;
}

int kv_model_from_hf_config(const char *path, kv_model *out, kv_diag *diag)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kv_diag_set(diag, -KV_ENOENT, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return kv_diag_set(diag, -KV_EIO, "cannot read '%s': %s", path, strerror(EISDIR));
    }
    json_error_t je;
    json_t *root = json_loadf(f, 0, &je);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error) {
        json_decref(root);
        return kv_diag_set(diag, -KV_EIO, "cannot read '%s'", path);
    }
    if (!root)
        return kv_diag_set(diag, -KV_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    int rc;
    if (!json_is_object(root)) {
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: expected a JSON object (a config.json)", path);
    } else {
        reader r = {path, "", root, diag};
        const json_t *text = json_object_get(root, "text_config");
        if (!json_object_get(root, "num_hidden_layers") && json_is_object(text)) {
            r.obj = text;
            r.prefix = "text_config.";
        }
        rc = read_model(&r, root, out);
    }
    json_decref(root);
    return rc;
}
