/* Harness: the number grammar (kvsim/text.h), against a reference written from the grammar
 * in README "Numbers" independently of src/text.c.
 *
 * Checks: kv_parse_number accepts a text iff the reference grammar matches all of it; the
 * value is then strtod's for the same characters (correct rounding), finite, never -0;
 * overflow is -KV_ERANGE exactly when strtod gives ±inf; kv_number_lex finds the same
 * longest prefix as the reference and its parts add up to the text.
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kvsim/text.h"

static bool dig(char c)
{
    return c >= '0' && c <= '9';
}

/* Reference: length of the longest prefix matching
 *   [+-] ( D+ [ "." D* ] | "." D+ ) [ (e|E) [+-] D+ ], or 0. */
static size_t ref_prefix(const char *s, size_t n)
{
    size_t best = 0;
    /* try every end position: the longest that matches wins (simple, O(n^2), fine) */
    for (size_t end = 1; end <= n; end++) {
        size_t i = 0;
        if (i < end && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t a = i;
        while (i < end && dig(s[i]))
            i++;
        size_t int_digits = i - a, frac_digits = 0;
        if (i < end && s[i] == '.') {
            i++;
            size_t b = i;
            while (i < end && dig(s[i]))
                i++;
            frac_digits = i - b;
        }
        if (int_digits + frac_digits == 0)
            continue;
        if (i < end && (s[i] == 'e' || s[i] == 'E')) {
            i++;
            if (i < end && (s[i] == '+' || s[i] == '-'))
                i++;
            size_t c = i;
            while (i < end && dig(s[i]))
                i++;
            if (i == c)
                continue;
        }
        if (i == end)
            best = end;
    }
    return best;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0; /* the reference is quadratic */
    const char *s = (const char *)data;
    size_t want = ref_prefix(s, size);

    kv_number_parts p;
    bool lexed = kv_number_lex(s, size, &p);
    FUZZ_CHECK(lexed == (want > 0), "lex %d, reference prefix %zu", lexed, want);
    if (lexed) {
        FUZZ_CHECK(p.len == want, "lex length %zu, reference %zu", p.len, want);
        FUZZ_CHECK(p.n_int + p.n_frac >= 1, "a number without digits");
        FUZZ_CHECK(p.negative == (s[0] == '-'), "sign");
        size_t sign = s[0] == '+' || s[0] == '-';
        FUZZ_CHECK(p.int_digits == s + sign, "int digits start");
        if (p.n_frac)
            FUZZ_CHECK(p.frac_digits == s + sign + p.n_int + 1, "frac digits start");
        for (size_t i = 0; i < p.n_int; i++)
            FUZZ_CHECK(dig(p.int_digits[i]), "int digit");
        for (size_t i = 0; i < p.n_frac; i++)
            FUZZ_CHECK(dig(p.frac_digits[i]), "frac digit");
        FUZZ_CHECK(p.exponent >= -KV_NUMBER_EXP_SAT && p.exponent <= KV_NUMBER_EXP_SAT, "exp");
    }

    double v = 12345;
    int rc = kv_parse_number(s, size, &v);
    bool whole = want == size && size > 0;
    if (!whole) {
        FUZZ_CHECK(rc == -KV_EINVAL, "accepted a non-number (rc %d)", rc);
        FUZZ_CHECK(v == 12345, "output changed on error");
        return 0;
    }
    char *copy = fuzz_string(data, size);
    char *end;
    double ref = strtod(copy, &end);
    FUZZ_CHECK(end == copy + size, "strtod disagrees on the extent of '%s'", copy);
    free(copy);
    if (isinf(ref)) {
        FUZZ_CHECK(rc == -KV_ERANGE, "overflow not reported (rc %d)", rc);
        return 0;
    }
    FUZZ_CHECK(rc == 0, "rejected a number (rc %d)", rc);
    FUZZ_CHECK(isfinite(v), "non-finite value");
    FUZZ_CHECK(v == ref, "value %.17g, strtod %.17g", v, ref);
    FUZZ_CHECK(!(v == 0 && signbit(v)), "-0 leaked");
    return 0;
}
