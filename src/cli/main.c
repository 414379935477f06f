/* main: dispatch.  The commands are cli_commands (command.c), each a cli_cmd in
 * src/cli/cmd_<name>.c; that one table is both what `kvsim NAME` looks up and what
 * `kvsim --help` lists, so the two cannot disagree.  Only this file ends the process (by
 * returning from main). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    cli_set_command_line(argc, argv);
    if (argc < 2) {
        cli_usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        cli_usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts("kvsim " KVSIM_VERSION);
        return CLI_OK;
    }
    const cli_cmd *cmd = cli_find_command(argv[1]);
    if (cmd)
        return cli_main(cmd, argc - 1, argv + 1);
    return cli_error(CLI_USAGE, "unknown command '%s' (see 'kvsim --help')", argv[1]);
}
