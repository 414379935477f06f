/* Golden tests of `kvsim estimate` (DESIGN §2) through the built binary, and every error
 * path of the estimate command and the shared model options: exit code, a single
 * "kvsim: error: " line naming the problem, nothing on stdout. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define KIB (1ull << 10)
#define MIB (1ull << 20)
#define GIB (1ull << 30)

/* The geometry of the DESIGN examples: 32 layers · 8 KV heads · 128 · fp16. */
#define GEOM "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "fp16"
/* The 256 KiB/token geometry of the 24 GiB example. */
#define GEOM64 "--layers", "64", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "fp16"

/* Run `kvsim estimate --json args…`, assert success, parse stdout. */
static json_t *estimate_json(const char *first, ...)
{
    const char *args[64] = {"estimate", "--json"};
    size_t n = 2;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 63; a = va_arg(ap, const char *))
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "exit %d, stderr: %s", r.status, r.err);
    cr_assert_str_empty(r.err, "stderr on success: %s", r.err);
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    cr_assert(root, "stdout is not JSON (%d:%d %s): %s", je.line, je.column, je.text, r.out);
    run_result_free(&r);
    return root;
}

/* The value at a dotted path such as "capacity.max_tokens". */
static json_t *at(json_t *root, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *v = root;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
        v = json_object_get(v, k);
        cr_assert(v, "no key '%s' in the JSON output", path);
    }
    return v;
}

/* An integer field: must be a JSON integer, not a real. */
static long long int_at(json_t *root, const char *path)
{
    json_t *v = at(root, path);
    cr_assert(json_is_integer(v), "'%s' is not a JSON integer", path);
    return json_integer_value(v);
}

static const char *str_at(json_t *root, const char *path)
{
    json_t *v = at(root, path);
    cr_assert(json_is_string(v), "'%s' is not a string", path);
    return json_string_value(v);
}

/* ---- golden values (DESIGN §2) -------------------------------------------------------- */

Test(cli_estimate, golden_1024_3072)
{
    json_t *j = estimate_json(GEOM, "--lengths", "1024,3072", "--block-size", "16", NULL);
    cr_assert_eq(int_at(j, "bytes_per_token"), 131072);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), 512 * MIB);
    cr_assert_eq(int_at(j, "ledgers.paged_bytes"), 512 * MIB);
    cr_assert_eq(int_at(j, "ledgers.padded_bytes"), 768 * MIB);
    cr_assert_eq(int_at(j, "ledgers.tail_waste_tokens"), 0);
    cr_assert_eq(int_at(j, "ledgers.logical_blocks"), 256);
    cr_assert_eq(int_at(j, "ledgers.physical_blocks"), 256);
    cr_assert_eq(int_at(j, "ledgers.physical_bytes"), 512 * MIB);
    cr_assert_eq(int_at(j, "lengths.count"), 2);
    json_decref(j);
}

Test(cli_estimate, golden_tail_waste_17_31_32)
{
    json_t *j = estimate_json(GEOM, "--lengths", "17,31,32", "--block-size", "16", NULL);
    cr_assert_eq(int_at(j, "ledgers.allocated_tokens"), 96);
    cr_assert_eq(int_at(j, "ledgers.effective_tokens"), 80);
    cr_assert_eq(int_at(j, "ledgers.tail_waste_tokens"), 16);
    cr_assert_eq(int_at(j, "ledgers.tail_waste_bytes"), 2 * MIB);
    cr_assert_eq(int_at(j, "ledgers.logical_blocks"), 6);
    json_decref(j);
}

Test(cli_estimate, golden_shared_prefix)
{
    json_t *j = estimate_json(GEOM, "--lengths", "33,33", "--shared-prefix", "32", NULL);
    cr_assert_eq(int_at(j, "ledgers.logical_blocks"), 6);
    cr_assert_eq(int_at(j, "ledgers.physical_blocks"), 4);
    cr_assert_eq(int_at(j, "ledgers.physical_bytes"), 8 * MIB, "8 MiB, not 12");
    cr_assert_eq(int_at(j, "ledgers.paged_bytes"), 12 * MIB);
    cr_assert_eq(int_at(j, "lengths.shared_prefix"), 32);
    json_decref(j);
}

Test(cli_estimate, golden_4096_sequences)
{
    /* 1 GiB per 4096-token sequence is DESIGN's figure at 256 KiB/token (64 layers); at
     * 128 KiB/token (32 layers) it is 512 MiB, consistent with the 1024 + 3072 example. */
    json_t *j = estimate_json(GEOM, "--lengths", "4096", NULL);
    cr_assert_eq(int_at(j, "bytes_per_token"), 128 * KIB);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), 512 * MIB);
    json_decref(j);
    j = estimate_json(GEOM64, "--lengths", "4096", NULL);
    cr_assert_eq(int_at(j, "bytes_per_token"), 256 * KIB);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), GIB);
    json_decref(j);
    j = estimate_json(GEOM64, "--lengths", "4096x20", NULL);
    cr_assert_eq(int_at(j, "lengths.count"), 20);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), 20 * GIB);
    cr_assert_eq(int_at(j, "ledgers.paged_bytes"), 20 * GIB);
    json_decref(j);
    /* Spelled out, the same. */
    j = estimate_json(GEOM64, "--lengths",
                      "4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,4096,"
                      "4096,4096,4096,4096,4096,4096",
                      NULL);
    cr_assert_eq(int_at(j, "lengths.count"), 20);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), 20 * GIB);
    json_decref(j);
    /* Without --lengths: one sequence of --target-len. */
    j = estimate_json(GEOM64, NULL);
    cr_assert_eq(int_at(j, "lengths.count"), 1);
    cr_assert_eq(int_at(j, "lengths.max"), 4096);
    cr_assert_eq(int_at(j, "ledgers.effective_bytes"), GIB);
    json_decref(j);
}

Test(cli_estimate, golden_24gib_budget)
{
    json_t *j = estimate_json(GEOM64, "--kv-budget", "24GiB", "--target-len", "4096", NULL);
    cr_assert_eq(int_at(j, "bytes_per_token"), 256 * KIB);
    cr_assert_eq(int_at(j, "bytes_per_token_per_rank"), 256 * KIB);
    cr_assert_eq(int_at(j, "block_bytes"), 4 * MIB);
    cr_assert_str_eq(str_at(j, "capacity.budget_source"), "kv-budget");
    cr_assert_eq(int_at(j, "capacity.kv_budget_bytes"), 24 * GIB);
    cr_assert_eq(int_at(j, "capacity.max_tokens"), 98304);
    cr_assert_eq(int_at(j, "capacity.max_concurrency"), 24);
    cr_assert_eq(int_at(j, "capacity.num_blocks"), 6144);
    cr_assert_eq(int_at(j, "capacity.usable_blocks"), 6143);
    cr_assert_eq(int_at(j, "capacity.blocks_per_request"), 256);
    cr_assert_eq(int_at(j, "capacity.paged_max_concurrency"), 23);
    cr_assert_eq(json_real_value(at(j, "capacity.safety")), 1.0);
    json_decref(j);
}

Test(cli_estimate, safety_factor)
{
    json_t *j = estimate_json(GEOM64, "--kv-budget", "24GiB", "--safety", "0.5", NULL);
    cr_assert_eq(int_at(j, "capacity.max_concurrency"), 12, "⌊98304 · 0.5 / 4096⌋");
    cr_assert_eq(int_at(j, "capacity.paged_max_concurrency"), 11, "⌊6143 · 0.5 / 256⌋");
    cr_assert_eq(int_at(j, "capacity.usable_token_concurrency"), 11, "⌊⌊6143·16/4096⌋ · 0.5⌋");
    json_decref(j);
}

Test(cli_estimate, design_usable_token_concurrency)
{
    /* DESIGN §2: ⌊usable_blocks · b / target_len⌋, then × safety. */
    json_t *j = estimate_json(GEOM64, "--kv-budget", "24GiB", NULL);
    cr_assert_eq(int_at(j, "capacity.usable_token_concurrency"), 23, "⌊6143 · 16 / 4096⌋");
    json_decref(j);
    j = estimate_json("--num-blocks", "101", "--target-len", "17", NULL);
    cr_assert_eq(int_at(j, "capacity.usable_token_concurrency"), 94, "⌊100 · 16 / 17⌋");
    cr_assert_eq(int_at(j, "capacity.paged_max_concurrency"), 50, "⌊100 / ⌈17/16⌉⌋");
    json_decref(j);
    j = estimate_json(GEOM64, "--kv-budget", "24GiB", "--safety", "0.9", NULL);
    cr_assert_eq(int_at(j, "capacity.usable_token_concurrency"), 20, "⌊23 · 0.9⌋");
    json_decref(j);
}

/* Parameters are copied into each test's process, so strings are stored inline. */
typedef struct bpt_case {
    char args[16][24];
    long long bytes_per_token, bytes_per_token_per_rank;
} bpt_case;

ParameterizedTestParameters(cli_estimate, bytes_per_token)
{
    static bpt_case cases[] = {
        {{GEOM}, 131072, 131072},
        {{"--model", "llama-2-7b"}, 524288, 524288}, /* MHA: 32 KV heads */
        {{"--model", "llama-3-8b"}, 131072, 131072}, /* GQA: 8 KV heads */
        {{GEOM, "--kv-dtype", "fp8"}, 65536, 65536},
        {{GEOM, "--kv-dtype", "int4"}, 32768, 32768},
        {{GEOM, "--kv-dtype", "int4", "--kv-scale-group", "32", "--kv-scale-bytes", "2"},
         36864,
         36864},
        {{GEOM, "--tp", "2"}, 131072, 65536},
        {{GEOM, "--tp", "16"}, 131072, 16384},
        {{GEOM, "--pp", "3"}, 131072, 45056}, /* 11 layers */
        {{"--model", "qwen2.5-7b"}, 57344, 57344},
        {{"--model", "llama-3-70b", "--tp", "4"}, 327680, 81920},
    };
    return cr_make_param_array(bpt_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(bpt_case *c, cli_estimate, bytes_per_token)
{
    const char *args[24] = {"estimate", "--json", "--kv-budget", "64GiB"};
    size_t n = 4;
    for (size_t i = 0; i < 16 && c->args[i][0]; i++)
        args[n++] = c->args[i];
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    cr_assert(j);
    cr_assert_eq(int_at(j, "bytes_per_token"), c->bytes_per_token);
    cr_assert_eq(int_at(j, "bytes_per_token_per_rank"), c->bytes_per_token_per_rank);
    json_decref(j);
    run_result_free(&r);
}

Test(cli_estimate, sharding_reports_replication_and_stages)
{
    json_t *j = estimate_json(GEOM, "--tp", "16", NULL);
    cr_assert(json_is_true(at(j, "sharding.kv_replicated")));
    cr_assert_eq(int_at(j, "sharding.kv_heads_per_rank"), 1);
    cr_assert_eq(int_at(j, "sharding.kv_replication"), 2);
    cr_assert(json_is_false(at(j, "sharding.kv_indivisible")));
    json_decref(j);

    j = estimate_json(GEOM, "--pp", "3", NULL);
    cr_assert_eq(int_at(j, "sharding.layers_per_rank"), 11);
    json_decref(j);

    j = estimate_json(GEOM, "--tp", "3", NULL);
    cr_assert(json_is_true(at(j, "sharding.kv_indivisible")));
    cr_assert_eq(int_at(j, "sharding.kv_heads_per_rank"), 3);
    json_decref(j);

    /* The table says so in words. */
    run_result r = run_kvsim("estimate", GEOM, "--tp", "16", NULL);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "TP 16 > 8 KV heads: each head is replicated on 2 ranks"), "%s", r.out);
    run_result_free(&r);
    r = run_kvsim("estimate", GEOM, "--pp", "3", NULL);
    cr_assert(strstr(r.out, "32 layers over PP 3: the largest stage holds 11"), "%s", r.out);
    run_result_free(&r);
}

Test(cli_estimate, num_blocks_sets_the_budget)
{
    json_t *j = estimate_json(GEOM, "--num-blocks", "1000", NULL);
    cr_assert_str_eq(str_at(j, "capacity.budget_source"), "num-blocks");
    cr_assert_eq(int_at(j, "block_bytes"), 2 * MIB);
    cr_assert_eq(int_at(j, "capacity.kv_budget_bytes"), 1000 * 2 * MIB);
    cr_assert_eq(int_at(j, "capacity.num_blocks"), 1000);
    cr_assert_eq(int_at(j, "capacity.usable_blocks"), 999);
    cr_assert_eq(int_at(j, "capacity.max_tokens"), 16000);
    json_decref(j);
}

Test(cli_estimate, defaults_from_the_gpu)
{
    json_t *j = estimate_json(NULL);
    cr_assert_str_eq(str_at(j, "model.name"), "llama-3-8b");
    cr_assert_str_eq(str_at(j, "model.source"), "preset");
    cr_assert_str_eq(str_at(j, "gpu.name"), "H100-SXM");
    cr_assert_str_eq(str_at(j, "kv_dtype"), "bf16");
    cr_assert_eq(int_at(j, "block_size"), 16);
    cr_assert_eq(int_at(j, "sharding.tp"), 1);
    cr_assert_eq(int_at(j, "sharding.pp"), 1);
    cr_assert_str_eq(str_at(j, "capacity.budget_source"), "gpu");
    cr_assert_eq(json_real_value(at(j, "capacity.gpu_util")), 0.9);
    cr_assert_eq(int_at(j, "capacity.reserve_bytes"), 2 * GIB);
    cr_assert_eq(int_at(j, "gpu.mem_bytes"), 80 * GIB);
    cr_assert_eq(int_at(j, "sharding.weight_bytes_per_rank"), 16060522496ll);
    /* ⌊0.9 · 80 GiB⌋ − 16,060,522,496 B of weights − 2 GiB reserve. */
    long long budget = 77309411328ll - 16060522496ll - (long long)(2 * GIB);
    cr_assert_eq(int_at(j, "capacity.kv_budget_bytes"), budget);
    cr_assert_eq(int_at(j, "capacity.num_blocks"), budget / (long long)(2 * MIB));
    cr_assert_eq(int_at(j, "capacity.max_tokens"), budget / (long long)(128 * KIB));
    json_decref(j);

    j = estimate_json("--reserve", "0", NULL);
    cr_assert_eq(int_at(j, "capacity.kv_budget_bytes"), budget + (long long)(2 * GIB));
    json_decref(j);

    j = estimate_json("--gpu", "h200", "--gpu-util", "0.5", "--reserve", "1.5GiB", NULL);
    cr_assert_str_eq(str_at(j, "gpu.name"), "H200");
    cr_assert_eq(int_at(j, "capacity.kv_budget_bytes"),
                 (long long)(141 * GIB / 2) - 16060522496ll - (long long)(3 * GIB / 2));
    json_decref(j);
}

Test(cli_estimate, config_json_model)
{
    const char *path = src_path("tests/data/hf/Meta-Llama-3-8B/config.json");
    json_t *j = estimate_json("--model", path, NULL);
    cr_assert_str_eq(str_at(j, "model.name"), "Meta-Llama-3-8B");
    cr_assert_str_eq(str_at(j, "model.source"), path);
    cr_assert_eq(int_at(j, "model.num_params"), 8030261248ll);
    cr_assert_eq(int_at(j, "bytes_per_token"), 131072);
    json_decref(j);

    /* A config without MLP/vocab sizes has unknown weights: fine with a given budget. */
    j = estimate_json("--model", src_path("tests/data/hf/no-mlp.json"), "--kv-budget", "1GiB",
                      NULL);
    cr_assert_eq(int_at(j, "capacity.num_blocks"), 512);
    json_decref(j);
}

Test(cli_estimate, json_is_deterministic_with_integers)
{
    run_result a = run_kvsim("estimate", "--json", "--lengths", "17,31,32", NULL);
    run_result b = run_kvsim("estimate", "--json", "--lengths", "17,31,32", NULL);
    cr_assert_eq(a.status, 0);
    cr_assert_str_eq(a.out, b.out);
    cr_assert(strstr(a.out, "\"bytes_per_token\": 131072,"), "%s", a.out);
    cr_assert(strstr(a.out, "\"tail_waste_tokens\": 16,"), "%s", a.out);
    /* Fixed key order: model first, then the bytes, capacity before the ledgers. */
    const char *model = strstr(a.out, "\"model\""), *cap = strstr(a.out, "\"capacity\""),
               *led = strstr(a.out, "\"ledgers\"");
    cr_assert(model && cap && led && model < cap && cap < led);
    run_result_free(&a);
    run_result_free(&b);
}

Test(cli_estimate, table_shows_binary_and_decimal)
{
    run_result r =
        run_kvsim("estimate", GEOM, "--kv-budget", "24GiB", "--lengths", "1024,3072", NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_empty(r.err);
    cr_assert(strstr(r.out, "binary units (KiB = 1024 B), decimal units (KB = 1000 B)"), "%s",
              r.out);
    cr_assert(strstr(r.out, "bytes/token     131072 B = 128.00 KiB (131.07 KB)"), "%s", r.out);
    cr_assert(strstr(r.out, "25769803776 B = 24.00 GiB (25.77 GB)"), "%s", r.out);
    cr_assert(strstr(r.out, "num_blocks      12288 (12287 usable"), "%s", r.out);
    cr_assert(strstr(r.out, "padded              6144 tok  768.00 MiB (805.31 MB)"), "%s", r.out);
    run_result_free(&r);
}

Test(cli_estimate, help_states_defaults)
{
    run_result r = run_kvsim("estimate", "--help", NULL);
    cr_assert_eq(r.status, 0);
    cr_assert_str_empty(r.err);
    const char *want[] = {"usage: kvsim estimate",
                          "(default 4096)",
                          "(default 1.0)",
                          "default llama-3-8b",
                          "(default H100-SXM)",
                          "(default 0.9",
                          "(default 2GiB",
                          "(default 16)",
                          "(default 1)",
                          "bf16 for every preset",
                          "llama-2-7b",
                          "llama-3-70b",
                          "mistral-7b",
                          "qwen2.5-7b",
                          "qwen2.5-72b",
                          "mixtral-8x7b",
                          "A100-40G",
                          "A100-80G",
                          "H200",
                          "L40S",
                          "MI300X",
                          "KiB MiB GiB TiB PiB (powers of 1024) or",
                          "KB MB GB TB PB (powers of 1000)"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(strstr(r.out, want[i]), "--help lacks '%s'", want[i]);
    run_result_free(&r);
    r = run_kvsim("--help", NULL);
    cr_assert(strstr(r.out, "estimate"), "the command list names estimate");
    run_result_free(&r);
}

/* ---- errors --------------------------------------------------------------------------- */

typedef struct err_case {
    char args[10][48]; /* after "estimate"; "@rel" is a path under the source tree */
    int status;
    char msg[192]; /* a substring of the single stderr line */
} err_case;

ParameterizedTestParameters(cli_estimate, errors)
{
    static err_case cases[] = {
        /* sizes */
        {{"--kv-budget", "0"}, 2, "--kv-budget: size '0' must be at least 1 byte"},
        {{"--kv-budget", "0GiB"}, 2, "--kv-budget: size '0GiB' must be at least 1 byte"},
        {{"--kv-budget", "-5GiB"}, 2, "--kv-budget: size '-5GiB' must not be negative"},
        {{"--kv-budget", "lots"}, 2, "--kv-budget: invalid size 'lots'"},
        {{"--kv-budget", "24XB"},
         2,
         "--kv-budget: unknown unit 'XB' in size '24XB' (known: B, KiB, MiB, GiB, TiB, PiB "
         "(x1024) or KB, MB, GB, TB, PB (x1000))"},
        {{"--kv-budget", "24G"}, 2, "--kv-budget: ambiguous unit 'G' in size '24G'"},
        {{"--kv-budget", "99999999999999999999"}, 2, "is too large"},
        {{"--reserve", "-1GiB"}, 2, "--reserve: size '-1GiB' must not be negative"},
        {{"--reserve", "two"}, 2, "--reserve: invalid size 'two'"},
        /* presets */
        {{"--model", "llama-9"}, 2, "--model: unknown model preset 'llama-9' (known: llama-2-7b"},
        {{"--gpu", "B200"}, 2, "--gpu: unknown GPU preset 'B200' (known: A100-40G"},
        /* config.json */
        {{"--model", "@tests/data/hf/malformed.json"},
         1,
         "malformed.json:4:21: '}' expected near '\"num_hidden_layers\"'"},
        {{"--model", "@tests/data/hf/incomplete.json"},
         1,
         "incomplete.json: missing required field 'num_attention_heads'"},
        {{"--model", "@tests/data/hf/overflow.json"},
         1,
         "overflow.json: KV bytes per token overflow"},
        {{"--model", "@tests/data/hf/real-layers.json"},
         1,
         "'num_hidden_layers' must be a positive integer, not 32.0"},
        {{"--model", "@tests/data/hf/negative-kv-heads.json"},
         1,
         "'num_key_value_heads' must be a positive integer, not -8"},
        {{"--model", "@tests/data/hf/nope.json"}, 1, "nope.json': No such file or directory"},
        {{"--model", "does-not-exist.json"},
         1,
         "cannot open 'does-not-exist.json': No such file or directory"},
        {{"--model", "@tests/data/hf"}, 1, "data/hf': Is a directory"},
        {{"--model", "@tests/data/hf/no-mlp.json"},
         1,
         "no-mlp.json: weights unknown (the config has no vocab_size or intermediate_size); "
         "give --kv-budget or --num-blocks"},
        {{"--model", "@tests/data/hf/quant/unknown_method.json"},
         1,
         "unknown_method.json: quantization_config quant_method 'hqq': bytes per weight "
         "unknown; give --weight-dtype (bf16, fp16, fp8, int8 or int4)"},
        {{"--weight-dtype", "fp9"},
         2,
         "--weight-dtype: unknown dtype 'fp9' (known: fp16, bf16, fp8, int8, int4)"},
        /* options */
        {{"--bogus"}, 2, "unknown option '--bogus' for 'kvsim estimate'"},
        {{"-x"}, 2, "unknown option '-x' for 'kvsim estimate'"},
        {{"--json=yes"}, 2, "option '--json' takes no value"},
        {{"--model"}, 2, "option '--model' needs a value"},
        {{"extra"}, 2, "kvsim estimate takes no arguments (got 'extra')"},
        {{"--num-blocks", "1000", "--kv-budget", "24GiB"},
         2,
         "--num-blocks and --kv-budget are mutually exclusive"},
        {{"--kv-budget", "24GiB", "--num-blocks", "1000"},
         2,
         "--num-blocks and --kv-budget are mutually exclusive"},
        {{"--num-blocks", "1"}, 2, "--num-blocks: '1' must be at least 2"},
        {{"--num-blocks", "many"}, 2, "--num-blocks: 'many' is not a whole number"},
        {{"--gpu-util", "0"}, 2, "--gpu-util: '0' must be greater than 0"},
        {{"--gpu-util", "1.5"}, 2, "--gpu-util: '1.5' must be between 0 and 1"},
        {{"--gpu-util", "most"}, 2, "--gpu-util: 'most' is not a number"},
        {{"--tp", "0"}, 2, "--tp: '0' must be between 1 and 4096"},
        {{"--pp", "-1"}, 2, "--pp: '-1' must not be negative"},
        {{"--block-size", "0"}, 2, "--block-size: '0' must be between 1 and 65536"},
        {{"--layers", "0"}, 2, "--layers: '0' must be between 1 and 65536"},
        {{"--kv-dtype", "fp32"}, 2, "--kv-dtype: unknown dtype 'fp32'"},
        {{"--kv-dtype", "int4", "--kv-scale-group", "32"},
         2,
         "--kv-scale-group needs --kv-scale-bytes too"},
        {{"--kv-dtype", "int4", "--kv-scale-bytes", "2"},
         2,
         "--kv-scale-bytes needs --kv-scale-group too"},
        {{"--kv-scale-group", "32", "--kv-scale-bytes", "2"},
         2,
         "scale metadata applies to quantised KV dtypes (fp8, int8, int4), not bf16"},
        {{"--lengths", "0"}, 2, "--lengths: '0' must be at least 1"},
        {{"--lengths", "10,,20"}, 2, "--lengths: empty length in '10,,20'"},
        {{"--lengths", "short"}, 2, "--lengths: 'short' is not a whole number"},
        {{"--lengths", "10x0"}, 2, "--lengths: '0' must be between 1 and 1000000"},
        {{"--target-len", "0"}, 2, "--target-len: '0' must be at least 1"},
        {{"--shared-prefix", "-3"}, 2, "--shared-prefix: '-3' must not be negative"},
        {{"--safety", "0"}, 2, "--safety: '0' must be greater than 0"},
        {{"--safety", "2"}, 2, "--safety: '2' must be between 0 and 1"},
        /* configurations that leave no pool */
        {{"--model", "mixtral-8x7b"}, 1, "no memory left for the KV cache on H100-SXM"},
        {{"--kv-budget", "1MiB"},
         1,
         "KV budget 1.00 MiB (1.05 MB) holds 0 blocks of 2.00 MiB (2.10 MB); at least 2"},
    };
    return cr_make_param_array(err_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(err_case *c, cli_estimate, errors)
{
    const char *args[16] = {"estimate"};
    size_t n = 1;
    for (size_t i = 0; i < 10 && c->args[i][0]; i++)
        args[n++] = c->args[i][0] == '@' ? src_path(c->args[i] + 1) : c->args[i];
    args[n] = NULL;
    run_result r = run_kvsimv(args);
    assert_error_line(&r, c->status, "kvsim: error: ", c->msg);
    run_result_free(&r);
}
