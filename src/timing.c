/* timing: step-time models (include/kvsim/timing.h).
 *
 * Pure arithmetic over doubles, rounded once to integer nanoseconds with llround, so the
 * same inputs give the same clock on every machine.  No clamp: a step may take 0 ns
 * (linear:0,… on a step that schedules nothing); the engine's order stays well defined by
 * sequence numbers, and every step makes progress (tokens or a preemption).
 */
#include "kvsim/timing.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/text.h"

/* A non-negative number in the one grammar (kvsim/text.h) filling exactly [s, end). */
static int parse_num(const char *s, const char *end, double *out)
{
    double v;
    if (kv_parse_number(s, (size_t)(end - s), &v) != 0 || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int parse_roofline(const char *args, kv_timing *t, kv_diag *diag, const char *spec)
{
    const char *p = args;
    while (*p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        double v;
        if (!eq || parse_num(eq + 1, end, &v) != 0)
            return kv_diag_set(diag, -KV_EINVAL,
                               "--time-model '%s': expected key=value with a non-negative "
                               "number (keys: overhead, mfu, mbu)",
                               spec);
        size_t klen = (size_t)(eq - p);
        if (klen == 8 && strncmp(p, "overhead", 8) == 0) {
            t->overhead_s = v;
        } else if (klen == 3 && strncmp(p, "mfu", 3) == 0 && v > 0 && v <= 1) {
            t->mfu = v;
        } else if (klen == 3 && strncmp(p, "mbu", 3) == 0 && v > 0 && v <= 1) {
            t->mbu = v;
        } else {
            return kv_diag_set(diag, -KV_EINVAL,
                               "--time-model '%s': unknown key or value out of range in "
                               "'%.*s' (overhead ≥ 0 s, 0 < mfu ≤ 1, 0 < mbu ≤ 1)",
                               spec, (int)(end - p > 40 ? 40 : end - p), p);
        }
        p = comma ? comma + 1 : end;
    }
    return 0;
}

int kv_timing_parse(const char *spec, kv_timing *t, kv_diag *diag)
{
    char sb[KV_SHOWN_MAX];
    const char *shown = kv_shown(spec, sb); /* the spec as messages quote it */
    memset(t, 0, sizeof *t);
    t->overhead_s = KV_ROOFLINE_OVERHEAD_S;
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
                               "--time-model '%s': fixed:DT needs DT in seconds, e.g. fixed:0.01",
                               shown);
        if (!(dt * 1e9 < 9.2e18))
            return kv_diag_set(diag, -KV_EINVAL,
                               "--time-model '%s': a step of %g s does not fit 64-bit "
                               "nanoseconds",
                               shown, dt);
        long long ns = llround(dt * 1e9);
        if (ns < 1)
            return kv_diag_set(diag, -KV_EINVAL,
                               "--time-model '%s': a step must take at least 1 ns", shown);
        t->kind = KV_TIME_FIXED;
        t->fixed_ns = ns;
        return 0;
    }
    if (strncmp(spec, "linear:", 7) == 0) {
        const char *p = spec + 7;
        double v[3];
        for (int i = 0; i < 3; i++) {
            const char *end = strchr(p, ',');
            if (!end)
                end = p + strlen(p);
            /* A, B end at a comma; C ends the text. */
            if ((i < 2) != (*end == ',') || parse_num(p, end, &v[i]) != 0)
                return kv_diag_set(diag, -KV_EINVAL,
                                   "--time-model '%s': linear:A,B,C needs three non-negative "
                                   "numbers (seconds, seconds/token, seconds/KV token read)",
                                   shown);
            p = end + 1;
        }
        if (v[0] == 0 && v[1] == 0 && v[2] == 0)
            return kv_diag_set(diag, -KV_EINVAL, "--time-model '%s': a step must take some time",
                               shown);
        t->kind = KV_TIME_LINEAR;
        t->a = v[0];
        t->b = v[1];
        t->c = v[2];
        return 0;
    }
    return kv_diag_set(diag, -KV_EINVAL,
                       "--time-model '%s': expected roofline[:overhead=S,mfu=F,mbu=F], "
                       "linear:A,B,C or fixed:DT",
                       shown);
}

void kv_timing_bind(kv_timing *t, const kv_model *m, const kv_gpu *g, const kv_shard *s)
{
    t->peak_flops = g->peak_flops;
    t->hbm_bw = g->hbm_bw;
    t->active_params = (double)(m->active_params ? m->active_params : m->num_params);
    t->attn_flops_per_pair = 4.0 * m->num_layers * (double)m->num_heads * m->head_dim;
    t->weight_bytes_rank = (double)s->weight_bytes_rank;
    t->kv_bytes_rank = s->bytes_per_token_rank;
    t->tp = s->tp;
    t->pp = s->pp;
}

int64_t kv_timing_step_ns(const kv_timing *t, uint64_t tokens, uint64_t kv_tokens_read,
                          uint64_t kv_tokens_streamed)
{
    double sec;
    switch (t->kind) {
    case KV_TIME_FIXED:
        return t->fixed_ns;
    case KV_TIME_LINEAR:
        sec = t->a + t->b * (double)tokens + t->c * (double)kv_tokens_read;
        break;
    case KV_TIME_ROOFLINE:
    default: {
        double flops = 2.0 * t->active_params * (double)tokens +
                       t->attn_flops_per_pair * (double)kv_tokens_read;
        double ranks = (double)t->tp * t->pp;
        double compute = flops / (ranks * t->peak_flops * t->mfu);
        double bytes =
            t->weight_bytes_rank + ((double)kv_tokens_streamed + (double)tokens) * t->kv_bytes_rank;
        double memory = bytes / (t->hbm_bw * t->mbu);
        sec = t->overhead_s + t->pp * (compute > memory ? compute : memory);
        break;
    }
    }
    /* A step too long for 64-bit nanoseconds saturates; the engine reports the clock
     * overflow rather than wrapping. */
    double ns = sec * 1e9;
    if (!(ns < 9.2e18))
        return INT64_MAX;
    long long r = llround(ns);
    return r < 0 ? 0 : r;
}

void kv_timing_describe(const kv_timing *t, char *buf, size_t n)
{
    switch (t->kind) {
    case KV_TIME_FIXED:
        snprintf(buf, n, "fixed:%.9f", (double)t->fixed_ns / 1e9);
        break;
    case KV_TIME_LINEAR:
        snprintf(buf, n, "linear:%.9g,%.9g,%.9g", t->a, t->b, t->c);
        break;
    default:
        snprintf(buf, n, "roofline:overhead=%.9g,mfu=%.9g,mbu=%.9g", t->overhead_s, t->mfu, t->mbu);
    }
}
