/* model_commands.h - the subcommands that work on model files (eval, predict,
 * info) and the model-file parts of ffnn train (--init, --save). Messages go to
 * stderr; results to stdout. */
#ifndef FFNN_CLI_MODEL_COMMANDS_H
#define FFNN_CLI_MODEL_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"

/* 1 when name is eval, predict or info. */
int ffnn_cli_is_model_command(const char *name);

/* The --help text of eval, predict or info; NULL for another name. */
const char *ffnn_cli_model_command_usage(const char *name);

/* Run eval, predict or info: argv[0] is the command name. Exit status: 0, 1 on
 * an error, 2 on a usage error. */
int ffnn_cli_model_command(int argc, char **argv);

/* The starting model of ffnn train: with init_path, the model of that file (its
 * architecture; arch, when not NULL, must name the same one; *loss set to the
 * file's loss unless loss_given); else arch (or default_arch when NULL) with the
 * seeded PyTorch-style initialisation. Prints the error; returns 0 or 1. */
int ffnn_cli_train_model(const char *init_path, const char *arch, const char *default_arch,
                         uint64_t seed, int loss_given, ffnn_loss *loss, ffnn_model **out);

/* Before training: 0 when path can be saved to later (its directory exists and
 * is writable, path is not a directory); else prints why and returns 1. */
int ffnn_cli_check_save_path(const char *path);

/* After training: copy the trainer's parameters into model, save it with loss
 * to path and say so on info. Returns 0 or 1 (message printed). */
int ffnn_cli_save_trained(ffnn_trainer *trainer, ffnn_model *model, const char *path,
                          ffnn_loss loss, FILE *info);

#endif
