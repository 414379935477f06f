/* model_opts: the shared model/GPU/parallelism/pool-sizing option group (DESIGN §2), used by
 * estimate, run, sweep and plan.
 *
 * Data: one section of options into the core's kv_setup_options, and one rule (--num-blocks
 * excludes --kv-budget, a pool is sized one way).  Parsing is split from resolution: the
 * handler only validates each value on its own (numbers, sizes, dtype names), and
 * cli_model_resolve, called once after all options are read, hands them to the core's
 * kv_setup_resolve (src/setup.c), which loads the preset or config.json, applies the
 * geometry overrides, shards and sizes the pool; this file only prints its error.
 *
 * Exit codes: a bad value, an unknown preset or contradictory options are usage errors (2);
 * an unreadable or malformed config.json and a configuration that leaves no room for two
 * blocks are runtime errors (1), as the values themselves were well-formed.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

enum {
    MO_MODEL = 1,
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
    MO_WEIGHT_DTYPE,
};

static const cli_opt options[] = {
    {"model", 0, "NAME|FILE", CLI_ID(MO_MODEL),
     "model preset, or a Hugging Face config.json (an\n"
     "argument with '/' or ending in .json is a file);\n"
     "default llama-3-8b; presets: llama-2-7b, llama-3-8b,\n"
     "llama-3-70b, mistral-7b, qwen2.5-7b, qwen2.5-72b,\n"
     "mixtral-8x7b"},
    {"gpu", 0, "NAME", CLI_ID(MO_GPU),
     "GPU preset (default H100-SXM): A100-40G, A100-80G,\nH100-SXM, H200, L40S, MI300X"},
    {"gpu-util", 0, "F", CLI_ID(MO_GPU_UTIL),
     "fraction of GPU memory the engine may use, 0 < F <= 1\n"
     "(default 0.9, vLLM's gpu_memory_utilization)"},
    {"reserve", 0, "SIZE", CLI_ID(MO_RESERVE),
     "memory held back for activations, workspace and CUDA\ngraphs (default 2GiB; 0 allowed)"},
    {"tp", 0, "N", CLI_ID(MO_TP), "tensor-parallel degree: splits KV heads (default 1)"},
    {"pp", 0, "N", CLI_ID(MO_PP),
     "pipeline-parallel degree: ceil(layers/N) per stage\n(default 1)"},
    {"kv-dtype", 0, "D", CLI_ID(MO_KV_DTYPE),
     "KV element type: fp16, bf16, fp8, int8, int4 (default:\nthe model's, bf16 for every preset)"},
    {"weight-dtype", 0, "D", CLI_ID(MO_WEIGHT_DTYPE),
     "bytes per weight: bf16, fp16 (2), fp8, int8 (1), int4\n"
     "(0.5); default the model's (a config.json's\n"
     "quantization_config; one kvsim cannot read is an error\n"
     "until this is given)"},
    {"kv-scale-group", 0, "G", CLI_ID(MO_SCALE_GROUP),
     "with --kv-scale-bytes S: quantised KV (fp8/int8/int4)\n"
     "stores an S-byte scale per G elements"},
    {"kv-scale-bytes", 0, "S", CLI_ID(MO_SCALE_BYTES),
     "the scale's bytes: S/G more bytes per element (with\n--kv-scale-group G)"},
    {"block-size", 0, "B", CLI_ID(MO_BLOCK_SIZE), "tokens per KV block (default 16)"},
    {"num-blocks", 0, "N", CLI_ID(MO_NUM_BLOCKS),
     "pool size, e.g. vLLM's logged num_gpu_blocks (default:\n"
     "derive from the GPU: util x memory - weights per rank\n"
     "- reserve)"},
    {"kv-budget", 0, "SIZE", CLI_ID(MO_KV_BUDGET),
     "KV memory per rank instead of deriving it (not with\n--num-blocks)"},
    {"layers", 0, "N", CLI_ID(MO_LAYERS),
     "override the model's layers (KV geometry; the weights\nstay the model's)"},
    {"kv-heads", 0, "N", CLI_ID(MO_KV_HEADS), "override the model's KV heads"},
    {"head-dim", 0, "N", CLI_ID(MO_HEAD_DIM), "override the model's head dimension"},
    {0},
};

static const cli_section sections[] = {
    {"model, GPU and pool options", options,
     "SIZE: bytes, or a number with a unit: KiB MiB GiB TiB PiB (powers of 1024) or\n"
     "KB MB GB TB PB (powers of 1000), e.g. 24GiB, 80GB, 1.5GiB.\n"},
    {0},
};

static const cli_dep deps[] = {
    {CLI_EXCLUDES, "num-blocks", "kv-budget",
     "--num-blocks and --kv-budget are mutually exclusive (give the pool size one way)", NULL},
    {0},
};

static int handle(void *target, const cli_opt *opt, const char *arg)
{
    kv_setup_options *o = target;
    const char *name = opt->name;
    kv_diag d;
    kv_dtype dt;
    switch (opt->id) {
    case MO_MODEL:
    case MO_GPU:
        if (arg[0] == '\0')
            return cli_error(CLI_USAGE, "--%s: empty name", name);
        *(opt->id == MO_MODEL ? &o->model : &o->gpu) = arg;
        return 0;
    case MO_GPU_UTIL:
        if (cli_parse_double(name, arg, 0.0, 1.0, &o->gpu_util) != 0)
            return CLI_USAGE;
        if (o->gpu_util <= 0.0)
            return cli_error(CLI_USAGE, "--gpu-util: '%s' must be greater than 0", arg);
        return 0;
    case MO_RESERVE:
        if (kv_parse_size_or_zero(arg, &o->reserve, &d) != 0)
            return cli_error(CLI_USAGE, "--reserve: %s", d.msg);
        return 0;
    case MO_TP:
        return cli_parse_u32(name, arg, 1, 4096, &o->tp);
    case MO_PP:
        return cli_parse_u32(name, arg, 1, 4096, &o->pp);
    case MO_KV_DTYPE:
        if (kv_dtype_parse(arg, &dt) != 0)
            return cli_error(CLI_USAGE,
                             "--kv-dtype: unknown dtype '%s' (known: fp16, bf16, "
                             "fp8, int8, int4)",
                             arg);
        o->kv_dtype = arg;
        return 0;
    case MO_WEIGHT_DTYPE:
        if (kv_dtype_parse(arg, &dt) != 0)
            return cli_error(CLI_USAGE,
                             "--weight-dtype: unknown dtype '%s' (known: fp16, bf16, fp8, int8, "
                             "int4)",
                             arg);
        o->weight_dtype = arg;
        return 0;
    case MO_BLOCK_SIZE:
        return cli_parse_u32(name, arg, 1, 65536, &o->block_size);
    case MO_NUM_BLOCKS:
        return cli_parse_u32(name, arg, 2, UINT32_MAX, &o->num_blocks);
    case MO_KV_BUDGET:
        return cli_parse_size(name, arg, &o->kv_budget);
    case MO_LAYERS:
        return cli_parse_u32(name, arg, 1, 1u << 16, &o->layers);
    case MO_KV_HEADS:
        return cli_parse_u32(name, arg, 1, 1u << 16, &o->kv_heads);
    case MO_HEAD_DIM:
        return cli_parse_u32(name, arg, 1, 1u << 16, &o->head_dim);
    case MO_SCALE_GROUP:
        return cli_parse_u32(name, arg, 1, 1u << 20, &o->kv_scale_group);
    case MO_SCALE_BYTES:
        return cli_parse_u32(name, arg, 1, 64, &o->kv_scale_bytes);
    }
    return cli_error(CLI_USAGE, "internal: option id %d is not a model option", opt->id);
}

const cli_group cli_model_group = {sections, handle, deps};

int cli_model_resolve(const kv_setup_options *o, kv_setup *out)
{
    kv_diag d;
    int rc = kv_setup_resolve(o, out, &d);
    return rc == 0 ? CLI_OK : cli_diag(cli_code(rc), &d);
}
