/* model_files.h - model files on the command line: loading one (eval, predict,
 * info, train --init), the starting model of ffnn train, and train's --save.
 * Messages go to stderr; the progress of a save to the stream given. */
#ifndef FFNN_CLI_MODEL_FILES_H
#define FFNN_CLI_MODEL_FILES_H

#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"

/* Load the model file path into *m and *info; on failure prints
 * "CMD: OPT: <the library's message>" ("CMD: <message>" with opt NULL, as info,
 * whose file is an operand) and returns 1; else 0. */
int ffnn_cli_load_model(const char *cmd, const char *opt, const char *path, ffnn_model **m,
                        ffnn_model_file_info *info);

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
