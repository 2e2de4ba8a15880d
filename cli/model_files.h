/* model_files.h - model files on the command line: loading one (eval, predict,
 * info, train --init), the starting model of ffnn train, and train's --save.
 * Messages go to stderr; the progress of a save to the stream given. */
#ifndef FFNN_CLI_MODEL_FILES_H
#define FFNN_CLI_MODEL_FILES_H

#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"

/* 1 when a and b have the same inputs and layers (kinds, widths, activations,
 * biases, receptive fields, padding). */
int ffnn_cli_same_arch(const ffnn_model *a, const ffnn_model *b);

/* ffnn train's --arch against a model read from a file (m): -1 when arch does not
 * parse (the message printed), 0 when it names m's architecture, 1 when not, with
 * *given and *found the two canonical texts (malloc'd, NULL when out of memory; the
 * caller frees both). */
int ffnn_cli_compare_arch(const char *arch, const ffnn_model *m, char **given, char **found);

/* Load the model file path into *m and *info; on failure prints
 * "CMD: OPT: <the library's message>" ("CMD: <message>" with opt NULL, as info,
 * whose file is an operand) and returns 1; else 0. */
int ffnn_cli_load_model(const char *cmd, const char *opt, const char *path, ffnn_model **m,
                        ffnn_model_file_info *info);

/* The options eval and predict share: --model FILE, --loss NAME (else the file's
 * loss), --batch N (inputs per forward pass, the library's eval_batch_size range),
 * --data DIR|FILE (what each reads there is its own), --json. */
typedef struct ffnn_cli_model_options {
    const char *path; /* --model FILE                                   */
    int loss_given;   /* --loss given (else the model file's loss)      */
    ffnn_loss loss;
    size_t batch;     /* inputs per forward pass (default 1024)         */
    const char *data; /* --data DIR|FILE|synth:..., or NULL             */
    int json;         /* --json                                         */
} ffnn_cli_model_options;

#define FFNN_CLI_MODEL_OPTIONS_DEFAULT {NULL, 0, FFNN_LOSS_SOFTMAX_CE, 1024, NULL, 0}
/* getopt codes of the shared options (a command's own codes start at _NEXT). */
enum { FFNN_CLI_OPT_MODEL = 256, FFNN_CLI_OPT_LOSS, FFNN_CLI_OPT_BATCH, FFNN_CLI_OPT_DATA,
       FFNN_CLI_OPT_JSON, FFNN_CLI_OPT_NEXT };
#define FFNN_CLI_MODEL_LONGOPTS                                                        \
    {"model", required_argument, NULL, FFNN_CLI_OPT_MODEL},                            \
        {"loss", required_argument, NULL, FFNN_CLI_OPT_LOSS},                          \
        {"batch", required_argument, NULL, FFNN_CLI_OPT_BATCH},                        \
        {"data", required_argument, NULL, FFNN_CLI_OPT_DATA},                          \
        {"json", no_argument, NULL, FFNN_CLI_OPT_JSON}

/* Handle getopt code c when it is a shared option: 1 with *rc the option's
 * status (0, or 2 after a message), else 0 (not one of them). */
int ffnn_cli_model_option(const char *cmd, ffnn_cli_model_options *o, int c, const char *arg,
                          int *rc);

/* Load --model into *m (o->loss from the file unless --loss); 0 or 1 (message
 * printed). */
int ffnn_cli_open_model(const char *cmd, ffnn_cli_model_options *o, ffnn_model **m);

/* The starting model of ffnn train: with init_path, the model of that file (its
 * architecture; arch, when not NULL, must name the same one; *loss set to the
 * file's loss unless loss_given); else arch (or default_arch when NULL) with the
 * seeded PyTorch-style initialisation. Prints the error; returns 0 or 1. */
int ffnn_cli_train_model(const char *init_path, const char *arch, const char *default_arch,
                         uint64_t seed, int loss_given, ffnn_loss *loss, ffnn_model **out);

/* After training: copy the trainer's parameters into model, save it with loss
 * to path and say so on info. Returns 0 or 1 (message printed). */
int ffnn_cli_save_trained(ffnn_trainer *trainer, ffnn_model *model, const char *path,
                          ffnn_loss loss, FILE *info);

#endif
