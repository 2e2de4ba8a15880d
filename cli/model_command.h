/* model_command.h - the frame of the commands on a model file (eval, predict): the
 * options they share (--model, --loss, --batch, --data, --json and the table
 * options), the checks after parsing, loading the model, then the command's run. */
#ifndef FFNN_CLI_MODEL_COMMAND_H
#define FFNN_CLI_MODEL_COMMAND_H

#include "ffnn.h"
#include "model_files.h"
#include "options.h"
#include "tabular.h"

/* What a command on a model file is: its name ("ffnn eval"), its option table
 * (holding FFNN_CLI_MODEL_LONGOPTS, FFNN_CLI_TABLE_LONGOPTS and --help), its usage,
 * its own options (those the shared ones leave: ffnn_cli_option_fn), its rules once
 * every option is read (NULL: none; 0, or the exit status after a message) and its
 * run on the loaded model (the exit status). ctx is the command's options. */
typedef struct ffnn_cli_model_command {
    const char *cmd;
    const struct option *longopts;
    const char *usage;
    ffnn_cli_option_fn option;
    int (*check)(void *ctx);
    int (*run)(void *ctx, const ffnn_model *m);
} ffnn_cli_model_command;

/* Run command c on argv: the shared options into *model and *table (their defaults
 * set here: FFNN_CLI_MODEL_OPTIONS_DEFAULT, ffnn_csv_options_default()), the others
 * to c->option with ctx; no operands; --model FILE required; c->check; the model
 * loaded (ffnn_cli_open_model: --loss, else the file's); c->run. The exit status
 * (0 after --help). */
int ffnn_cli_run_model_command(const ffnn_cli_model_command *c, int argc, char **argv,
                               void *ctx, ffnn_cli_model_options *model,
                               ffnn_cli_table_options *table);

#endif
