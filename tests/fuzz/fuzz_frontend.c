/* Harness: front-end specs (kv_frontend_parse; README "The serving front end").
 *
 * Checks on an accepted spec: in and out are 0 to 1e9 ms in whole nanoseconds, tok 0 to
 * 1000 ms, the rate is 0 (unlimited) or in [1e-9, 1e12] requests a second; the
 * description fits its buffer and reads back as the same model (summary.json's
 * config.frontend is that description, and --frontend must reproduce the run from it).
 * A refused spec gives -KV_EINVAL with a message naming {frontend}.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kvsim/arrivals.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024)
        return 0;
    char *spec = fuzz_string(data, size);
    kv_frontend f;
    kv_diag d = {{0}};
    int rc = kv_frontend_parse(spec, &f, &d);
    if (rc != 0) {
        fuzz_check_diag(rc, &d);
        FUZZ_CHECK(rc == -KV_EINVAL, "rc %d", rc);
        FUZZ_CHECK(strstr(d.msg, "frontend") != NULL, "message without {frontend}: %s", d.msg);
        free(spec);
        return 0;
    }
    FUZZ_CHECK(f.in_ns >= 0 && f.in_ns <= 1000000000000000LL, "in %lld ns", (long long)f.in_ns);
    FUZZ_CHECK(f.out_ns >= 0 && f.out_ns <= 1000000000000000LL, "out %lld ns", (long long)f.out_ns);
    FUZZ_CHECK(f.rate == 0 || (f.rate >= 1e-9 && f.rate <= 1e12), "rate %g", f.rate);
    FUZZ_CHECK(f.tok_ns >= 0 && f.tok_ns <= 1000000000, "tok %lld ns", (long long)f.tok_ns);
    char desc[128]; /* the longest description is about 70 characters */
    kv_frontend_describe(&f, desc, sizeof desc);
    FUZZ_CHECK(strlen(desc) < sizeof desc - 1, "description truncated: %s", desc);
    kv_frontend back;
    rc = kv_frontend_parse(desc, &back, &d);
    FUZZ_CHECK(rc == 0, "description '%s' of '%s' rejected: %s", desc, spec, d.msg);
    FUZZ_CHECK(back.in_ns == f.in_ns && back.out_ns == f.out_ns && back.rate == f.rate &&
                   back.tok_ns == f.tok_ns,
               "'%s' → '%s' changed the model", spec, desc);
    FUZZ_CHECK(kv_frontend_is_none(&back) == kv_frontend_is_none(&f), "none changed");
    free(spec);
    return 0;
}
