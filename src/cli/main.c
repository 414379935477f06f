/* main: the command table and dispatch.  Each command is a cli_cmd in src/cli/cmd_<name>.c;
 * this table is both what `kvsim NAME` looks up and what `kvsim --help` lists, so the two
 * cannot disagree.  Only this file ends the process (by returning from main). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_cmd *const commands[] = {
    &cli_cmd_estimate, &cli_cmd_gen,  &cli_cmd_run,  &cli_cmd_sweep,
    &cli_cmd_merge,    &cli_cmd_plan, &cli_cmd_plot, &cli_cmd_hash,
};

enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *f)
{
    fputs("usage: kvsim <command> [options]\n\n"
          "kvsim simulates the paged KV-cache block allocator of an LLM serving engine.\n\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fputs("\n'kvsim <command> --help' shows each command's options and defaults.\n", f);
}

int main(int argc, char **argv)
{
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
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i]->name) == 0)
            return cli_main(commands[i], argc - 1, argv + 1);
    return cli_error(CLI_USAGE, "unknown command '%s' (see 'kvsim --help')", argv[1]);
}
