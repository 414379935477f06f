/* timing: step-time models (include/kvsim/timing.h).
 *
 * Pure arithmetic over doubles, rounded once to integer nanoseconds with llround, so the
 * same inputs give the same clock on every machine.  No clamp: a step may take 0 ns
 * (linear:0,… on a step that schedules nothing); the engine's order stays well defined by
 * sequence numbers, and every step makes progress (tokens or a preemption).
 *
 * The roofline's free parameters live in one table (keys[] below) that drives the parser,
 * the "given" bits, kv_timing_bind's defaults and kv_timing_describe, so the spec a run
 * echoes is the spec that reproduces it.  Parsing is two-phase: every KEY=VALUE is checked
 * and recorded, then kv_timing_bind fills the keys left out from the GPU preset (src/
 * presets.c, where each figure is cited) — the parser never needs to know the GPU.
 *
 * Out of scope (docs/accuracy.md says so): the API server in front of the engine, overlap of
 * communication with compute, several PP micro-batches in flight, expert parallelism.
 */
#include "kvsim/timing.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/text.h"

/* ---- the roofline parameter table ---------------------------------------------------- */

/* id, name, field, lower bound, bound open, upper bound.  Order = describe's order.  link is
 * the one non-numeric key (its field column is unused). */
#define ROOFLINE_KEYS(X)                                                                           \
    X(OVERHEAD, "overhead", overhead_s, 0, false, 3600)                                            \
    X(SEQ, "seq_overhead", seq_overhead_s, 0, false, 1)                                            \
    X(MFU, "mfu", mfu, 0, true, 1)                                                                 \
    X(MFU8, "mfu8", mfu_fp8, 0, true, 1)                                                           \
    X(MBU, "mbu", mbu, 0, true, 1)                                                                 \
    X(ATTN, "attn", attn_bw, 0, true, 1)                                                           \
    X(ATTN_LAT, "attn_lat", attn_lat_s, 0, false, 1)                                               \
    X(LAYER_LAT, "layer_lat", layer_lat_s, 0, false, 1)                                            \
    X(SMOOTH, "smooth", smooth, 0, false, 100)                                                     \
    X(ACT_BYTES, "act_bytes", act_bytes, 0, false, 1e6)                                            \
    X(LINK, "link", overhead_s, 0, false, 0)                                                       \
    X(AR_BW, "ar_bw", ar_bw, 0, false, 1e15)                                                       \
    X(AR_LAT, "ar_lat", ar_lat_s, 0, false, 1)                                                     \
    X(PP_BW, "pp_bw", pp_bw, 0, false, 1e15)                                                       \
    X(PP_LAT, "pp_lat", pp_lat_s, 0, false, 1)

#define AS_ENUM(id, name, fld, lo, open, hi) K_##id,
enum { ROOFLINE_KEYS(AS_ENUM) N_KEYS };
#undef AS_ENUM

typedef struct key {
    const char *name;
    size_t off;   /* offset of the double in kv_timing (unused for link) */
    double lo;    /* lower bound */
    bool lo_open; /* value must exceed lo */
    double hi;    /* upper bound, inclusive */
} key;

#define AS_KEY(id, name, fld, lo, open, hi) {name, offsetof(kv_timing, fld), lo, open, hi},
static const key keys[N_KEYS] = {ROOFLINE_KEYS(AS_KEY)};
#undef AS_KEY

/* "overhead, seq_overhead, …, pp_lat, " — printed without its last two characters. */
#define AS_NAME(id, name, fld, lo, open, hi) name ", "
static const char key_names[] = ROOFLINE_KEYS(AS_NAME);
#undef AS_NAME
#define KEY_NAMES_LEN ((int)sizeof key_names - 3)

static double *field(kv_timing *t, const key *k)
{
    return (double *)((char *)t + k->off);
}

static bool given(const kv_timing *t, int k)
{
    return (t->given >> k) & 1u;
}

/* Effective values of the parameters whose 0 means "as another one". */
static double eff_mfu8(const kv_timing *t)
{
    return t->mfu_fp8 > 0 ? t->mfu_fp8 : t->mfu;
}

static double eff_attn(const kv_timing *t)
{
    return t->attn_bw > 0 ? t->attn_bw : t->mbu;
}

/* ---- parsing -------------------------------------------------------------------------- */

/* A non-negative number in the one grammar (kvsim/text.h) filling exactly [s, end). */
static int parse_num(const char *s, const char *end, double *out)
{
    double v;
    if (kv_parse_number(s, (size_t)(end - s), &v) != 0 || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* "A,B,C": three non-negative numbers. */
static int parse_linear(const char *args, double v[3])
{
    kv_kvlist list;
    kv_kvlist_init(&list, args, 0, NULL);
    kv_kvitem it;
    int n = 0, got;
    while ((got = kv_kvlist_next(&list, &it, NULL)) == 1 && n < 3 &&
           parse_num(it.text, it.text + strlen(it.text), &v[n]) == 0)
        n++;
    kv_kvlist_release(&list);
    return n == 3 && got == 0 ? 0 : -1;
}

static int parse_roofline(const char *args, kv_timing *t, kv_diag *diag, const char *spec)
{
    const char *p = args;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        int len = (int)(end - p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (!eq)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': expected KEY=VALUE, got '%.*s' (keys: %.*s)",
                               spec, len, p, KEY_NAMES_LEN, key_names);
        size_t klen = (size_t)(eq - p);
        size_t k = 0;
        while (k < N_KEYS && !(strlen(keys[k].name) == klen && strncmp(p, keys[k].name, klen) == 0))
            k++;
        if (k == N_KEYS)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': unknown key '%.*s' (keys: %.*s)", spec,
                               (int)klen, p, KEY_NAMES_LEN, key_names);
        if (given(t, (int)k))
            return kv_diag_set(diag, -KV_EINVAL, "{time_model} '%s': '%s' given twice", spec,
                               keys[k].name);
        const char *val = eq + 1;
        int vlen = (int)(end - val);
        if (k == K_LINK) {
            char name[32];
            kv_link l;
            if (vlen <= 0 || vlen >= (int)sizeof name)
                return kv_diag_set(diag, -KV_EINVAL,
                                   "{time_model} '%s': unknown interconnect '%.*s' (known: %s)",
                                   spec, vlen, val, kv_link_names());
            memcpy(name, val, (size_t)vlen);
            name[vlen] = '\0';
            if (kv_link_parse(name, &l) != 0)
                return kv_diag_set(diag, -KV_EINVAL,
                                   "{time_model} '%s': unknown interconnect '%s' (known: %s)", spec,
                                   name, kv_link_names());
            t->link = l;
        } else {
            double v;
            if (parse_num(val, end, &v) != 0)
                return kv_diag_set(diag, -KV_EINVAL,
                                   "{time_model} '%s': '%s' needs a non-negative number, got "
                                   "'%.*s'",
                                   spec, keys[k].name, vlen, val);
            const key *kk = &keys[k];
            if ((kk->lo_open ? !(v > kk->lo) : !(v >= kk->lo)) || !(v <= kk->hi))
                return kv_diag_set(diag, -KV_EINVAL,
                                   "{time_model} '%s': '%s' must be in %c%g, %g], got %g", spec,
                                   kk->name, kk->lo_open ? '(' : '[', kk->lo, kk->hi, v);
            if (k == K_SMOOTH && v > 0 && v < 1) /* below 1 the "maximum" exceeds C + M */
                return kv_diag_set(diag, -KV_EINVAL,
                                   "{time_model} '%s': 'smooth' must be 0 (the maximum) or in "
                                   "[1, 100], got %g",
                                   spec, v);
            *field(t, kk) = v;
        }
        t->given |= 1u << k;
        if (!comma)
            return 0;
        p = comma + 1; /* "roofline:" and a trailing comma leave an empty item: an error */
    }
}

int kv_timing_parse(const char *spec, kv_timing *t, kv_diag *diag)
{
    char sb[KV_SHOWN_MAX];
    const char *shown = kv_shown(spec, sb); /* the spec as messages quote it */
    memset(t, 0, sizeof *t);
    /* GPU-less values; kv_timing_bind replaces every key the spec leaves out. */
    t->overhead_s = KV_ROOFLINE_OVERHEAD_S;
    t->seq_overhead_s = KV_ROOFLINE_SEQ_OVERHEAD_S;
    t->mfu = KV_ROOFLINE_MFU;
    t->mbu = KV_ROOFLINE_MBU;
    t->tp = t->pp = 1;
    if (strcmp(spec, "roofline") == 0) {
        t->kind = KV_TIME_ROOFLINE;
        return 0;
    }
    if (strncmp(spec, "roofline:", 9) == 0) {
        t->kind = KV_TIME_ROOFLINE;
        return parse_roofline(spec + 9, t, diag, shown);
    }
    if (strncmp(spec, "fixed:", 6) == 0) {
        double dt;
        if (parse_num(spec + 6, spec + strlen(spec), &dt) != 0)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': fixed:DT needs DT in seconds, e.g. fixed:0.01",
                               shown);
        if (!(dt * 1e9 < 9.2e18))
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': a step of %g s does not fit 64-bit "
                               "nanoseconds",
                               shown, dt);
        long long ns = llround(dt * 1e9);
        if (ns < 1)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': a step must take at least 1 ns", shown);
        t->kind = KV_TIME_FIXED;
        t->fixed_ns = ns;
        return 0;
    }
    if (strncmp(spec, "linear:", 7) == 0) {
        double v[3];
        if (parse_linear(spec + 7, v) != 0)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{time_model} '%s': linear:A,B,C needs three non-negative "
                               "numbers (seconds, seconds/token, seconds/KV token read)",
                               shown);
        if (v[0] == 0 && v[1] == 0 && v[2] == 0)
            return kv_diag_set(diag, -KV_EINVAL, "{time_model} '%s': a step must take some time",
                               shown);
        t->kind = KV_TIME_LINEAR;
        t->a = v[0];
        t->b = v[1];
        t->c = v[2];
        return 0;
    }
    return kv_diag_set(diag, -KV_EINVAL,
                       "{time_model} '%s': expected roofline[:KEY=VALUE,...], linear:A,B,C or "
                       "fixed:DT",
                       shown);
}

/* ---- binding -------------------------------------------------------------------------- */

/* The keys whose default is the GPU preset's own figure (kv_gpu, src/presets.c). */
static const struct {
    int key;
    size_t gpu_off;
} from_gpu[] = {
    {K_MFU, offsetof(kv_gpu, mfu)},           {K_MFU8, offsetof(kv_gpu, mfu_fp8)},
    {K_MBU, offsetof(kv_gpu, mbu)},           {K_ATTN, offsetof(kv_gpu, attn_bw)},
    {K_ATTN_LAT, offsetof(kv_gpu, attn_lat)}, {K_LAYER_LAT, offsetof(kv_gpu, layer_lat)},
    {K_SMOOTH, offsetof(kv_gpu, smooth)},     {K_ACT_BYTES, offsetof(kv_gpu, act_bytes)},
};

void kv_timing_bind(kv_timing *t, const kv_model *m, const kv_gpu *g, const kv_shard *s)
{
    t->tp = s->tp;
    t->pp = s->pp;
    t->layers_rank = s->layers_per_rank;
    t->hidden = m->hidden_size;
    t->peak_flops = g->peak_flops;
    t->hbm_bw = g->hbm_bw;
    /* The GPU's figures for every key the spec left out. */
    for (size_t i = 0; i < sizeof from_gpu / sizeof from_gpu[0]; i++)
        if (!given(t, from_gpu[i].key))
            *field(t, &keys[from_gpu[i].key]) =
                *(const double *)((const char *)g + from_gpu[i].gpu_off);
    if (!given(t, K_LINK))
        t->link = g->link;
    double bw, lat;
    kv_link_allreduce(t->link, s->tp, &bw, &lat);
    if (!given(t, K_AR_BW))
        t->ar_bw = bw;
    if (!given(t, K_AR_LAT))
        t->ar_lat_s = lat;
    /* A stage hand-off is one point-to-point copy over the same link. */
    kv_link_allreduce(t->link, 2, &bw, &lat);
    if (!given(t, K_PP_BW))
        t->pp_bw = bw;
    if (!given(t, K_PP_LAT))
        t->pp_lat_s = lat;
    /* 1-byte weights (FP8 or INT8 checkpoints) run their GEMMs on the FP8/INT8 tensor cores
     * where the GPU has them; 4-bit weights are dequantised to bf16 (W4A16). */
    bool fp8 = m->weight_bytes == 1.0 && g->fp8_flops > 0;
    t->gemm_peak = fp8 ? g->fp8_flops : 0;

    double active = (double)(m->active_params ? m->active_params : m->num_params);
    double weights = (double)s->weight_bytes_rank;
    double vh = (double)m->vocab_size * m->hidden_size;
    if (vh > 0 && active > (m->tied_embeddings ? 1 : 2) * vh) {
        /* The embedding table is looked up (T rows), not multiplied or streamed; the LM
         * head runs once per scheduled request.  A tied table is the LM head. */
        t->active_params = active - (m->tied_embeddings ? 1 : 2) * vh;
        t->head_params = vh;
        if (!m->tied_embeddings)
            weights -= vh * m->weight_bytes / ((double)s->tp * s->pp);
    } else {
        t->active_params = active;
        t->head_params = 0;
    }
    t->weight_bytes_rank = weights;
    t->attn_flops_per_pair = 4.0 * m->num_layers * (double)m->num_heads * m->head_dim;
    t->kv_bytes_rank = s->bytes_per_token_rank;
}

/* ---- step time ------------------------------------------------------------------------ */

static double roofline(const kv_timing *t, const kv_step_load *ld)
{
    double T = (double)ld->tokens, N = (double)ld->num_seqs;
    double ranks = (double)t->tp * t->pp;
    double gpeak = t->gemm_peak > 0 ? t->gemm_peak : t->peak_flops;
    double gmfu = t->gemm_peak > 0 ? eff_mfu8(t) : t->mfu;
    double gemm = 2.0 * t->active_params * T + 2.0 * t->head_params * N;
    double attn = t->attn_flops_per_pair * (double)ld->kv_tokens_read;
    double compute;
    if (gpeak == t->peak_flops && gmfu == t->mfu)
        compute = (gemm + attn) / (ranks * t->peak_flops * t->mfu); /* one rounding, as before */
    else
        compute = gemm / (ranks * gpeak * gmfu) + attn / (ranks * t->peak_flops * t->mfu);
    double kv = ((double)ld->kv_tokens_streamed + T) * t->kv_bytes_rank;
    double memory;
    if (eff_attn(t) == t->mbu)
        memory = (t->weight_bytes_rank + kv) / (t->hbm_bw * t->mbu);
    else
        memory = t->weight_bytes_rank / (t->hbm_bw * t->mbu) + kv / (t->hbm_bw * eff_attn(t));
    if (ld->tokens > 0)
        memory += t->layers_rank * (t->attn_lat_s + t->layer_lat_s);
    double stage = compute > memory ? compute : memory;
    if (t->smooth > 0 && stage > 0) { /* (C^p + M^p)^(1/p), scaled by the larger term */
        double lo = compute > memory ? memory : compute;
        stage *= pow(1.0 + pow(lo / stage, t->smooth), 1.0 / t->smooth);
    }
    if (t->act_bytes > 0) /* the activations every rank moves in full */
        stage += t->layers_rank * T * t->hidden * t->act_bytes / t->hbm_bw;
    double act = T * t->hidden * 2.0; /* bf16 activations of the step */
    if (t->tp > 1 && ld->tokens > 0) {
        double wire = t->ar_bw > 0 ? 2.0 * (t->tp - 1) / t->tp * act / t->ar_bw : 0;
        stage += 2.0 * t->layers_rank * (t->ar_lat_s + wire);
    }
    double host = t->overhead_s + t->seq_overhead_s * N, gpu = t->pp * stage;
    if (!t->overlap_host) { /* the sync engine: host work, then the GPU's */
        double sec = host + gpu;
        if (t->pp > 1 && ld->tokens > 0)
            sec += (t->pp - 1) * (t->pp_lat_s + (t->pp_bw > 0 ? act / t->pp_bw : 0));
        return sec;
    }
    if (t->pp > 1 && ld->tokens > 0)
        gpu += (t->pp - 1) * (t->pp_lat_s + (t->pp_bw > 0 ? act / t->pp_bw : 0));
    return host > gpu ? host : gpu; /* async: the host part hides behind the GPU's */
}

int64_t kv_timing_step(const kv_timing *t, const kv_step_load *ld)
{
    double sec;
    switch (t->kind) {
    case KV_TIME_FIXED:
        return t->fixed_ns;
    case KV_TIME_LINEAR:
        sec = t->a + t->b * (double)ld->tokens + t->c * (double)ld->kv_tokens_read;
        break;
    case KV_TIME_ROOFLINE:
    default:
        sec = roofline(t, ld);
        break;
    }
    /* A step too long for 64-bit nanoseconds saturates; the engine reports the clock
     * overflow rather than wrapping. */
    double ns = sec * 1e9;
    if (!(ns < 9.2e18))
        return INT64_MAX;
    long long r = llround(ns);
    return r < 0 ? 0 : r;
}

int64_t kv_timing_step_ns(const kv_timing *t, uint64_t tokens, uint64_t kv_tokens_read,
                          uint64_t kv_tokens_streamed)
{
    kv_step_load ld = {tokens, kv_tokens_read, kv_tokens_streamed,
                       tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)tokens};
    return kv_timing_step(t, &ld);
}

/* ---- describe ------------------------------------------------------------------------- */

void kv_timing_describe(const kv_timing *t, char *buf, size_t n)
{
    switch (t->kind) {
    case KV_TIME_FIXED:
        snprintf(buf, n, "fixed:%.9f", (double)t->fixed_ns / 1e9);
        return;
    case KV_TIME_LINEAR:
        snprintf(buf, n, "linear:%.9g,%.9g,%.9g", t->a, t->b, t->c);
        return;
    default:
        break;
    }
    size_t used = (size_t)snprintf(buf, n, "roofline");
    for (size_t k = 0; k < N_KEYS; k++) {
        char item[64];
        if (k == K_LINK) {
            snprintf(item, sizeof item, "link=%s", kv_link_name(t->link));
        } else {
            double v = *field((kv_timing *)t, &keys[k]);
            if (k == K_MFU8)
                v = eff_mfu8(t);
            else if (k == K_ATTN)
                v = eff_attn(t);
            snprintf(item, sizeof item, "%s=%.9g", keys[k].name, v);
        }
        if (used < n)
            used += (size_t)snprintf(buf + used, n - used, "%c%s", k == 0 ? ':' : ',', item);
    }
}
