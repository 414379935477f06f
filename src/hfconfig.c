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
 * Validation, each a message naming the file and the field: duplicate keys (jansson's
 * JSON_REJECT_DUPLICATES; the key is named), num_key_value_heads above num_attention_heads
 * or not dividing it (grouped-query attention: each KV head serves a whole group), an MoE
 * top-k (num_experts_per_tok) above the expert count, a parameter count that does not fit
 * 64 bits (every product and sum is checked), and a file over KV_HF_CONFIG_MAX (16 MiB;
 * the file is read whole, bounded, then parsed).
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
#include "kvsim/mem.h"
#include "kvsim/model.h"
#include "kvsim/path.h"
#include "kvsim/text.h"

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
        /* The value as written, shortened with "..." when long (an object, a long string):
         * never cut silently, so the message cannot look like it ends elsewhere. */
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        char sb[KV_SHOWN_MAX];
        int rc = kv_diag_set(r->diag, -KV_EPARSE, "%s: '%s%s' must be %s integer, not %s", r->path,
                             r->prefix, key, min > 0 ? "a positive" : "a non-negative",
                             text ? kv_shown(text, sb) : "?");
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

/* Checked 64-bit arithmetic: *ok goes false on the first wrap and stays false. */
static uint64_t mul(uint64_t a, uint64_t b, bool *ok)
{
    if (a != 0 && b > UINT64_MAX / a)
        *ok = false;
    return a * b;
}

static uint64_t add(uint64_t a, uint64_t b, bool *ok)
{
    if (b > UINT64_MAX - a)
        *ok = false;
    return a + b;
}

/* The parameter formula of the comment at the top; false when a count does not fit 64
 * bits (a config claiming billions of layers and a vocabulary of billions). */
static bool derive_params(const dims *m, uint64_t *total, uint64_t *active)
{
    bool ok = true;
    uint64_t hd = mul(m->H, m->d, &ok), kvd = mul(m->Hkv, m->d, &ok);
    uint64_t qo = mul(2, mul(m->h, hd, &ok), &ok), kv = mul(2, mul(m->h, kvd, &ok), &ok);
    uint64_t attn = add(qo, kv, &ok);
    if (m->bias)
        attn = add(attn, add(hd, mul(2, kvd, &ok), &ok), &ok);
    uint64_t mlp_total, mlp_active;
    if (m->E > 0) {
        uint64_t expert = mul(3, mul(m->h, m->Ie, &ok), &ok), router = mul(m->h, m->E, &ok);
        uint64_t shared = m->Is ? add(mul(3, mul(m->h, m->Is, &ok), &ok), m->h, &ok) : 0;
        mlp_total = add(add(mul(m->E, expert, &ok), router, &ok), shared, &ok);
        mlp_active = add(add(mul(m->k ? m->k : m->E, expert, &ok), router, &ok), shared, &ok);
    } else {
        mlp_total = mlp_active = mul(3, mul(m->h, m->I, &ok), &ok);
    }
    uint64_t norms = mul(2, m->h, &ok), embed = mul(m->V, m->h, &ok);
    uint64_t outer = add(add(embed, m->h, &ok), m->tied ? 0 : embed, &ok);
    *total = add(outer, mul(m->L, add(add(attn, mlp_total, &ok), norms, &ok), &ok), &ok);
    *active = add(outer, mul(m->L, add(add(attn, mlp_active, &ok), norms, &ok), &ok), &ok);
    return ok;
}

/* The expert count under its three spellings (0: a dense model) into m->E, and top-k
 * (m->k, already read) checked against it. */
static int read_experts(const reader *r, dims *m)
{
    static const char *const expert_keys[] = {"num_local_experts", "num_experts",
                                              "n_routed_experts"};
    const char *expert_key = NULL;
    bool has_e = false;
    uint64_t u;
    int rc;
    for (size_t i = 0; i < 3 && !has_e; i++) {
        if ((rc = get_uint(r, expert_keys[i], false, 0, 65536, &u, &has_e)))
            return rc;
        if (has_e) {
            m->E = u;
            expert_key = expert_keys[i];
        }
    }
    if (m->E > 0 && m->k > m->E)
        return kv_diag_set(r->diag, -KV_EPARSE,
                           "%s: '%snum_experts_per_tok' is %llu, more than the %llu experts of "
                           "'%s%s'",
                           r->path, r->prefix, (unsigned long long)m->k, (unsigned long long)m->E,
                           r->prefix, expert_key);
    return 0;
}

/* Grouped-query attention: each KV head serves a whole group of query heads, so there are
 * at most as many KV heads as query heads and they divide them (vLLM and every attention
 * kernel assume it; a config that says otherwise would silently change the bytes per
 * token). No 'num_key_value_heads' (has_kv false) means one per query head. */
static int check_heads(const reader *r, uint32_t H, bool has_kv, uint32_t *Hkv)
{
    if (!has_kv)
        *Hkv = H;
    if (*Hkv > H)
        return kv_diag_set(r->diag, -KV_EPARSE,
                           "%s: '%snum_key_value_heads' is %u, more than "
                           "'%snum_attention_heads' %u",
                           r->path, r->prefix, *Hkv, r->prefix, H);
    if (H % *Hkv != 0)
        return kv_diag_set(r->diag, -KV_EPARSE,
                           "%s: '%snum_key_value_heads' %u does not divide "
                           "'%snum_attention_heads' %u (each KV head serves a whole group of "
                           "query heads)",
                           r->path, r->prefix, *Hkv, r->prefix, H);
    return 0;
}

static int read_model(const reader *r, const json_t *root, kv_model *out)
{
    dims m = {0};
    uint32_t L = 0, H = 0, Hkv = 0, d = 0, h = 0, V = 0;
    bool has_kv, has_d, has_v, has_i, has_ie, has_is, has_k, p;
    int rc;
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
    if ((rc = read_experts(r, &m)) || (rc = check_heads(r, H, has_kv, &Hkv)))
        return rc;
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
    if (has_v && has_mlp && !derive_params(&m, &out->num_params, &out->active_params))
        return kv_diag_set(r->diag, -KV_ERANGE,
                           "%s: the parameter count from '%svocab_size', '%shidden_size', the "
                           "MLP widths and '%snum_hidden_layers' does not fit 64 bits",
                           r->path, r->prefix, r->prefix, r->prefix);
    return 0;
}

/* The key jansson rejected as a duplicate: the string token that ends just before byte
 * `pos` (jansson reports where its lexer stopped; it only quotes tokens of up to 20
 * characters itself).  Copied raw, truncated with "...".  false if it cannot be found. */
static bool duplicate_key(const char *text, size_t pos, char *out, size_t cap)
{
    if (pos < 2 || text[pos - 1] != '"')
        return false;
    size_t end = pos - 1, start = end;
    for (;;) {
        if (start == 0)
            return false;
        start--;
        if (text[start] != '"')
            continue;
        size_t bs = 0; /* an escaped quote is preceded by an odd number of backslashes */
        while (start - bs > 0 && text[start - bs - 1] == '\\')
            bs++;
        if (bs % 2 == 0)
            break;
    }
    size_t len = end - start - 1;
    if (len + 1 > cap)
        snprintf(out, cap, "%.*s...", (int)(cap - 4), text + start + 1);
    else
        snprintf(out, cap, "%.*s", (int)len, text + start + 1);
    return true;
}

int kv_model_from_hf_stream(FILE *f, const char *path, kv_model *out, kv_diag *diag)
{
    kv_mem_route_json();
    char *text = NULL;
    size_t n = 0;
    /* At most KV_HF_CONFIG_MAX bytes: -KV_EIO (read error) or -KV_EPARSE (too big). */
    int rc =
        kv_path_slurp(f, path, KV_HF_CONFIG_MAX, " (a config.json is a few KB)", &text, &n, diag);
    if (rc < 0)
        return rc;
    json_error_t je;
    /* Duplicate keys are an error: which of two "num_key_value_heads" would HF use?  The
     * message names the key ("duplicate object key near '"num_key_value_heads"'"). */
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        char key[72];
        rc = json_error_code(&je) == json_error_duplicate_key &&
                     duplicate_key(text, (size_t)je.position, key, sizeof key)
                 ? kv_diag_set(diag, -KV_EPARSE, "%s:%d:%d: duplicate key '%s'", path, je.line,
                               je.column, key)
                 : kv_diag_set(diag, -KV_EPARSE, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        free(text);
        return rc;
    }
    free(text);
    if (!json_is_object(root)) {
        rc = kv_diag_set(diag, -KV_EPARSE, "%s: expected a JSON object (a config.json)", path);
    } else {
        reader r = {path, "", root, diag};
        const json_t *tc = json_object_get(root, "text_config");
        if (!json_object_get(root, "num_hidden_layers") && json_is_object(tc)) {
            r.obj = tc;
            r.prefix = "text_config.";
        }
        rc = read_model(&r, root, out);
    }
    json_decref(root);
    return rc;
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
    int rc = kv_model_from_hf_stream(f, path, out, diag);
    fclose(f);
    return rc;
}
