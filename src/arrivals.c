/* arrivals: the serving front end and closed-loop clients (include/kvsim/arrivals.h).
 *
 * Data.  Three sources of events, merged by time:
 * - the open-loop cursor: the next trace row that is not a closed-loop follower (a row
 *   whose client has an earlier row), sent at its arrival;
 * - released sends: a min-heap of (send time, trace index), one entry at most per client,
 *   pushed when the client's previous request ended (kv_arrivals_settle);
 * - the front end's FIFO of (arrival time, trace index): a sent request waits there until
 *   it reaches the scheduler.  Entries enter in send order with non-decreasing arrival
 *   times (FCFS admission, a constant `in`), so a FIFO suffices.
 * The FIFO's head goes first when it is due no later than the next send; of two sends,
 * the smaller (time, trace index).  With the front end `none` and no clients, each row is
 * sent and arrives at its arrival time, in trace order: exactly the old cursor.
 *
 * Closed loop.  next_of[i] is the trace index of row i's client's next row (SIZE_MAX:
 * none), built by sorting the client rows by (client, trace index); a follower is a row
 * some next_of points to.  Ends are recorded during an event (kv_arrivals_ended) and
 * released after it, at the event's time (kv_arrivals_settle).
 *
 * Semaphore.  With max_concurrency N, the open-loop cursor is gated: the k-th row it sends
 * (k = n_gated) may go at max(arrival, released[k − N]) once k < N or that many replies
 * have been received; released[] holds reply times in the order they happen (settle runs
 * at non-decreasing times and `out` is constant, so it is sorted), which is the FIFO
 * semaphore's order of slot hand-overs.  A gated row sent after its arrival gets a spec
 * copy, as a follower does.
 *
 * Memory: O(n) for the FIFO and, with clients, next_of, the follower marks and the
 * copies of the followers' specs; O(clients) for the heap.
 */
#include "kvsim/arrivals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/text.h"

#include "heap_internal.h"

#define NONE SIZE_MAX

/* ---- the front end ------------------------------------------------------------------ */

/* The `vllm` preset (README "Time" cites each value): the API server's own stages before
 * the engine-core hand-off for a text prompt, from vLLM PR #44404's timing trace
 * (render 0.31 ms, process_for_engine 0.54 ms, add_request 0.61 + 0.36 ms, 0.02 ms).  The
 * server runs them on its one event loop, so they are also its capacity: one request
 * every 1.84 ms, 1/1.84 ms = 543.5 a second, admitted first come first served. */
static const kv_frontend vllm_preset = {1840000, 0, 1e3 / 1.84, 0};

bool kv_frontend_is_none(const kv_frontend *f)
{
    return f->in_ns == 0 && f->out_ns == 0 && f->rate == 0 && f->tok_ns == 0;
}

static int frontend_key(const char *key, size_t klen, const char *val, kv_frontend *f,
                        kv_diag *diag)
{
    double v;
    if (kv_parse_number(val, strlen(val), &v) != 0 || !isfinite(v) || v < 0)
        return kv_diag_set(diag, -KV_EINVAL,
                           "{frontend}: '%.*s' must be a non-negative number, got '%s'", (int)klen,
                           key, val);
    if (klen == 4 && memcmp(key, "rate", 4) == 0) {
        /* The bounds of --rate: 1/rate must be a whole number of ns that fits 64 bits. */
        if (v != 0 && (v < 1e-9 || v > 1e12))
            return kv_diag_set(diag, -KV_EINVAL,
                               "{frontend}: 'rate' must be 0 (unlimited) or between 1e-09 and "
                               "1e+12 requests/s, got '%s'",
                               val);
        f->rate = v;
        return 0;
    }
    if (klen == 3 && memcmp(key, "tok", 3) == 0) {
        /* 1 s a token at most: tok · output_len then fits 64-bit nanoseconds. */
        if (v > 1e3)
            return kv_diag_set(diag, -KV_EINVAL, "{frontend}: 'tok' must be at most 1000 ms");
        f->tok_ns = llround(v * 1e6);
        return 0;
    }
    bool in = klen == 2 && memcmp(key, "in", 2) == 0;
    if (!in && !(klen == 3 && memcmp(key, "out", 3) == 0))
        return kv_diag_set(diag, -KV_EINVAL, "{frontend}: unknown key '%.*s' (in, out, rate, tok)",
                           (int)klen, key);
    if (v > 1e9) /* ms: about 11 days */
        return kv_diag_set(diag, -KV_EINVAL, "{frontend}: '%.*s' must be at most 1e9 ms", (int)klen,
                           key);
    *(in ? &f->in_ns : &f->out_ns) = llround(v * 1e6);
    return 0;
}

int kv_frontend_parse(const char *spec, kv_frontend *out, kv_diag *diag)
{
    kv_frontend f = {0, 0, 0.0, 0};
    size_t base = strcspn(spec, ":");
    const char *p = spec[base] == ':' ? spec + base + 1 : NULL;
    if (memchr(spec, '=', base)) /* a bare key list: keys over none */
        p = spec;
    else if (base == 4 && memcmp(spec, "vllm", 4) == 0)
        f = vllm_preset;
    else if (!(base == 4 && memcmp(spec, "none", 4) == 0))
        return kv_diag_set(diag, -KV_EINVAL,
                           "{frontend}: '%.*s' is not none, vllm or in=MS,out=MS,rate=R,tok=MS",
                           (int)base, spec);
    while (p) {
        char item[128];
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof item)
            return kv_diag_set(diag, -KV_EINVAL, "{frontend}: an empty or overlong item in '%s'",
                               spec);
        memcpy(item, p, n);
        item[n] = '\0';
        char *eq = strchr(item, '=');
        if (!eq)
            return kv_diag_set(diag, -KV_EINVAL, "{frontend}: '%s' is not KEY=VALUE", item);
        int rc = frontend_key(item, (size_t)(eq - item), eq + 1, &f, diag);
        if (rc != 0)
            return rc;
        p = p[n] == ',' ? p + n + 1 : NULL;
    }
    *out = f;
    return 0;
}

/* v in the fewest significant digits (9 to 17) that read back as v: "1.84", not
 * "1.8400000000000001". */
static void shortest(double v, char *buf, size_t size)
{
    for (int p = 9; p <= 17; p++) {
        snprintf(buf, size, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void kv_frontend_describe(const kv_frontend *f, char *buf, size_t size)
{
    if (kv_frontend_is_none(f)) {
        snprintf(buf, size, "none");
        return;
    }
    char in[32], out[32], rate[32];
    shortest((double)f->in_ns / 1e6, in, sizeof in);
    shortest((double)f->out_ns / 1e6, out, sizeof out);
    shortest(f->rate, rate, sizeof rate);
    int n = snprintf(buf, size, "in=%s,out=%s,rate=%s", in, out, rate);
    if (f->tok_ns > 0 && n >= 0 && (size_t)n < size) { /* left out at 0: older echoes hold */
        char tok[32];
        shortest((double)f->tok_ns / 1e6, tok, sizeof tok);
        snprintf(buf + n, size - (size_t)n, ",tok=%s", tok);
    }
}

/* ---- the arrival stream ------------------------------------------------------------- */

typedef struct pending {
    int64_t t;
    size_t i;
} pending;

struct kv_arrivals {
    const kv_trace *trace;
    kv_req *reqs;
    kv_frontend fe;
    int64_t gap_ns;     /* 1/rate in ns; 0 = unlimited */
    int64_t busy_until; /* the API server's last admission start + its service time (0) */
    size_t cursor;      /* next open-loop row to send */
    pending *fifo;      /* sent, not yet arrived: [head, tail) */
    size_t head, tail, cap;
    uint64_t arrived;
    /* closed loop (NULL / 0 without clients) */
    size_t *next_of;
    bool *follower;
    pending *heap; /* released sends */
    size_t n_heap;
    size_t *ended; /* requests ended during the current event */
    size_t n_ended;
    kv_request_spec *sent; /* copies of the specs sent after their arrival, arrival = send */
    size_t n_sent;
    /* the semaphore (0 / NULL without one) */
    uint32_t slots;    /* N */
    size_t n_gated;    /* open-loop rows sent so far */
    int64_t *released; /* reply times, in order: [0, n_released) */
    size_t n_released;
};

static int64_t sat_add(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static bool earlier(const pending *a, const pending *b)
{
    return a->t != b->t ? a->t < b->t : a->i < b->i;
}

KV_HEAP_DEFINE(pending_heap, pending, earlier)

typedef struct client_row {
    const char *client;
    size_t i;
} client_row;

static int cmp_client_row(const void *pa, const void *pb)
{
    const client_row *x = pa, *y = pb;
    int c = strcmp(x->client, y->client);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* next_of and the follower marks; returns the number of followers (0: no clients). */
static size_t link_clients(kv_arrivals *a)
{
    const kv_trace *t = a->trace;
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        m += t->reqs[i].client != NULL;
    if (m == 0)
        return 0;
    client_row *v = kv_xmalloc(m * sizeof *v);
    m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->reqs[i].client)
            v[m++] = (client_row){t->reqs[i].client, i};
    qsort(v, m, sizeof *v, cmp_client_row);
    a->next_of = kv_xmalloc(t->n * sizeof *a->next_of);
    a->follower = kv_xcalloc(t->n, sizeof *a->follower);
    for (size_t i = 0; i < t->n; i++)
        a->next_of[i] = NONE;
    size_t followers = 0, clients = 0;
    for (size_t k = 0; k < m; k++) {
        if (k + 1 < m && strcmp(v[k].client, v[k + 1].client) == 0) {
            a->next_of[v[k].i] = v[k + 1].i;
            a->follower[v[k + 1].i] = true;
            followers++;
        } else {
            clients++;
        }
    }
    free(v);
    a->heap = kv_xmalloc((clients ? clients : 1) * sizeof *a->heap);
    return followers;
}

static void skip_followers(kv_arrivals *a)
{
    while (a->follower && a->cursor < a->trace->n && a->follower[a->cursor])
        a->cursor++;
}

kv_arrivals *kv_arrivals_create(const kv_trace *t, kv_req *reqs, const kv_frontend *fe,
                                uint32_t max_concurrency)
{
    kv_arrivals *a = kv_xcalloc(1, sizeof *a);
    a->trace = t;
    a->reqs = reqs;
    a->fe = *fe;
    a->gap_ns = fe->rate > 0 ? llround(1e9 / fe->rate) : 0;
    if (fe->rate > 0 && a->gap_ns < 1)
        a->gap_ns = 1;
    size_t followers = link_clients(a);
    skip_followers(a);
    a->slots = max_concurrency;
    if (a->slots) {
        a->released = kv_xmalloc((t->n ? t->n : 1) * sizeof *a->released);
        followers = t->n; /* any row may be held back */
    }
    if (a->next_of || a->slots)
        a->ended = kv_xmalloc((t->n ? t->n : 1) * sizeof *a->ended);
    if (followers)
        a->sent = kv_xmalloc(followers * sizeof *a->sent);
    a->cap = 64;
    a->fifo = kv_xmalloc(a->cap * sizeof *a->fifo);
    return a;
}

void kv_arrivals_destroy(kv_arrivals *a)
{
    if (!a)
        return;
    free(a->fifo);
    free(a->next_of);
    free(a->follower);
    free(a->heap);
    free(a->ended);
    free(a->sent);
    free(a->released);
    free(a);
}

bool kv_arrivals_closed_loop(const kv_arrivals *a)
{
    return a->next_of != NULL || a->slots > 0;
}

/* Whether the open-loop cursor may send now, and when (*t). */
static bool cursor_send(const kv_arrivals *a, int64_t *t)
{
    if (a->cursor >= a->trace->n)
        return false;
    *t = a->trace->reqs[a->cursor].arrival_ns;
    if (a->slots == 0 || a->n_gated < a->slots)
        return true;
    size_t k = a->n_gated - a->slots; /* the reply whose slot this row takes */
    if (k >= a->n_released)
        return false;
    if (a->released[k] > *t)
        *t = a->released[k];
    return true;
}

/* The next send, if any (*p). */
static bool next_send(const kv_arrivals *a, pending *p)
{
    int64_t t = 0;
    bool open = cursor_send(a, &t);
    pending o = {t, a->cursor};
    if (a->n_heap > 0 && (!open || earlier(&a->heap[0], &o)))
        *p = a->heap[0];
    else if (open)
        *p = o;
    return open || a->n_heap > 0;
}

bool kv_arrivals_next(const kv_arrivals *a, int64_t *t)
{
    pending s = {0, 0};
    bool send = next_send(a, &s);
    if (a->head < a->tail && (!send || a->fifo[a->head].t <= s.t)) {
        *t = a->fifo[a->head].t;
        return true;
    }
    if (send)
        *t = s.t;
    return send;
}

/* Request i is sent at t: a follower's spec becomes a copy with arrival t; the API server
 * admits it and it joins the FIFO. */
static void send(kv_arrivals *a, size_t i, int64_t t)
{
    if ((a->follower && a->follower[i]) || t != a->reqs[i].spec->arrival_ns) {
        kv_request_spec *c = &a->sent[a->n_sent++];
        *c = *a->reqs[i].spec;
        c->arrival_ns = t;
        a->reqs[i].spec = c;
    }
    int64_t start = t;
    if (a->busy_until > start) /* send times are ≥ 0 */
        start = a->busy_until;
    /* tok ≤ 1e9 ns and output_len < 2^32: the product fits 64 bits. */
    a->busy_until =
        sat_add(start, sat_add(a->gap_ns, a->fe.tok_ns * (int64_t)a->reqs[i].spec->output_len));
    if (a->tail == a->cap) {
        if (a->head > 0) { /* slide the live entries down */
            memmove(a->fifo, a->fifo + a->head, (a->tail - a->head) * sizeof *a->fifo);
            a->tail -= a->head;
            a->head = 0;
        } else {
            a->cap *= 2;
            a->fifo = kv_xrealloc(a->fifo, a->cap * sizeof *a->fifo);
        }
    }
    a->fifo[a->tail++] = (pending){sat_add(start, a->fe.in_ns), i};
}

bool kv_arrivals_pop(kv_arrivals *a, size_t *idx)
{
    pending s = {0, 0};
    bool has_send = next_send(a, &s);
    if (a->head < a->tail && (!has_send || a->fifo[a->head].t <= s.t)) {
        *idx = a->fifo[a->head++].i;
        if (a->head == a->tail)
            a->head = a->tail = 0;
        a->arrived++;
        return true;
    }
    if (a->n_heap > 0 && a->heap[0].i == s.i && a->heap[0].t == s.t) {
        pending_heap_pop(a->heap, &a->n_heap);
    } else {
        a->cursor++;
        a->n_gated++;
        skip_followers(a);
    }
    send(a, s.i, s.t);
    return false;
}

void kv_arrivals_ended(void *arrivals, const kv_req *r)
{
    kv_arrivals *a = arrivals;
    size_t i = (size_t)(r - a->reqs);
    if ((a->next_of && a->next_of[i] != NONE) || (a->slots && !a->reqs[i].spec->client))
        a->ended[a->n_ended++] = i;
}

void kv_arrivals_settle(kv_arrivals *a, int64_t now)
{
    for (size_t k = 0; k < a->n_ended; k++) {
        if (!a->next_of || a->next_of[a->ended[k]] == NONE) { /* a semaphore slot frees */
            a->released[a->n_released++] = sat_add(now, a->fe.out_ns);
            continue;
        }
        size_t j = a->next_of[a->ended[k]];
        const kv_request_spec *s = a->reqs[j].spec;
        int64_t t = sat_add(sat_add(now, a->fe.out_ns), s->think_ns);
        pending_heap_push(a->heap, &a->n_heap, (pending){t > s->arrival_ns ? t : s->arrival_ns, j});
    }
    a->n_ended = 0;
}

uint64_t kv_arrivals_num_arrived(const kv_arrivals *a)
{
    return a->arrived;
}

kv_request_spec *kv_arrivals_finish(kv_arrivals *a, kv_req *reqs, size_t n)
{
    if (a->fe.out_ns > 0)
        for (size_t i = 0; i < n; i++) {
            if (reqs[i].first_token_ns >= 0)
                reqs[i].first_token_ns = sat_add(reqs[i].first_token_ns, a->fe.out_ns);
            if (reqs[i].finish_ns >= 0)
                reqs[i].finish_ns = sat_add(reqs[i].finish_ns, a->fe.out_ns);
        }
    kv_request_spec *s = a->sent;
    a->sent = NULL;
    return s;
}
