/* main: subcommand dispatch.  Each subcommand lives in src/cli/cmd_<name>.c and returns
 * the exit code; only this file calls exit (by returning from main, or from the
 * out-of-memory handler below). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "kvsim/mem.h"

/* Removes the temporary output files of this process (issue 12's output half owns the list
 * and will provide the body).  A no-op until then.  It runs from the out-of-memory handler,
 * so it must not allocate. */
static void cli_cleanup_temp_files(void) {}

/* Out of memory is a runtime error like any other: one line, exit 1, no leftovers.  The
 * message is formatted on the stack and written with write(2), since the heap is gone;
 * _exit skips atexit handlers and stdio flushing, which could allocate, and drops any
 * half-written stdout, which would be a truncated result. */
static void on_out_of_memory(size_t bytes)
{
    cli_cleanup_temp_files();
    char msg[128];
    int n = bytes == SIZE_MAX
                ? snprintf(msg, sizeof msg,
                           "kvsim: error: out of memory (a request larger than memory)\n")
                : snprintf(msg, sizeof msg,
                           "kvsim: error: out of memory (could not allocate %zu bytes)\n", bytes);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
    _exit(CLI_RUNTIME);
}

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"estimate", cmd_estimate, "KV-cache capacity: bytes per token, blocks, concurrency, ledgers"},
    {"gen", cmd_gen, "write a request trace from length percentiles and a rate"},
    {"run", cmd_run, "replay a trace: blocks, admissions, preemptions, prefix hits, latency"},
    {"sweep", cmd_sweep, "replay a trace under lists of knobs in parallel; write sweep.csv"},
    {"merge", cmd_merge, "rebuild sweep.csv from finished configuration directories"},
    {"plan", cmd_plan, "SLO capacity search: the highest load (or smallest pool) within SLOs"},
    {"plot", cmd_plot, "draw PNG and SVG figures of run, sweep and plan outputs (gnuplot)"},
    {"hash", cmd_hash, "print the chain hash of each full block of a token list"},
};

static void usage(FILE *f)
{
    fputs("usage: kvsim <command> [options]\n\n"
          "kvsim simulates the paged KV-cache block allocator of an LLM serving engine.\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'kvsim <command> --help' shows each command's options and defaults.\n", f);
}

int main(int argc, char **argv)
{
    kv_mem_set_oom_handler(on_out_of_memory);
    kv_mem_route_json();
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("kvsim " KVSIM_VERSION);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return cli_error(CLI_USAGE, "unknown command '%s' (see 'kvsim --help')", argv[1]);
}
