/* gen: synthetic kvsim JSONL traces from planner figures (lengths, rate, prefix structure).
 *
 * Streams.  Every random quantity has its own RNG stream, seeded from --seed and a fixed
 * per-stream constant: arrivals, prompt lengths, output lengths, message lengths, turn
 * counts, think times, system-prompt choice, adapters, priorities.  So with one seed,
 * changing --rate moves arrivals but not lengths, and adding --adapters does not reshuffle
 * system prompts.  Same config + seed ⇒ byte-identical output (integer clock, fixed key
 * order, integer formatting, no hash-table iteration anywhere).
 *
 * Clock.  Gaps are drawn in seconds (exponential, or gamma with shape 1/CV² and mean 1/R)
 * and rounded to integer nanoseconds; arrivals are sums of those integers, so they are
 * monotone and print exactly as "<s>.<9 digits>", which round-trips through the trace
 * reader's llround(seconds · 1e9).  The first arrival is one gap after 0 (a renewal process
 * started at 0).
 *
 * Content.  Rows carry hash_ids only when the trace has prefix structure (system prompts
 * or sessions); without it rows are content-less, which kvsim treats as unique content
 * (DESIGN §3).  Ids are small sequential integers: system prompt k's block j is
 * k·⌈L/tb⌉ + j, and every other block gets the next fresh id, in generation order.
 * Trace block j of a prompt of len tokens (positions [j·tb, min((j+1)·tb, len))) gets
 *   1. system prompt k's id for block j, if every one of those positions lies in the
 *      system prompt (the first s = min(L, len of the conversation's first prompt) tokens);
 *   2. else, in a later turn, the previous turn's id for block j, if block j existed in the
 *      previous prompt and its id is private to this conversation (not a system id);
 *   3. else a fresh id.
 * Rule 1 makes sharing exact for the first ⌊s/tb⌋·tb tokens; a block that mixes system and
 * user tokens is private.  Rule 2 makes turn t's ids begin with turn t−1's: full blocks
 * are identical, and a private partial last block keeps its id while it fills up (the
 * positions it already had keep their (id, offset) content, the new ones are new content
 * never used elsewhere).  A partial last block that was a system id cannot be extended
 * that way (other conversations extend it differently), so it gets a fresh id: rule 3.
 * The previous turn's output becomes prompt content of the next turn; in kvsim generated
 * tokens never match prompt content (DESIGN §3), so those positions are hits only from
 * the next turn on.
 *
 * Sessions.  Conversations start by the arrival process at rate R/T (T = mean turns), so
 * the long-run request rate is about R.  A conversation has 1 + Geometric turns (mean T);
 * turn t arrives an exponential think time (mean --think-time) after turn t−1 *arrived*
 * (arrival to arrival: the think time includes the wait for the reply).  Its prompt is
 * turn t−1's prompt + turn t−1's output + a new message (--message lengths, default the
 * --prompt spec).  A conversation ends early when the next prompt would exceed the prompt
 * spec's max (else the trace limit).  --duration keeps turns arriving before the end;
 * --requests keeps the first N rows by arrival.  Rows are then sorted by (arrival,
 * generation order), so turn t−1 always precedes turn t.
 *
 * Memory.  Without sessions rows stream straight to the FILE: O(K·⌈L/tb⌉ + one row).
 * With sessions all rows are held (about 48 bytes each) plus each conversation's id list
 * once (turns index into it).  Time is O(rows + ids), plus the final sort.
 */
#include "kvsim/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/rng.h"
#include "kvsim/trace.h"

/* Per-stream seed offsets (arbitrary fixed odd constants; changing one changes traces). */
enum {
    STREAM_ARRIVAL,
    STREAM_PROMPT,
    STREAM_OUTPUT,
    STREAM_MESSAGE,
    STREAM_TURNS,
    STREAM_THINK,
    STREAM_SYSTEM,
    STREAM_ADAPTER,
    STREAM_PRIORITY,
};

static uint64_t stream_seed(uint64_t seed, int stream)
{
    /* Distinct splitmix inputs per stream; kv_rng_seed mixes them through splitmix64. */
    return seed ^ (0x6a09e667f3bcc909ull * (uint64_t)(2 * stream + 1));
}

void kv_gen_config_init(kv_gen_config *c)
{
    memset(c, 0, sizeof *c);
    c->burstiness = 1.0;
    c->zipf = 0.0;
    c->turns = 4.0;
    c->think_time_s = NAN; /* sessions: 30 s; concurrency: 0 */
    c->trace_block_size = KV_GEN_DEFAULT_TB;
}

int kv_gen_validate(const kv_gen_config *c, kv_diag *diag)
{
    if (c->prompt.n_knots == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{prompt} is required (e.g. p50=1000,p99=8000)");
    if (c->output.n_knots == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{output} is required (e.g. p50=200,p99=1000)");
    if (c->rate == 0.0 && c->concurrency == 0)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{rate} R is required (requests per second), unless {concurrency} N "
                           "clients send the requests");
    if (!(c->rate >= 0.0 && c->rate <= KV_GEN_MAX_RATE))
        return kv_diag_set(diag, -KV_EINVAL, "{rate} must be above 0 and at most %g requests/s",
                           KV_GEN_MAX_RATE);
    if (c->concurrency > KV_GEN_MAX_CONCURRENCY)
        return kv_diag_set(diag, -KV_EINVAL, "{concurrency} must be at most %u",
                           KV_GEN_MAX_CONCURRENCY);
    if (c->concurrency > 0 && c->sessions)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{concurrency} and {sessions} cannot be combined (a client sends "
                           "single requests)");
    if (c->concurrency > 0 && c->rate == 0.0 && c->duration_s > 0.0)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{concurrency} without {rate} needs {requests} N: closed-loop send "
                           "times are decided by the replay, not by a duration");
    if (!(c->burstiness >= 0.0 && c->burstiness <= KV_GEN_MAX_BURSTINESS))
        return kv_diag_set(diag, -KV_EINVAL, "{burstiness} must be between 0 and %g",
                           KV_GEN_MAX_BURSTINESS);
    bool by_requests = c->requests > 0, by_duration = c->duration_s > 0.0;
    if (by_requests == by_duration)
        return kv_diag_set(diag, -KV_EINVAL,
                           by_requests ? "give either {requests} N or {duration} S, not both"
                                       : "give {requests} N or {duration} S");
    if (c->requests > KV_GEN_MAX_REQUESTS)
        return kv_diag_set(diag, -KV_EINVAL, "{requests} must be at most %llu",
                           (unsigned long long)KV_GEN_MAX_REQUESTS);
    if (by_duration) {
        if (!(c->duration_s <= KV_GEN_MAX_DURATION))
            return kv_diag_set(diag, -KV_EINVAL, "{duration} must be at most %g s",
                               KV_GEN_MAX_DURATION);
        if (c->rate * c->duration_s > (double)KV_GEN_MAX_REQUESTS)
            return kv_diag_set(diag, -KV_EINVAL,
                               "{rate} × {duration} is about %.0f requests, above the limit "
                               "of %llu",
                               c->rate * c->duration_s, (unsigned long long)KV_GEN_MAX_REQUESTS);
    }
    if (c->system_prompts > KV_GEN_MAX_SYSTEM_PROMPTS)
        return kv_diag_set(diag, -KV_EINVAL, "{system_prompts} must be at most %u",
                           KV_GEN_MAX_SYSTEM_PROMPTS);
    if (c->system_prompts > 0 && c->system_prompt_len == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{system_prompts} needs {system_prompt_len} L");
    if (c->system_prompts == 0 && c->system_prompt_len > 0)
        return kv_diag_set(diag, -KV_EINVAL, "{system_prompt_len} needs {system_prompts} K");
    if (c->system_prompt_len > KV_TRACE_MAX_LEN)
        return kv_diag_set(diag, -KV_EINVAL, "{system_prompt_len} must be at most %u",
                           KV_TRACE_MAX_LEN);
    if (!(c->zipf >= 0.0 && c->zipf <= 10.0))
        return kv_diag_set(diag, -KV_EINVAL, "{zipf} must be between 0 and 10");
    if (!(c->turns >= 1.0 && c->turns <= KV_GEN_MAX_TURNS))
        return kv_diag_set(diag, -KV_EINVAL, "{turns} must be between 1 and %g", KV_GEN_MAX_TURNS);
    if (!isnan(c->think_time_s) && !c->sessions && c->concurrency == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{think_time} needs {sessions} or {concurrency}");
    if (!isnan(c->think_time_s) &&
        !(c->think_time_s >= 0.0 && c->think_time_s <= KV_GEN_MAX_THINK_TIME))
        return kv_diag_set(diag, -KV_EINVAL, "{think_time} must be between 0 and %g s",
                           KV_GEN_MAX_THINK_TIME);
    if (c->message.n_knots > 0 && !c->sessions)
        return kv_diag_set(diag, -KV_EINVAL, "{message} needs {sessions}");
    if (c->adapters > KV_GEN_MAX_ADAPTERS)
        return kv_diag_set(diag, -KV_EINVAL, "{adapters} must be at most %u", KV_GEN_MAX_ADAPTERS);
    if (c->priorities > KV_GEN_MAX_PRIORITIES)
        return kv_diag_set(diag, -KV_EINVAL, "{priorities} must be at most %u",
                           KV_GEN_MAX_PRIORITIES);
    if (c->trace_block_size < 1 || c->trace_block_size > KV_TRACE_MAX_LEN)
        return kv_diag_set(diag, -KV_EINVAL, "{trace_block_size} must be between 1 and %u",
                           KV_TRACE_MAX_LEN);
    return 0;
}

/* ---- one output line -------------------------------------------------------------------- */

typedef struct linebuf {
    char *b;
    size_t len, cap;
} linebuf;

static void lb_reserve(linebuf *l, size_t more)
{
    if (l->len + more > l->cap)
        kv_grow((void **)&l->b, &l->cap, l->len + more, 1);
}

static void lb_str(linebuf *l, const char *s)
{
    size_t n = strlen(s);
    lb_reserve(l, n);
    memcpy(l->b + l->len, s, n);
    l->len += n;
}

/* Decimal, zero-padded to at least `width` digits. */
static void lb_u64w(linebuf *l, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width)
        tmp[n++] = '0';
    lb_reserve(l, (size_t)n);
    while (n > 0)
        l->b[l->len++] = tmp[--n];
}

static void lb_u64(linebuf *l, uint64_t v)
{
    lb_u64w(l, v, 1);
}

/* Nanoseconds as exact decimal seconds "S.NNNNNNNNN". */
static void lb_seconds(linebuf *l, int64_t ns)
{
    lb_u64(l, (uint64_t)(ns / 1000000000));
    lb_str(l, ".");
    lb_u64w(l, (uint64_t)(ns % 1000000000), 9);
}

/* ---- generator state -------------------------------------------------------------------- */

/* A request before it is written.  Its hash_ids are ids[ids_off .. ids_off + n_ids − 1)
 * of the id pool followed by last_id (the pool entry may since have been replaced by a
 * later turn, rule 3 above). */
typedef struct row {
    int64_t arrival_ns;
    uint64_t seq;     /* generation order: the tie-break */
    uint64_t ids_off; /* into gen.ids */
    uint64_t last_id; /* valid when n_ids > 0 */
    uint32_t n_ids;   /* ⌈prompt_len/tb⌉, or 0 without hash_ids */
    uint32_t prompt_len, output_len;
    uint32_t conv;     /* sessions: conversation index (start order) */
    uint32_t turn;     /* sessions: 1-based */
    uint32_t adapter;  /* 0 = none, else 1..K */
    uint32_t priority; /* meaningful when config priorities > 0 */
    int64_t think_ns;  /* concurrency: think time before this row (0 for a client's first) */
    bool capped;       /* turn 1 rows: the conversation was cut by the context cap */
} row;

typedef struct gen {
    const kv_gen_config *c;
    kv_rng arrival, turns, think, system, adapter, priority;
    kv_lensampler prompt, output, message;
    bool hash_ids;       /* rows carry hash_ids */
    double *zipf_cdf;    /* K cumulative weights, or NULL */
    uint32_t sys_blocks; /* ⌈L/tb⌉ */
    uint64_t n_sys_ids;  /* K · sys_blocks: ids below this are system-prompt ids */
    uint64_t next_id;    /* next fresh id */
    double gap_mean_s;   /* mean gap of the arrival process */
    int64_t clock_ns;    /* arrival process clock */
    uint64_t *ids;       /* id pool */
    size_t n_ids, cap_ids;
    row *rows; /* sessions: all rows */
    size_t n_rows, cap_rows;
    linebuf line;
    kv_diag *diag;
} gen;

#define CLOCK_LIMIT_NS (INT64_MAX / 4)

static int advance_clock(gen *g, int64_t *t, double gap_s)
{
    double ns = floor(gap_s * 1e9 + 0.5);
    if (!(ns < (double)CLOCK_LIMIT_NS) || *t > CLOCK_LIMIT_NS - (int64_t)ns)
        return kv_diag_set(g->diag, -KV_ERANGE,
                           "arrivals run past %lld s: lower {think_time} or raise {rate}",
                           (long long)(CLOCK_LIMIT_NS / 1000000000));
    *t += (int64_t)ns;
    return 0;
}

/* The mean think time in effect: the option, or the mode's default. */
static double think_mean(const kv_gen_config *c)
{
    return !isnan(c->think_time_s) ? c->think_time_s : c->sessions ? 30.0 : 0.0;
}

/* The next gap of the arrival process, in seconds. */
static double arrival_gap(gen *g)
{
    double cv = g->c->burstiness;
    if (cv == 0.0)
        return g->gap_mean_s;
    if (cv == 1.0) /* exactly Poisson, not a gamma with shape 1: same numbers as --rate alone */
        return kv_rng_exponential(&g->arrival, 1.0 / g->gap_mean_s);
    double shape = 1.0 / (cv * cv);
    return kv_rng_gamma(&g->arrival, shape, g->gap_mean_s / shape);
}

static uint32_t pick_system_prompt(gen *g)
{
    uint32_t k_count = g->c->system_prompts;
    double x = kv_rng_uniform(&g->system) * g->zipf_cdf[k_count - 1];
    uint32_t lo = 0, hi = k_count - 1; /* first k with cdf[k] > x */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->zipf_cdf[mid] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Attributes a conversation (or a single request) keeps for all its turns. */
typedef struct identity {
    bool has_system;
    uint32_t system;        /* 0-based prompt index */
    uint32_t system_extent; /* s: leading tokens that are system prompt */
    uint32_t adapter;       /* 0 = none */
    uint32_t priority;
} identity;

static void draw_identity(gen *g, identity *id)
{
    memset(id, 0, sizeof *id);
    if (g->c->system_prompts > 0) {
        id->has_system = true;
        id->system = pick_system_prompt(g);
    }
    if (g->c->adapters > 0)
        id->adapter = 1 + (uint32_t)kv_rng_below(&g->adapter, g->c->adapters);
    if (g->c->priorities > 0)
        id->priority = (uint32_t)kv_rng_below(&g->priority, g->c->priorities);
}

/* Set ids[off .. off + ⌈len/tb⌉) for a prompt of len tokens whose previous turn had
 * prev_len tokens with its ids at the same place (prev_len 0: first turn).  Rules 1–3 of
 * the file comment. */
static uint32_t assign_ids(gen *g, size_t off, uint32_t len, uint32_t prev_len, const identity *id)
{
    uint64_t tb = g->c->trace_block_size;
    uint32_t n = (uint32_t)((len + tb - 1) / tb);
    uint32_t n_prev = (uint32_t)((prev_len + tb - 1) / tb);
    if (off + n > g->cap_ids)
        kv_grow((void **)&g->ids, &g->cap_ids, off + n, sizeof *g->ids);
    for (uint32_t j = 0; j < n; j++) {
        uint64_t end = (uint64_t)(j + 1) * tb;
        if (end > len)
            end = len;
        if (id->has_system && end <= id->system_extent)
            g->ids[off + j] = (uint64_t)id->system * g->sys_blocks + j;
        else if (j < n_prev && g->ids[off + j] >= g->n_sys_ids)
            ; /* keep the previous turn's private id */
        else
            g->ids[off + j] = g->next_id++;
    }
    if (off + n > g->n_ids)
        g->n_ids = off + n;
    return n;
}

static int write_row(gen *g, const row *r, FILE *out)
{
    const kv_gen_config *c = g->c;
    linebuf *l = &g->line;
    l->len = 0;
    if (c->sessions) {
        lb_str(l, "{\"id\":\"s");
        lb_u64w(l, r->conv, 6);
        lb_str(l, ".");
        lb_u64(l, r->turn);
    } else {
        lb_str(l, "{\"id\":\"r");
        lb_u64w(l, r->seq, 6);
    }
    lb_str(l, "\",\"arrival\":");
    lb_seconds(l, r->arrival_ns);
    lb_str(l, ",\"prompt_len\":");
    lb_u64(l, r->prompt_len);
    lb_str(l, ",\"output_len\":");
    lb_u64(l, r->output_len);
    if (g->hash_ids) {
        lb_str(l, ",\"hash_ids\":[");
        for (uint32_t j = 0; j + 1 < r->n_ids; j++) {
            lb_u64(l, g->ids[r->ids_off + j]);
            lb_str(l, ",");
        }
        lb_u64(l, r->last_id);
        lb_str(l, "]");
    }
    if (r->adapter > 0) {
        lb_str(l, ",\"adapter\":\"lora-");
        lb_u64(l, r->adapter);
        lb_str(l, "\"");
    }
    if (c->priorities > 0) {
        lb_str(l, ",\"priority\":");
        lb_u64(l, r->priority);
    }
    if (c->concurrency > 0) { /* the closed-loop client, and its think time before this row */
        lb_str(l, ",\"client\":\"c");
        lb_u64w(l, r->seq % c->concurrency, 6);
        lb_str(l, "\"");
        if (r->think_ns > 0) {
            lb_str(l, ",\"think\":");
            lb_seconds(l, r->think_ns);
        }
    }
    if (c->sessions) { /* the conversation, for `kvsim run --router session` */
        lb_str(l, ",\"session\":\"s");
        lb_u64w(l, r->conv, 6);
        lb_str(l, "\"");
    }
    lb_str(l, "}\n");
    if (fwrite(l->b, 1, l->len, out) != l->len)
        return kv_diag_set(g->diag, -KV_EIO, "write failed");
    return 0;
}

/* ---- single requests: streamed ---------------------------------------------------------- */

static int run_single(gen *g, FILE *out, kv_gen_stats *st)
{
    const kv_gen_config *c = g->c;
    int64_t end_ns = c->requests ? 0 : (int64_t)floor(c->duration_s * 1e9 + 0.5);
    int64_t t = 0;
    double think_s = think_mean(c);
    for (uint64_t i = 0;; i++) {
        int rc = c->rate > 0 ? advance_clock(g, &t, arrival_gap(g)) : 0;
        if (rc)
            return rc;
        if (c->requests ? i == c->requests : t >= end_ns)
            break;
        if (i == KV_GEN_MAX_REQUESTS)
            return kv_diag_set(g->diag, -KV_ERANGE, "more than %llu requests",
                               (unsigned long long)KV_GEN_MAX_REQUESTS);
        row r;
        memset(&r, 0, sizeof r);
        r.arrival_ns = t;
        r.seq = i;
        r.prompt_len = kv_lensampler_next(&g->prompt);
        r.output_len = kv_lensampler_next(&g->output);
        identity id;
        draw_identity(g, &id);
        r.adapter = id.adapter;
        r.priority = id.priority;
        if (c->concurrency > 0 && i >= c->concurrency && think_s > 0 &&
            (rc = advance_clock(g, &r.think_ns, kv_rng_exponential(&g->think, 1.0) * think_s)))
            return rc;
        if (g->hash_ids) {
            id.system_extent = id.has_system && c->system_prompt_len < r.prompt_len
                                   ? c->system_prompt_len
                                   : r.prompt_len;
            r.n_ids = assign_ids(g, 0, r.prompt_len, 0, &id);
            r.ids_off = 0;
            r.last_id = g->ids[r.n_ids - 1];
        }
        if ((rc = write_row(g, &r, out)) != 0)
            return rc;
        st->requests++;
        st->last_arrival_ns = t;
    }
    st->conversations = st->requests;
    st->max_turns = st->requests ? 1 : 0;
    return 0;
}

/* ---- sessions: held, sorted, then written ----------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->arrival_ns != y->arrival_ns)
        return x->arrival_ns < y->arrival_ns ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The n-th smallest arrival among the rows so far (n ≥ 1, n ≤ n_rows). */
static int64_t nth_arrival(const gen *g, size_t n)
{
    int64_t *a = kv_xmalloc(g->n_rows * sizeof *a);
    for (size_t i = 0; i < g->n_rows; i++)
        a[i] = g->rows[i].arrival_ns;
    qsort(a, g->n_rows, sizeof *a, cmp_i64);
    int64_t v = a[n - 1];
    free(a);
    return v;
}

static row *push_row(gen *g)
{
    if (g->n_rows == g->cap_rows)
        kv_grow((void **)&g->rows, &g->cap_rows, g->n_rows + 1, sizeof *g->rows);
    row *r = &g->rows[g->n_rows];
    memset(r, 0, sizeof *r);
    r->seq = g->n_rows++;
    return r;
}

/* Turns in a conversation: 1 + Geometric(p = 1/T) failures, mean T. */
static uint32_t draw_turns(gen *g)
{
    double mean = g->c->turns;
    if (mean <= 1.0)
        return 1;
    double extra = floor(log(kv_rng_uniform_pos(&g->turns)) / log1p(-1.0 / mean));
    if (extra > 1e6)
        extra = 1e6;
    return 1 + (uint32_t)extra;
}

/* One conversation starting at `start`: its turns as rows, until the turns drawn, the
 * context cap or (duration mode) the end of the window. */
static int add_conversation(gen *g, uint32_t conv, int64_t start, int64_t end_ns, uint64_t cap)
{
    const kv_gen_config *c = g->c;
    identity id;
    draw_identity(g, &id);
    uint32_t n_turns = draw_turns(g);
    size_t off = g->n_ids, first = g->n_rows;
    int64_t t = start;
    uint32_t prev_len = 0, prev_out = 0;
    int rc;
    for (uint32_t turn = 1; turn <= n_turns; turn++) {
        uint64_t len;
        if (turn == 1) {
            len = kv_lensampler_next(&g->prompt);
            id.system_extent =
                id.has_system && c->system_prompt_len < len ? c->system_prompt_len : (uint32_t)len;
        } else {
            len = (uint64_t)prev_len + prev_out + kv_lensampler_next(&g->message);
            if ((rc = advance_clock(g, &t, kv_rng_exponential(&g->think, 1.0) * think_mean(c))) !=
                0)
                return rc;
            if (len > cap) {
                g->rows[first].capped = true;
                break;
            }
            if (!c->requests && t >= end_ns)
                break;
        }
        row *r = push_row(g);
        r->arrival_ns = t;
        r->prompt_len = (uint32_t)len;
        r->output_len = kv_lensampler_next(&g->output);
        r->conv = conv;
        r->turn = turn;
        r->adapter = id.adapter;
        r->priority = id.priority;
        r->ids_off = off;
        r->n_ids = assign_ids(g, off, r->prompt_len, prev_len, &id);
        r->last_id = g->ids[off + r->n_ids - 1];
        prev_len = r->prompt_len;
        prev_out = r->output_len;
    }
    return 0;
}

/* The rows sorted by arrival, the first N (requests mode) written. */
static int write_sessions(gen *g, FILE *out, kv_gen_stats *st)
{
    const kv_gen_config *c = g->c;
    qsort(g->rows, g->n_rows, sizeof *g->rows, cmp_row);
    size_t n = g->n_rows;
    if (c->requests && n > c->requests)
        n = (size_t)c->requests;
    for (size_t i = 0; i < n; i++) {
        const row *r = &g->rows[i];
        int rc = write_row(g, r, out);
        if (rc != 0)
            return rc;
        st->requests++;
        st->last_arrival_ns = r->arrival_ns;
        if (r->turn == 1) {
            st->conversations++;
            st->capped += r->capped;
        }
        if (r->turn > st->max_turns)
            st->max_turns = r->turn;
    }
    return 0;
}

static int run_sessions(gen *g, FILE *out, kv_gen_stats *st)
{
    const kv_gen_config *c = g->c;
    int64_t end_ns = c->requests ? 0 : (int64_t)floor(c->duration_s * 1e9 + 0.5);
    uint64_t cap = c->prompt.has_max ? c->prompt.hi : KV_TRACE_MAX_LEN;
    int64_t start = 0, horizon = INT64_MAX; /* requests mode: stop once starts pass it */
    size_t rows_at_horizon = 0;
    int rc;
    for (uint32_t conv = 0;; conv++) {
        if ((rc = advance_clock(g, &start, arrival_gap(g))) != 0)
            return rc;
        if (c->requests) {
            /* The N-th smallest arrival only falls as conversations are added, and a
             * conversation's rows all arrive at or after its start: once a start is at or
             * past it, no later conversation can place a row among the first N.  Refresh
             * it as rows accumulate (each refresh is a sort, so only every N/4 rows). */
            if (g->n_rows >= c->requests &&
                (horizon == INT64_MAX || g->n_rows >= rows_at_horizon + c->requests / 4)) {
                horizon = nth_arrival(g, (size_t)c->requests);
                rows_at_horizon = g->n_rows;
            }
            if (start >= horizon)
                break;
        } else if (start >= end_ns) {
            break;
        }
        if (conv == UINT32_MAX || g->n_rows >= KV_GEN_MAX_REQUESTS)
            return kv_diag_set(g->diag, -KV_ERANGE, "more than %llu requests",
                               (unsigned long long)KV_GEN_MAX_REQUESTS);
        if ((rc = add_conversation(g, conv, start, end_ns, cap)) != 0)
            return rc;
    }
    return write_sessions(g, out, st);
}

int kv_gen_write(const kv_gen_config *c, FILE *out, kv_gen_stats *stats, kv_diag *diag)
{
    kv_gen_stats local;
    kv_gen_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    int rc = kv_gen_validate(c, diag);
    if (rc)
        return rc;

    gen g;
    memset(&g, 0, sizeof g);
    g.c = c;
    g.diag = diag;
    kv_rng_seed(&g.arrival, stream_seed(c->seed, STREAM_ARRIVAL));
    kv_rng_seed(&g.turns, stream_seed(c->seed, STREAM_TURNS));
    kv_rng_seed(&g.think, stream_seed(c->seed, STREAM_THINK));
    kv_rng_seed(&g.system, stream_seed(c->seed, STREAM_SYSTEM));
    kv_rng_seed(&g.adapter, stream_seed(c->seed, STREAM_ADAPTER));
    kv_rng_seed(&g.priority, stream_seed(c->seed, STREAM_PRIORITY));
    bool strat = !c->iid_lengths;
    kv_lensampler_init(&g.prompt, &c->prompt, stream_seed(c->seed, STREAM_PROMPT), strat);
    kv_lensampler_init(&g.output, &c->output, stream_seed(c->seed, STREAM_OUTPUT), strat);
    kv_lensampler_init(&g.message, c->message.n_knots ? &c->message : &c->prompt,
                       stream_seed(c->seed, STREAM_MESSAGE), strat);
    g.hash_ids = c->system_prompts > 0 || c->sessions;
    st->hash_ids = g.hash_ids;
    if (c->system_prompts > 0) {
        g.zipf_cdf = kv_xmalloc(c->system_prompts * sizeof *g.zipf_cdf);
        double sum = 0.0;
        for (uint32_t k = 0; k < c->system_prompts; k++) {
            sum += c->zipf == 0.0 ? 1.0 : pow((double)k + 1.0, -c->zipf);
            g.zipf_cdf[k] = sum;
        }
        uint64_t tb = c->trace_block_size;
        g.sys_blocks = (uint32_t)((c->system_prompt_len + tb - 1) / tb);
        g.n_sys_ids = (uint64_t)c->system_prompts * g.sys_blocks;
    }
    g.next_id = g.n_sys_ids;
    /* Sessions: conversations start at R/T so requests arrive at about R in the long run. */
    g.gap_mean_s = c->sessions ? c->turns / c->rate : 1.0 / c->rate;

    rc = c->sessions ? run_sessions(&g, out, st) : run_single(&g, out, st);
    if (rc == 0 && ferror(out))
        rc = kv_diag_set(diag, -KV_EIO, "write failed");

    free(g.line.b);
    free(g.rows);
    free(g.ids);
    free(g.zipf_cdf);
    kv_lensampler_release(&g.prompt);
    kv_lensampler_release(&g.output);
    kv_lensampler_release(&g.message);
    return rc;
}
