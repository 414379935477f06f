/* hfquant: bytes per weight from a Hugging Face config.json's quantization_config
 * (README "Any Hugging Face config.json").
 *
 * The weights per rank enter the KV budget (GPU memory − weights − reserve) and the
 * roofline's bytes per step, so a quantised checkpoint counted at 2 bytes per parameter
 * would be silently wrong twice.  What is read, in this order:
 *   "bits": N (GPTQ, AWQ and others)           N/8
 *   quant_method fp8, fbgemm_fp8, ptpc_fp8      1
 *   quant_method modelopt, quant_algo FP8        1 (NVFP4 / W4A…: 0.5)
 *   quant_method bitsandbytes                    load_in_4bit 0.5, load_in_8bit 1
 *   quant_method compressed-tensors              config_groups.*.weights.num_bits / 8,
 *                                                when every group agrees
 *   quant_method mxfp4                           0.5
 * Anything else — another method, a compressed-tensors config whose groups disagree or
 * give no bits, bitsandbytes with neither flag — is unknown: the caller refuses it unless
 * the weight dtype is given on the command line.  The figures are per quantised element:
 * unquantised embeddings, norms and the scales themselves are ignored (an approximation of
 * a few percent, stated in the README).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "hfconfig_internal.h"

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool is(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

/* compressed-tensors: the weights' num_bits of every config group, if they agree. */
static int compressed_tensors_bits(const json_t *q)
{
    const json_t *groups = json_object_get(q, "config_groups");
    const char *key;
    const json_t *g;
    int bits = 0;
    if (!json_is_object(groups))
        return 0;
    json_object_foreach((json_t *)groups, key, g)
    {
        const json_t *nb = json_object_get(json_object_get(g, "weights"), "num_bits");
        if (!json_is_integer(nb) || json_integer_value(nb) < 1 || json_integer_value(nb) > 16)
            return 0;
        int b = (int)json_integer_value(nb);
        if (bits && b != bits)
            return -1;
        bits = b;
    }
    return bits;
}

int kv__hf_weight_bytes(const json_t *q, double *bytes, char *why, size_t n)
{
    *bytes = 2.0;
    why[0] = '\0';
    if (!json_is_object(q))
        return 0;
    const json_t *b = json_object_get(q, "bits");
    if (json_is_integer(b) && json_integer_value(b) > 0 && json_integer_value(b) <= 16) {
        *bytes = (double)json_integer_value(b) / 8.0;
        return 0;
    }
    const char *m = str_of(q, "quant_method");
    if (is(m, "fp8") || is(m, "fbgemm_fp8") || is(m, "ptpc_fp8")) {
        *bytes = 1.0;
        return 0;
    }
    if (is(m, "mxfp4")) {
        *bytes = 0.5;
        return 0;
    }
    if (is(m, "modelopt")) {
        const char *algo = str_of(q, "quant_algo");
        if (algo && strncmp(algo, "FP8", 3) == 0)
            *bytes = 1.0;
        else if (algo && (strncmp(algo, "NVFP4", 5) == 0 || strncmp(algo, "W4A", 3) == 0))
            *bytes = 0.5;
        else
            goto unknown;
        return 0;
    }
    if (is(m, "bitsandbytes")) {
        if (json_is_true(json_object_get(q, "load_in_4bit")))
            *bytes = 0.5;
        else if (json_is_true(json_object_get(q, "load_in_8bit")))
            *bytes = 1.0;
        else
            goto unknown;
        return 0;
    }
    if (is(m, "compressed-tensors")) {
        int bits = compressed_tensors_bits(q);
        if (bits > 0) {
            *bytes = bits / 8.0;
            return 0;
        }
        snprintf(why, n, "quantization_config 'compressed-tensors' %s",
                 bits < 0 ? "whose config groups have different weight bits"
                          : "without weights.num_bits in its config groups");
        *bytes = 0;
        return -1;
    }
unknown:
    if (m)
        snprintf(why, n, "quantization_config quant_method '%.40s'", m);
    else
        snprintf(why, n, "quantization_config without 'bits' or 'quant_method'");
    *bytes = 0;
    return -1;
}
