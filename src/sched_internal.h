/* sched_internal: the waiting queue behind sched.c (src/waitq.c), for sched.c and the
 * tests that walk it.  No other module includes this file.
 *
 * One queue, two orders (DESIGN §6.2, §6.6 "Scheduling policy"), as vLLM's
 * FCFSRequestQueue and PriorityRequestQueue:
 *   FCFS      a ring-buffer deque: arrivals at the back, preempted requests at the front;
 *   priority  a binary min-heap on (priority, arrival, row): every request, arriving or
 *             preempted, takes its place by that key.  The key is a total order (rows are
 *             unique), so the head is the same whatever the heap's internal layout.
 * Entries are borrowed kv_req pointers; the queue never looks at their state.
 */
#ifndef KVSIM_SCHED_INTERNAL_H
#define KVSIM_SCHED_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "kvsim/sched.h"

typedef struct kv__waitq {
    kv_sched_policy policy;
    kv_req **v;  /* FCFS: ring of cap slots from head; priority: heap in v[0..len) */
    size_t cap;  /* slots allocated */
    size_t head; /* FCFS: index of the front; priority: always 0 */
    size_t len;  /* entries queued */
} kv__waitq;

void kv__waitq_init(kv__waitq *q, kv_sched_policy policy);
void kv__waitq_release(kv__waitq *q); /* the entries are not touched */

/* Queue r: FCFS puts it at the front when front is set (a preempted request) and at the
 * back otherwise; priority places it by its key either way.  O(1) / O(log n). */
void kv__waitq_push(kv__waitq *q, kv_req *r, bool front);
/* The head (len > 0): FCFS the front, priority the smallest key.  O(1). */
kv_req *kv__waitq_peek(const kv__waitq *q);
/* Remove the head (len > 0).  O(1) / O(log n). */
void kv__waitq_pop(kv__waitq *q);
/* Remove r wherever it is; false when it is not queued.  O(n): only a preempted request
 * that finishes while it waits (async scheduling) needs it. */
bool kv__waitq_remove(kv__waitq *q, kv_req *r);
/* Entry i in storage order (i < len), for invariant walks; not the service order. */
kv_req *kv__waitq_at(const kv__waitq *q, size_t i);

/* The priority key order: (priority, arrival, row), a lower value served first. */
bool kv__req_before(const kv_req *a, const kv_req *b);

#endif
