/* router: policies, the approximate view, exact score comparison (include/kvsim/router.h,
 * DESIGN §10 C2–C5, C8).
 *
 * One routing: draw once (C8), compute the scores the policy needs over the replicas in
 * index order, keep the candidates that tie for the best score, and pick
 * candidates[draw mod count].  prefix, weighted and kv-cost need every replica's overlap
 * (at most R index probes per leading block, up to each replica's first miss, DESIGN §10
 * "Performance"); the others need only the chosen replica's, for C6.
 *
 * The approximate view (C5, llm-d's approx-prefix-cache-producer): per replica an LRU set
 * of block digests with capacity = its usable blocks.  Layout: a node array (grown by
 * doubling up to the capacity, so memory follows what was routed) whose nodes form a
 * doubly linked list through indices, least recently routed at the head, most recently at
 * the tail; and an open-addressing table of node indices (linear probing, 2^k ≥ 2·size
 * slots, keyed by the digest's first 8 bytes, which are SHA-256 output) with
 * backward-shift deletion, so there are no tombstones.  A full LRU reuses its head node.
 * Invariants (kv_router_check): list length = table entries = size ≤ cap; every listed
 * node is found under its own digest; no digest twice.
 *
 * Scores (C8): the weighted score Σ w·s / Σ w has the same Σ w for every replica, so only
 * Σ w·s is compared; its scorers are overlap/P, (max_q − q)/(max_q − min_q) and
 * free/usable, and over the common denominator P·D·U (each factor taken as 1 where its
 * scorer degenerates: P = 0 gives prefix 0, D = 0 gives queue 1) the numerator is
 *   w_p·overlap·D·U + w_q·(max_q − q)·P·U + w_k·free·P·D,
 * below 2^30·2^24·2^32·2^32 = 2^118 per term with weights ≤ 1000 units in millionths,
 * prompts ≤ 2^24 tokens, and 32-bit counts: exact in unsigned 128-bit arithmetic.
 *
 * Complexity: O(R + probes) per routing, plus O(P) LRU updates with the approx view.
 */
#include "kvsim/router.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "kvsim/rng.h"
#include "kvsim/text.h"

__extension__ typedef unsigned __int128 u128;

/* ---- configuration ------------------------------------------------------------------ */

static const char *const policy_names[] = {
    [KV_ROUTER_ROUND_ROBIN] = "round-robin", [KV_ROUTER_RANDOM] = "random",
    [KV_ROUTER_LEAST_REQUESTS] = "least-requests", [KV_ROUTER_LEAST_KV] = "least-kv",
    [KV_ROUTER_PREFIX] = "prefix",           [KV_ROUTER_WEIGHTED] = "weighted",
    [KV_ROUTER_KV_COST] = "kv-cost",         [KV_ROUTER_SESSION] = "session",
};
enum { N_POLICIES = sizeof policy_names / sizeof policy_names[0] };

void kv_router_config_init(kv_router_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = KV_ROUTER_ROUND_ROBIN;
    c->w_prefix = 2ull * KV_ROUTER_UNIT;
    c->w_queue = KV_ROUTER_UNIT;
    c->w_kv = KV_ROUTER_UNIT;
    c->overlap_weight = KV_ROUTER_UNIT;
    c->view = KV_ROUTER_EXACT;
}

const char *kv_router_policy_name(kv_router_policy p)
{
    return (unsigned)p < N_POLICIES ? policy_names[p] : "?";
}

const char *kv_router_view_name(kv_router_view v)
{
    return v == KV_ROUTER_APPROX ? "approx" : "exact";
}

int kv_router_weight_parse(const char *text, const char *what, uint64_t *micro, kv_diag *diag)
{
    const char *p = text;
    uint64_t whole = 0, frac = 0;
    int n_whole = 0, n_frac = 0;
    for (; *p >= '0' && *p <= '9' && n_whole < 12; p++, n_whole++)
        whole = whole * 10 + (uint64_t)(*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9' && n_frac < 7; p++, n_frac++)
            frac = frac * 10 + (uint64_t)(*p - '0');
    if (*p != '\0' || n_whole + n_frac == 0 || n_whole >= 12)
        return kv_diag_set(diag, -KV_EINVAL, "%s: '%s' is not a decimal number (e.g. 2 or 0.5)",
                           what, text);
    if (n_frac > 6)
        return kv_diag_set(diag, -KV_EINVAL, "%s: '%s' has more than 6 decimals", what, text);
    if (whole > KV_ROUTER_WEIGHT_MAX || (whole == KV_ROUTER_WEIGHT_MAX && frac > 0))
        return kv_diag_set(diag, -KV_EINVAL, "%s: '%s' must be at most %u", what, text,
                           KV_ROUTER_WEIGHT_MAX);
    for (; n_frac < 6; n_frac++)
        frac *= 10;
    *micro = whole * KV_ROUTER_UNIT + frac;
    return 0;
}

/* "weighted:prefix=WP,queue=WQ,kv=WK": omitted weights are 0, not all may be 0. */
static int parse_weights(const char *spec, const char *list, kv_router_config *c, kv_diag *diag)
{
    static const char *const keys[3] = {"prefix", "queue", "kv"};
    uint64_t w[3] = {0, 0, 0};
    bool seen[3] = {false, false, false};
    kv_kvlist l;
    kv_kvlist_init(&l, list, KV_KVLIST_PAIRS | KV_KVLIST_TRIM, "prefix=WP,queue=WQ,kv=WK");
    kv_kvitem it;
    int rc, got;
    char what[96];
    while ((got = kv_kvlist_next(&l, &it, diag)) == 1) {
        int k = 0;
        while (k < 3 && strcmp(it.key, keys[k]) != 0)
            k++;
        if (k == 3) {
            rc = kv_diag_set(diag, -KV_EINVAL,
                             "{router}: unknown weight '%s' in '%s' (prefix, queue, kv)", it.key,
                             spec);
            goto out;
        }
        if (seen[k]) {
            rc = kv_diag_set(diag, -KV_EINVAL, "{router}: weight '%s' given twice in '%s'",
                             it.key, spec);
            goto out;
        }
        seen[k] = true;
        snprintf(what, sizeof what, "{router}: weight '%s'", it.key);
        if ((rc = kv_router_weight_parse(it.value, what, &w[k], diag)) != 0)
            goto out;
    }
    if (got < 0) {
        char inner[sizeof diag->msg];
        snprintf(inner, sizeof inner, "%s", diag ? diag->msg : "");
        rc = kv_diag_set(diag, -KV_EINVAL, "{router}: malformed weights in '%s': %s", spec, inner);
        goto out;
    }
    if (w[0] + w[1] + w[2] == 0) {
        rc = kv_diag_set(diag, -KV_EINVAL,
                         "{router}: the weights in '%s' are all 0 (give at least one above 0)",
                         spec);
        goto out;
    }
    c->w_prefix = w[0];
    c->w_queue = w[1];
    c->w_kv = w[2];
    rc = 0;
out:
    kv_kvlist_release(&l);
    return rc;
}

int kv_router_parse(const char *spec, kv_router_config *c, kv_diag *diag)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    int p = 0;
    while (p < N_POLICIES && !(strlen(policy_names[p]) == len && !strncmp(spec, policy_names[p], len)))
        p++;
    if (p == N_POLICIES)
        return kv_diag_set(diag, -KV_EINVAL, "{router}: unknown policy '%.*s' (expected one of: %s)",
                           (int)len, spec, KV_ROUTER_POLICY_NAMES);
    kv_router_config next = *c;
    next.policy = (kv_router_policy)p;
    if (colon && p != KV_ROUTER_WEIGHTED)
        return kv_diag_set(diag, -KV_EINVAL, "{router}: '%s' takes no parameters (got '%s')",
                           policy_names[p], spec);
    if (p == KV_ROUTER_WEIGHTED) {
        kv_router_config d;
        kv_router_config_init(&d);
        next.w_prefix = d.w_prefix;
        next.w_queue = d.w_queue;
        next.w_kv = d.w_kv;
        if (colon) {
            int rc = parse_weights(spec, colon + 1, &next, diag);
            if (rc != 0)
                return rc;
        }
    }
    *c = next;
    return 0;
}

int kv_router_view_parse(const char *s, kv_router_view *out, kv_diag *diag)
{
    if (strcmp(s, "exact") == 0)
        *out = KV_ROUTER_EXACT;
    else if (strcmp(s, "approx") == 0)
        *out = KV_ROUTER_APPROX;
    else
        return kv_diag_set(diag, -KV_EINVAL, "{router_view}: unknown view '%s' (exact or approx)",
                           s);
    return 0;
}

int kv_router_config_check(const kv_router_config *c, kv_diag *diag)
{
    const uint64_t max = (uint64_t)KV_ROUTER_WEIGHT_MAX * KV_ROUTER_UNIT;
    if ((unsigned)c->policy >= N_POLICIES)
        return kv_diag_set(diag, -KV_EINVAL, "{router}: unknown policy %d", (int)c->policy);
    if (c->w_prefix > max || c->w_queue > max || c->w_kv > max || c->overlap_weight > max)
        return kv_diag_set(diag, -KV_EINVAL, "router weights must be at most %u",
                           KV_ROUTER_WEIGHT_MAX);
    if (c->policy == KV_ROUTER_WEIGHTED && c->w_prefix + c->w_queue + c->w_kv == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{router}: the weights are all 0");
    if (!(c->refresh_s >= 0 && c->refresh_s <= 1e9))
        return kv_diag_set(diag, -KV_EINVAL,
                           "{router_refresh} must be a finite number of seconds in [0, 1e9]");
    if (c->refresh_s > 0 && llround(c->refresh_s * 1e9) < 1)
        return kv_diag_set(diag, -KV_EINVAL, "{router_refresh} must be 0 or at least 1 ns");
    return 0;
}

void kv_router_micro_text(uint64_t micro, char *buf, size_t n)
{
    uint64_t whole = micro / KV_ROUTER_UNIT, frac = micro % KV_ROUTER_UNIT;
    if (frac == 0) {
        snprintf(buf, n, "%llu", (unsigned long long)whole);
        return;
    }
    char f[8];
    snprintf(f, sizeof f, "%06llu", (unsigned long long)frac);
    for (int i = 5; i > 0 && f[i] == '0'; i--)
        f[i] = '\0';
    snprintf(buf, n, "%llu.%s", (unsigned long long)whole, f);
}

void kv_router_spec(const kv_router_config *c, char *buf, size_t n)
{
    if (c->policy != KV_ROUTER_WEIGHTED) {
        snprintf(buf, n, "%s", kv_router_policy_name(c->policy));
        return;
    }
    char p[24], q[24], k[24];
    kv_router_micro_text(c->w_prefix, p, sizeof p);
    kv_router_micro_text(c->w_queue, q, sizeof q);
    kv_router_micro_text(c->w_kv, k, sizeof k);
    snprintf(buf, n, "weighted:prefix=%s,queue=%s,kv=%s", p, q, k);
}

/* ---- the approximate view: one LRU of digests per replica ---------------------------- */

#define NIL UINT32_MAX

typedef struct lru_node {
    kv_digest d;
    uint32_t prev, next; /* list links (node indices; NIL = the sentinel) */
} lru_node;

typedef struct lru {
    lru_node *node;        /* size nodes in use, [0, size) */
    size_t cap_nodes;      /* allocated */
    uint32_t head, tail;   /* least and most recently routed; NIL when empty */
    uint32_t size, cap;    /* cap: the replica's usable blocks */
    uint32_t *slot;        /* 2^k slots of node indices, NIL = empty */
    uint32_t mask;         /* 2^k − 1 (0 before the first insert) */
} lru;

static uint64_t digest_key(const kv_digest *d)
{
    uint64_t k;
    memcpy(&k, d->b, sizeof k);
    return k;
}

/* The slot holding d, or the empty slot where it would go. */
static uint32_t lru_slot(const lru *l, const kv_digest *d)
{
    uint32_t i = (uint32_t)digest_key(d) & l->mask;
    while (l->slot[i] != NIL && memcmp(&l->node[l->slot[i]].d, d, sizeof *d) != 0)
        i = (i + 1) & l->mask;
    return i;
}

static bool lru_has(const lru *l, const kv_digest *d)
{
    return l->size > 0 && l->slot[lru_slot(l, d)] != NIL;
}

static void table_resize(lru *l, uint32_t slots)
{
    free(l->slot);
    l->slot = kv_xmalloc(slots * sizeof *l->slot);
    for (uint32_t i = 0; i < slots; i++)
        l->slot[i] = NIL;
    l->mask = slots - 1;
    for (uint32_t n = 0; n < l->size; n++)
        l->slot[lru_slot(l, &l->node[n].d)] = n;
}

/* Backward-shift deletion: later entries of the probe run move up into the hole unless
 * their home slot lies cyclically in (hole, their slot]. */
static void table_delete(lru *l, uint32_t i)
{
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & l->mask;
        if (l->slot[j] == NIL)
            break;
        uint32_t home = (uint32_t)digest_key(&l->node[l->slot[j]].d) & l->mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays)
            continue;
        l->slot[i] = l->slot[j];
        i = j;
    }
    l->slot[i] = NIL;
}

static void list_unlink(lru *l, uint32_t n)
{
    lru_node *x = &l->node[n];
    if (x->prev != NIL)
        l->node[x->prev].next = x->next;
    else
        l->head = x->next;
    if (x->next != NIL)
        l->node[x->next].prev = x->prev;
    else
        l->tail = x->prev;
}

static void list_push_tail(lru *l, uint32_t n)
{
    lru_node *x = &l->node[n];
    x->prev = l->tail;
    x->next = NIL;
    if (l->tail != NIL)
        l->node[l->tail].next = n;
    else
        l->head = n;
    l->tail = n;
}

/* Insert d as the most recently routed, or refresh it; evict the least recently routed
 * beyond the capacity. */
static void lru_touch(lru *l, const kv_digest *d)
{
    if (l->cap == 0)
        return;
    if (l->mask == 0)
        table_resize(l, 16);
    uint32_t s = lru_slot(l, d);
    if (l->slot[s] != NIL) { /* a refresh */
        uint32_t n = l->slot[s];
        list_unlink(l, n);
        list_push_tail(l, n);
        return;
    }
    uint32_t n;
    if (l->size == l->cap) { /* reuse the least recently routed node */
        n = l->head;
        table_delete(l, lru_slot(l, &l->node[n].d));
        list_unlink(l, n);
    } else {
        kv_grow((void **)&l->node, &l->cap_nodes, (size_t)l->size + 1, sizeof *l->node);
        n = l->size++;
        if ((uint64_t)l->size * 2 > (uint64_t)l->mask + 1) {
            l->node[n].d = *d; /* placed by the rehash */
            table_resize(l, (l->mask + 1) * 2);
            list_push_tail(l, n);
            return;
        }
    }
    l->node[n].d = *d;
    l->slot[lru_slot(l, d)] = n;
    list_push_tail(l, n);
}

static void lru_release(lru *l)
{
    free(l->node);
    free(l->slot);
}

/* The approx LRU's key for private block j of request id: no SHA-256 needed, unique per
 * (id, j), the table key (the first 8 bytes) well mixed, the tail a tag that no
 * XXH3-128 digest has (its last 16 bytes are 0) and a SHA-256 one has with probability
 * 2^-64 at most. */
static kv_digest private_key(uint64_t id, uint32_t j)
{
    kv_digest k;
    uint64_t st = id * 0x100000001b3ull ^ j, mix = kv_splitmix64(&st);
    static const char tag[8] = {'k', 'v', 's', 'i', 'm', 'p', 'r', 'v'};
    memcpy(k.b, &mix, 8);
    memcpy(k.b + 8, &id, 8);
    uint64_t jj = j;
    memcpy(k.b + 16, &jj, 8);
    memcpy(k.b + 24, tag, 8);
    return k;
}

/* ---- the router --------------------------------------------------------------------- */

struct kv_router {
    kv_router_config cfg;
    uint32_t replicas;
    uint32_t usable;    /* U: every replica's usable blocks */
    uint64_t state;     /* SplitMix64 tie-break stream (C8) */
    uint64_t routed;    /* k: requests routed so far (round-robin's counter) */
    uint32_t *session;  /* n_sessions entries: the replica of a session's first row, NIL */
    uint32_t n_sessions;
    lru *lru;           /* replicas entries with the approx view, else NULL */
    uint32_t *cand;     /* scratch: tied candidates, replicas entries */
    uint32_t *overlap;  /* scratch: each replica's overlap */
};

int kv_router_create(kv_router **out, const kv_router_config *cfg, uint32_t replicas,
                     uint32_t usable, uint32_t n_sessions, kv_diag *diag)
{
    *out = NULL;
    int rc = kv_router_config_check(cfg, diag);
    if (rc != 0)
        return rc;
    if (replicas == 0)
        return kv_diag_set(diag, -KV_EINVAL, "{replicas} must be at least 1");
    kv_router *rt = kv_xcalloc(1, sizeof *rt);
    rt->cfg = *cfg;
    rt->replicas = replicas;
    rt->usable = usable;
    rt->state = cfg->seed;
    rt->n_sessions = n_sessions;
    rt->session = kv_xmalloc((n_sessions ? n_sessions : 1) * sizeof *rt->session);
    for (uint32_t i = 0; i < n_sessions; i++)
        rt->session[i] = NIL;
    if (cfg->view == KV_ROUTER_APPROX) {
        rt->lru = kv_xcalloc(replicas, sizeof *rt->lru);
        for (uint32_t r = 0; r < replicas; r++) {
            rt->lru[r].cap = usable;
            rt->lru[r].head = rt->lru[r].tail = NIL;
        }
    }
    rt->cand = kv_xmalloc(replicas * sizeof *rt->cand);
    rt->overlap = kv_xmalloc(replicas * sizeof *rt->overlap);
    *out = rt;
    return 0;
}

void kv_router_destroy(kv_router *rt)
{
    if (!rt)
        return;
    for (uint32_t r = 0; rt->lru && r < rt->replicas; r++)
        lru_release(&rt->lru[r]);
    free(rt->lru);
    free(rt->session);
    free(rt->cand);
    free(rt->overlap);
    free(rt);
}

uint32_t kv_router_overlap(const kv_router *rt, uint32_t r, const kv_route_input *in,
                           const kv_pool *pool)
{
    if (!in->chain)
        return 0;
    uint32_t n_chain = in->n_full - in->n_private; /* a private block is in no view */
    uint32_t lim = in->max_hit < n_chain ? in->max_hit : n_chain;
    uint32_t j = 0;
    if (rt->cfg.view == KV_ROUTER_APPROX) {
        while (j < lim && lru_has(&rt->lru[r], &in->chain[j]))
            j++;
    } else {
        while (j < lim && kv_pool_lookup(pool, &in->chain[j]) != KV_NO_BLOCK)
            j++;
    }
    return j;
}

uint32_t kv_router_lru_size(const kv_router *rt, uint32_t r)
{
    return rt->lru ? rt->lru[r].size : 0;
}

uint64_t kv_router_routed(const kv_router *rt)
{
    return rt->routed;
}

/* Candidates: the replicas whose key equals the best (smallest) one, in index order.
 * Keys are exact integers (u128), so equal scores tie. */
typedef struct best {
    u128 key;
    uint32_t n;
} best;

static void offer(best *b, uint32_t *cand, uint32_t r, u128 key)
{
    if (b->n == 0 || key < b->key) {
        b->key = key;
        b->n = 0;
    }
    if (key == b->key)
        cand[b->n++] = r;
}

static uint64_t load(const kv_replica_signals *s)
{
    return (uint64_t)s->running + s->waiting;
}

/* least-requests: the smallest running + waiting, ties by the draw. */
static uint32_t least_requests(kv_router *rt, const kv_replica_signals *sig, uint64_t draw)
{
    best b = {0, 0};
    for (uint32_t r = 0; r < rt->replicas; r++)
        offer(&b, rt->cand, r, load(&sig[r]));
    return rt->cand[draw % b.n];
}

/* The weighted score's numerator over the common denominator (file comment), negated
 * into a "smaller is better" key by subtracting from the largest 128-bit value. */
static void weighted(kv_router *rt, const kv_route_input *in, const kv_replica_signals *sig,
                     best *b)
{
    uint32_t max_q = 0, min_q = UINT32_MAX;
    for (uint32_t r = 0; r < rt->replicas; r++) {
        max_q = sig[r].waiting > max_q ? sig[r].waiting : max_q;
        min_q = sig[r].waiting < min_q ? sig[r].waiting : min_q;
    }
    u128 P = in->n_full ? in->n_full : 1, D = max_q > min_q ? max_q - min_q : 1;
    u128 U = rt->usable ? rt->usable : 1;
    for (uint32_t r = 0; r < rt->replicas; r++) {
        u128 pn = in->n_full ? rt->overlap[r] : 0;
        u128 qn = max_q > min_q ? (u128)(max_q - sig[r].waiting) : 1;
        u128 kn = sig[r].free_blocks;
        u128 score = (u128)rt->cfg.w_prefix * pn * D * U + (u128)rt->cfg.w_queue * qn * P * U +
                     (u128)rt->cfg.w_kv * kn * P * D;
        offer(b, rt->cand, r, ~(u128)0 - score);
    }
}

void kv_router_route(kv_router *rt, const kv_route_input *in, const kv_replica_signals *sig,
                     const kv_pool *const *pools, kv_route *out)
{
    const uint64_t draw = kv_splitmix64(&rt->state); /* exactly one per routed request */
    const uint64_t k = rt->routed++;
    const uint32_t R = rt->replicas;
    kv_router_policy pol = rt->cfg.policy;
    bool all_overlaps = pol == KV_ROUTER_PREFIX || pol == KV_ROUTER_WEIGHTED ||
                        pol == KV_ROUTER_KV_COST;
    if (all_overlaps)
        for (uint32_t r = 0; r < R; r++)
            rt->overlap[r] = kv_router_overlap(rt, r, in, pools ? pools[r] : NULL);
    best b = {0, 0};
    uint32_t choice = 0;
    switch (pol) {
    case KV_ROUTER_ROUND_ROBIN:
        choice = (uint32_t)(k % R);
        break;
    case KV_ROUTER_RANDOM:
        choice = (uint32_t)(draw % R);
        break;
    case KV_ROUTER_LEAST_REQUESTS:
        choice = least_requests(rt, sig, draw);
        break;
    case KV_ROUTER_LEAST_KV: /* usage = used / U with one U for all: compare used */
        for (uint32_t r = 0; r < R; r++)
            offer(&b, rt->cand, r, sig[r].used_blocks);
        choice = rt->cand[draw % b.n];
        break;
    case KV_ROUTER_PREFIX: /* the largest overlap, then the smallest running + waiting */
        for (uint32_t r = 0; r < R; r++)
            offer(&b, rt->cand, r, ((u128)(UINT32_MAX - rt->overlap[r]) << 64) | load(&sig[r]));
        choice = rt->cand[draw % b.n];
        break;
    case KV_ROUTER_WEIGHTED:
        weighted(rt, in, sig, &b);
        choice = rt->cand[draw % b.n];
        break;
    case KV_ROUTER_KV_COST:
        for (uint32_t r = 0; r < R; r++)
            offer(&b, rt->cand, r,
                  (u128)rt->cfg.overlap_weight * (in->n_full - rt->overlap[r]) +
                      (u128)sig[r].used_blocks * KV_ROUTER_UNIT);
        choice = rt->cand[draw % b.n];
        break;
    case KV_ROUTER_SESSION:
        if (in->session != KV_ROUTER_NO_SESSION && rt->session[in->session] != NIL) {
            choice = rt->session[in->session];
        } else {
            choice = least_requests(rt, sig, draw);
            if (in->session != KV_ROUTER_NO_SESSION)
                rt->session[in->session] = choice;
        }
        break;
    }
    out->replica = choice;
    out->overlap = all_overlaps ? rt->overlap[choice]
                                : kv_router_overlap(rt, choice, in, pools ? pools[choice] : NULL);
    if (!rt->lru)
        return;
    uint32_t n_chain = in->n_full - in->n_private;
    for (uint32_t j = 0; in->chain && j < n_chain; j++)
        lru_touch(&rt->lru[choice], &in->chain[j]);
    for (uint32_t j = n_chain; j < in->n_full; j++) {
        kv_digest key = private_key(in->id, j);
        lru_touch(&rt->lru[choice], &key);
    }
}

/* ---- invariants --------------------------------------------------------------------- */

static int check_lru(const lru *l, uint32_t r, kv_diag *diag)
{
    if (l->size > l->cap)
        return kv_diag_set(diag, -KV_EINVARIANT, "router: replica %u's LRU holds %u > %u", r,
                           l->size, l->cap);
    uint32_t listed = 0, prev = NIL;
    for (uint32_t n = l->head; n != NIL; n = l->node[n].next) {
        if (n >= l->size || l->node[n].prev != prev || ++listed > l->size)
            return kv_diag_set(diag, -KV_EINVARIANT, "router: replica %u's LRU list is broken",
                               r);
        if (l->slot[lru_slot(l, &l->node[n].d)] != n)
            return kv_diag_set(diag, -KV_EINVARIANT,
                               "router: replica %u's LRU node %u is not found under its digest",
                               r, n);
        prev = n;
    }
    uint32_t in_table = 0;
    for (uint32_t i = 0; l->size > 0 && i <= l->mask; i++)
        in_table += l->slot[i] != NIL;
    if (listed != l->size || in_table != l->size || prev != l->tail)
        return kv_diag_set(diag, -KV_EINVARIANT,
                           "router: replica %u's LRU lists %u, indexes %u, holds %u", r, listed,
                           in_table, l->size);
    return 0;
}

int kv_router_check(const kv_router *rt, kv_diag *diag)
{
    for (uint32_t r = 0; rt->lru && r < rt->replicas; r++) {
        int rc = check_lru(&rt->lru[r], r, diag);
        if (rc != 0)
            return rc;
    }
    return 0;
}
