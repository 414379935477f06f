/* hfconfig_internal.h: what src/hfconfig.c (the config.json reader) shares with
 * src/hfquant.c (bytes per weight from its quantization_config). */
#ifndef KVSIM_HFCONFIG_INTERNAL_H
#define KVSIM_HFCONFIG_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

/* Bytes per weight element from a quantization_config object (NULL or not an object: none,
 * 2 bytes).  0 with *bytes set, or -1 with *bytes = 0 and why (size n) naming what could
 * not be read, e.g. "quantization_config quant_method 'gguf'". */
int kv__hf_weight_bytes(const json_t *q, double *bytes, char *why, size_t n);

#endif
