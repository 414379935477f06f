/* model_opts: the shared model/GPU/parallelism/pool-sizing option group (DESIGN §2), used by
 * estimate, run, sweep and plan, and cli_parse_size.
 *
 * Parsing is split from resolution: cli_model_opts_handle only validates each value on its
 * own (numbers, sizes, dtype names, the --num-blocks / --kv-budget exclusion), and
 * cli_model_resolve, called once after all options are read, hands them to the core's
 * kv_setup_resolve (src/setup.c), which loads the preset or config.json, applies the
 * geometry overrides, shards and sizes the pool; this file only prints its error.
 *
 * Exit codes: a bad value, an unknown preset or contradictory options are usage errors (2);
 * an unreadable or malformed config.json and a configuration that leaves no room for two
 * blocks are runtime errors (1), as the values themselves were well-formed.
 *
 * Option ids live in [1000, 1100), so a command's own ids (small integers) never collide.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

enum {
    MO_FIRST = 1000,
    MO_MODEL = MO_FIRST,
    MO_GPU,
    MO_GPU_UTIL,
    MO_RESERVE,
    MO_TP,
    MO_PP,
    MO_KV_DTYPE,
    MO_BLOCK_SIZE,
    MO_NUM_BLOCKS,
    MO_KV_BUDGET,
    MO_LAYERS,
    MO_KV_HEADS,
    MO_HEAD_DIM,
    MO_SCALE_GROUP,
    MO_SCALE_BYTES,
    MO_LAST = MO_SCALE_BYTES,
};

const cli_opt cli_model_options[] = {
    {"model", 0, true, MO_MODEL},
    {"gpu", 0, true, MO_GPU},
    {"gpu-util", 0, true, MO_GPU_UTIL},
    {"reserve", 0, true, MO_RESERVE},
    {"tp", 0, true, MO_TP},
    {"pp", 0, true, MO_PP},
    {"kv-dtype", 0, true, MO_KV_DTYPE},
    {"block-size", 0, true, MO_BLOCK_SIZE},
    {"num-blocks", 0, true, MO_NUM_BLOCKS},
    {"kv-budget", 0, true, MO_KV_BUDGET},
    {"layers", 0, true, MO_LAYERS},
    {"kv-heads", 0, true, MO_KV_HEADS},
    {"head-dim", 0, true, MO_HEAD_DIM},
    {"kv-scale-group", 0, true, MO_SCALE_GROUP},
    {"kv-scale-bytes", 0, true, MO_SCALE_BYTES},
    {NULL, 0, false, 0},
};

const char cli_model_opts_help[] =
    "model, GPU and pool options:\n"
    "      --model NAME|FILE  model preset, or a Hugging Face config.json (an argument with\n"
    "                         '/' or ending in .json is a file); default llama-3-8b\n"
    "                         presets: llama-2-7b, llama-3-8b, llama-3-70b, mistral-7b,\n"
    "                         qwen2.5-7b, qwen2.5-72b, mixtral-8x7b\n"
    "      --gpu NAME         GPU preset (default H100-SXM): A100-40G, A100-80G, H100-SXM,\n"
    "                         H200, L40S, MI300X\n"
    "      --gpu-util F       fraction of GPU memory the engine may use, 0 < F <= 1\n"
    "                         (default 0.9, vLLM's gpu_memory_utilization)\n"
    "      --reserve SIZE     memory held back for activations, workspace and CUDA graphs\n"
    "                         (default 2GiB; 0 allowed)\n"
    "      --tp N             tensor-parallel degree: splits KV heads (default 1)\n"
    "      --pp N             pipeline-parallel degree: ceil(layers/N) per stage (default 1)\n"
    "      --kv-dtype D       KV element type: fp16, bf16, fp8, int8, int4 (default: the\n"
    "                         model's, bf16 for every preset)\n"
    "      --kv-scale-group G with --kv-scale-bytes S: quantised KV stores an S-byte scale\n"
    "      --kv-scale-bytes S per G elements, adding S/G bytes per element (fp8/int8/int4)\n"
    "      --block-size B     tokens per KV block (default 16)\n"
    "      --num-blocks N     pool size, e.g. vLLM's logged num_gpu_blocks (default: derive\n"
    "                         from the GPU: util x memory - weights per rank - reserve)\n"
    "      --kv-budget SIZE   KV memory per rank instead of deriving it (not with\n"
    "                         --num-blocks)\n"
    "      --layers N, --kv-heads N, --head-dim N\n"
    "                         override the model's KV geometry (weights stay the model's)\n"
    "SIZE: bytes, or a number with a unit: KiB MiB GiB TiB (powers of 1024) or KB MB GB TB\n"
    "(powers of 1000), e.g. 24GiB, 80GB, 1.5GiB.\n";

bool cli_model_opts_owns(int id)
{
    return id >= MO_FIRST && id <= MO_LAST;
}

int cli_parse_size(const char *opt, const char *arg, uint64_t *out)
{
    kv_diag d;
    if (kv_parse_size(arg, out, &d) != 0)
        return cli_error(CLI_USAGE, "--%s: %s", opt, d.msg);
    return 0;
}

static const char exclusive_msg[] =
    "--num-blocks and --kv-budget are mutually exclusive (give the pool size one way)";

int cli_model_opts_handle(kv_setup_options *o, int id, const char *arg)
{
    kv_diag d;
    kv_dtype dt;
    switch (id) {
    case MO_MODEL:
        if (arg[0] == '\0')
            return cli_error(CLI_USAGE, "--model: empty name");
        o->model = arg;
        return 0;
    case MO_GPU:
        if (arg[0] == '\0')
            return cli_error(CLI_USAGE, "--gpu: empty name");
        o->gpu = arg;
        return 0;
    case MO_GPU_UTIL:
        if (cli_parse_double("gpu-util", arg, 0.0, 1.0, &o->gpu_util) != 0)
            return CLI_USAGE;
        if (o->gpu_util <= 0.0)
            return cli_error(CLI_USAGE, "--gpu-util: '%s' must be greater than 0", arg);
        return 0;
    case MO_RESERVE:
        if (kv_parse_size_or_zero(arg, &o->reserve, &d) != 0)
            return cli_error(CLI_USAGE, "--reserve: %s", d.msg);
        return 0;
    case MO_TP:
        return cli_parse_u32("tp", arg, 1, 4096, &o->tp);
    case MO_PP:
        return cli_parse_u32("pp", arg, 1, 4096, &o->pp);
    case MO_KV_DTYPE:
        if (kv_dtype_parse(arg, &dt) != 0)
            return cli_error(CLI_USAGE,
                             "--kv-dtype: unknown dtype '%s' (known: fp16, bf16, "
                             "fp8, int8, int4)",
                             arg);
        o->kv_dtype = arg;
        return 0;
    case MO_BLOCK_SIZE:
        return cli_parse_u32("block-size", arg, 1, 65536, &o->block_size);
    case MO_NUM_BLOCKS:
        if (o->kv_budget)
            return cli_error(CLI_USAGE, exclusive_msg);
        return cli_parse_u32("num-blocks", arg, 2, UINT32_MAX, &o->num_blocks);
    case MO_KV_BUDGET:
        if (o->num_blocks)
            return cli_error(CLI_USAGE, exclusive_msg);
        return cli_parse_size("kv-budget", arg, &o->kv_budget);
    case MO_LAYERS:
        return cli_parse_u32("layers", arg, 1, 1u << 16, &o->layers);
    case MO_KV_HEADS:
        return cli_parse_u32("kv-heads", arg, 1, 1u << 16, &o->kv_heads);
    case MO_HEAD_DIM:
        return cli_parse_u32("head-dim", arg, 1, 1u << 16, &o->head_dim);
    case MO_SCALE_GROUP:
        return cli_parse_u32("kv-scale-group", arg, 1, 1u << 20, &o->kv_scale_group);
    case MO_SCALE_BYTES:
        return cli_parse_u32("kv-scale-bytes", arg, 1, 64, &o->kv_scale_bytes);
    }
    return cli_error(CLI_USAGE, "internal: option id %d is not a model option", id);
}

int cli_model_resolve(const kv_setup_options *o, kv_setup *out)
{
    kv_diag d;
    int rc = kv_setup_resolve(o, out, &d);
    return rc == 0 ? CLI_OK : cli_diag(cli_code(rc), &d);
}
