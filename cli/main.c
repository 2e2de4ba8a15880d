/*
 * main.c - the ffnn program: the table of its commands and main(), which finds the
 * command and runs it. Each command is one file (commands.h); everything numeric
 * lives in the library.
 *   ffnn --help / -h     the table          ffnn --version     the version
 *   ffnn help CMD        CMD's --help text  ffnn CMD ARGS...   run CMD
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "ffnn.h"

#define COMMAND_ROW(name, summary) {#name, ffnn_cli_##name, &ffnn_cli_##name##_usage, summary},
static const ffnn_cli_command commands[] = {FFNN_CLI_COMMANDS(COMMAND_ROW)};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static const ffnn_cli_command *find_command(const char *name)
{
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* ffnn --help: the table. */
static void print_usage(FILE *f)
{
    fputs("usage: ffnn <command> [options]\n"
          "\n"
          "Feed-forward neural networks trained with hand-written kernels (CPU and CUDA).\n"
          "\n"
          "commands:\n", f);
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fputs("  help CMD  show the options of a command (same as ffnn CMD --help)\n"
          "\n"
          "ffnn --version prints the version. Run 'ffnn CMD --help' for a command's options.\n",
          f);
}

static int unknown_command(const char *name)
{
    fprintf(stderr, "ffnn: unknown command '%s'\n\n", name);
    print_usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        /* the library's version at run time (the header's FFNN_VERSION at build time) */
        printf("ffnn %s (%s)\n", ffnn_version(NULL, NULL, NULL),
               ffnn_has_cuda() ? "with CUDA" : "CPU only");
        return 0;
    }
    if (strcmp(argv[1], "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return 0;
        }
        const ffnn_cli_command *cmd = find_command(argv[2]);
        if (!cmd)
            return unknown_command(argv[2]);
        fputs(*cmd->usage, stdout);
        return 0;
    }
    const ffnn_cli_command *cmd = find_command(argv[1]);
    return cmd ? cmd->run(argc - 1, argv + 1) : unknown_command(argv[1]);
}
