/* chainstore (src/chainstore.c): digests kept across replays give the chains computed
 * without a store, and save the hashing they promise — the private store of plan's
 * probes, and the shared one sweep's forked configurations read and write (across a real
 * fork here), with its identity slots, row extension and byte bound. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvsim/blockhash.h"
#include "support.h"

enum { ROWS = 4, MAX_BLOCKS = 12 };

static uint64_t ids[ROWS][6] = {
    {1, 2, 3, 4, 5, 6}, {1, 2, 9, 4, 5, 6}, {7, 2, 3, 4, 5, 6}, {8, 8, 8, 8, 8, 8}};

/* Row r's content: 6 hash_ids of 8 tokens (48 prompt tokens). */
static void content(kv_content *c, uint32_t r)
{
    kv_request_spec spec = {.prompt_len = 48,
                            .output_len = 4,
                            .row = r,
                            .content = KV_CONTENT_HASH_IDS,
                            .hash_ids = ids[r],
                            .n_hash_ids = 6};
    kv_content_from_spec(c, &spec, 8, 0);
}

static kv_hasher *hasher(uint32_t block_size, kv_chain_store *s)
{
    kv_hasher *h;
    cr_assert_eq(kv_hasher_create(&h, "m", "bf16", block_size), 0);
    kv_hasher_use_store(h, s);
    return h;
}

/* Row r's chain [0, n) through s in pieces [0, cut) and [cut, n), checked against a
 * hasher without a store; the blocks this took hashing. */
static uint64_t chain_checked(kv_chain_store *s, uint32_t block_size, uint32_t r, uint32_t cut,
                              uint32_t n)
{
    kv_content c;
    content(&c, r);
    kv_hasher *plain = hasher(block_size, NULL), *h = hasher(block_size, s);
    kv_digest want[MAX_BLOCKS], got[MAX_BLOCKS];
    kv_hasher_chain(plain, &c, want, 0, n);
    kv_hasher_chain(h, &c, got, 0, cut);
    kv_hasher_chain(h, &c, got, cut, n);
    for (uint32_t j = 0; j < n; j++)
        cr_assert(memcmp(want[j].b, got[j].b, KV_DIGEST_LEN) == 0, "b%u row %u block %u",
                  block_size, r, j);
    uint64_t hashed = kv_hasher_blocks_hashed(h);
    kv_hasher_destroy(plain);
    kv_hasher_destroy(h);
    return hashed;
}

Test(chainstore, shared_store_serves_a_forked_process)
{
    kv_chain_store *s = kv_chain_store_create_shared(1 << 20, ROWS);
    cr_assert_not_null(s);
    pid_t pid = fork();
    if (pid == 0) /* another process hashes rows 0 and 1 */
        _exit(chain_checked(s, 4, 0, 0, 12) == 12 && chain_checked(s, 4, 1, 5, 12) == 12 ? 0 : 1);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child hashed every block");
    cr_assert_eq(chain_checked(s, 4, 0, 0, 12), 0, "row 0 copied from the other process");
    cr_assert_eq(chain_checked(s, 4, 1, 7, 12), 0, "row 1 too, in other pieces");
    cr_assert_eq(chain_checked(s, 4, 2, 0, 12), 12, "row 2 was never hashed");
    cr_assert_eq(chain_checked(s, 4, 2, 0, 12), 0, "now it is");
    /* Row 1 went in twice (5 digests, then all 12: a longer chain is a new region). */
    cr_assert_eq(kv_chain_store_bytes(s), (12 + 5 + 12 + 12) * sizeof(kv_digest));
    kv_chain_store_destroy(s);
}

Test(chainstore, shared_rows_grow_and_only_the_missing_blocks_are_hashed)
{
    kv_chain_store *s = kv_chain_store_create_shared(1 << 20, ROWS);
    cr_assert_eq(chain_checked(s, 4, 3, 0, 3), 3);
    cr_assert_eq(chain_checked(s, 4, 3, 2, 9), 6, "blocks 0-2 copied, 3-8 hashed");
    cr_assert_eq(chain_checked(s, 4, 3, 4, 9), 0);
    cr_assert_eq(chain_checked(s, 4, 3, 1, 2), 0, "a shorter chain is a copy too");
    cr_assert_eq(chain_checked(s, 4, 3, 9, 12), 3);
    cr_assert_eq(chain_checked(s, 4, 3, 0, 12), 0);
    kv_chain_store_destroy(s);
}

Test(chainstore, shared_store_keeps_one_slot_per_identity)
{
    kv_chain_store *s = kv_chain_store_create_shared(1 << 20, ROWS);
    /* Block sizes 1 … SLOTS + 1: SLOTS identities bind a slot each, the last finds none. */
    for (uint32_t b = 1; b <= KV_CHAIN_SLOTS + 1; b++) {
        uint32_t n = 48 / b < MAX_BLOCKS ? 48 / b : MAX_BLOCKS;
        cr_assert_eq(chain_checked(s, b, 0, 0, n), n, "b%u: first time", b);
    }
    for (uint32_t b = 1; b <= KV_CHAIN_SLOTS + 1; b++) {
        uint32_t n = 48 / b < MAX_BLOCKS ? 48 / b : MAX_BLOCKS;
        cr_assert_eq(chain_checked(s, b, 0, 0, n), b <= KV_CHAIN_SLOTS ? 0 : n, "b%u again", b);
    }
    kv_chain_store_destroy(s);
}

Test(chainstore, shared_store_holds_at_most_its_bytes_and_its_rows)
{
    kv_chain_store *s = kv_chain_store_create_shared(5 * sizeof(kv_digest), 2);
    cr_assert_eq(chain_checked(s, 8, 0, 0, 4), 4);
    cr_assert_eq(chain_checked(s, 8, 1, 0, 4), 4, "not kept: 8 digests > 5");
    cr_assert_eq(chain_checked(s, 8, 0, 0, 4), 0);
    cr_assert_eq(chain_checked(s, 8, 1, 0, 4), 4);
    cr_assert_eq(chain_checked(s, 8, 2, 0, 4), 4, "row 2: beyond the store's rows");
    cr_assert_eq(chain_checked(s, 8, 2, 0, 4), 4);
    kv_chain_store_destroy(s);
    cr_assert_null(kv_chain_store_create_shared(1 << 20, 0), "no rows: no store");
}

Test(chainstore, private_store_is_bound_to_its_first_identity)
{
    kv_chain_store *s = kv_chain_store_create(1 << 20);
    cr_assert_eq(chain_checked(s, 4, 0, 0, 6), 6);
    cr_assert_eq(chain_checked(s, 4, 0, 3, 12), 6, "extended: 6-11 hashed");
    cr_assert_eq(chain_checked(s, 4, 0, 0, 12), 0);
    cr_assert_eq(chain_checked(s, 8, 0, 0, 6), 6, "another identity is not served");
    cr_assert_eq(chain_checked(s, 8, 0, 0, 6), 6);
    cr_assert_eq(kv_chain_store_bytes(s), 12 * sizeof(kv_digest));
    kv_chain_store_destroy(s);
}
