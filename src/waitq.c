/* waitq: sched's waiting queue, FCFS deque or priority heap (src/sched_internal.h).
 *
 * FCFS is vLLM's FCFSRequestQueue (a deque: add_request appends, prepend_request puts a
 * preempted request at the front).  Priority is its PriorityRequestQueue (heapq on
 * Request.__lt__: priority, then arrival time, then request id; prepend_request is a plain
 * push, so a preempted request re-enters by its key, not at the front).  kvsim's third key
 * is the row index, which orders exactly as vLLM's ids do when they sort like the rows.
 *
 * Invariants: FCFS entries are v[(head + i) % cap] for i < len; priority entries satisfy
 * the heap property on kv__req_before over v[0..len).  Complexity: push and pop O(1)
 * (FCFS) or O(log n) (priority), remove O(n), growth amortised O(1).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kvsim/mem.h"
#include "sched_internal.h"

bool kv__req_before(const kv_req *a, const kv_req *b)
{
    const kv_request_spec *x = a->spec, *y = b->spec;
    if (x->priority != y->priority)
        return x->priority < y->priority;
    if (x->arrival_ns != y->arrival_ns)
        return x->arrival_ns < y->arrival_ns;
    return x->row < y->row;
}

void kv__waitq_init(kv__waitq *q, kv_sched_policy policy)
{
    memset(q, 0, sizeof *q);
    q->policy = policy;
}

void kv__waitq_release(kv__waitq *q)
{
    free(q->v);
    memset(q, 0, sizeof *q);
}

/* Room for one more; the ring is unrolled to start at 0. */
static void reserve(kv__waitq *q)
{
    if (q->len < q->cap)
        return;
    size_t cap = q->cap ? q->cap * 2 : 64;
    kv_req **v = kv_xmalloc(cap * sizeof *v);
    for (size_t i = 0; i < q->len; i++)
        v[i] = q->v[(q->head + i) % q->cap];
    free(q->v);
    q->v = v;
    q->cap = cap;
    q->head = 0;
}

static void sift_up(kv_req **v, size_t i)
{
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!kv__req_before(v[i], v[up]))
            break;
        kv_req *t = v[i];
        v[i] = v[up];
        v[up] = t;
        i = up;
    }
}

static void sift_down(kv_req **v, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && kv__req_before(v[l], v[m]))
            m = l;
        if (r < n && kv__req_before(v[r], v[m]))
            m = r;
        if (m == i)
            return;
        kv_req *t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}

void kv__waitq_push(kv__waitq *q, kv_req *r, bool front)
{
    reserve(q);
    if (q->policy == KV_POLICY_PRIORITY) {
        q->v[q->len] = r;
        sift_up(q->v, q->len++);
    } else if (front) {
        q->head = (q->head + q->cap - 1) % q->cap;
        q->v[q->head] = r;
        q->len++;
    } else {
        q->v[(q->head + q->len++) % q->cap] = r;
    }
}

kv_req *kv__waitq_peek(const kv__waitq *q)
{
    assert(q->len > 0);
    return q->v[q->head];
}

/* Remove storage slot i (priority) by moving the last entry into it. */
static void heap_remove_at(kv__waitq *q, size_t i)
{
    q->len--;
    if (i == q->len)
        return;
    q->v[i] = q->v[q->len];
    sift_down(q->v, q->len, i);
    sift_up(q->v, i);
}

void kv__waitq_pop(kv__waitq *q)
{
    assert(q->len > 0);
    if (q->policy == KV_POLICY_PRIORITY) {
        heap_remove_at(q, 0);
        return;
    }
    q->head = (q->head + 1) % q->cap;
    q->len--;
}

bool kv__waitq_remove(kv__waitq *q, kv_req *r)
{
    for (size_t i = 0; i < q->len; i++) {
        if (kv__waitq_at(q, i) != r)
            continue;
        if (q->policy == KV_POLICY_PRIORITY) {
            heap_remove_at(q, i);
            return true;
        }
        for (size_t k = i; k + 1 < q->len; k++) /* close the gap, keeping the order */
            q->v[(q->head + k) % q->cap] = q->v[(q->head + k + 1) % q->cap];
        q->len--;
        return true;
    }
    return false;
}

kv_req *kv__waitq_at(const kv__waitq *q, size_t i)
{
    assert(i < q->len);
    return q->v[(q->head + i) % q->cap];
}
