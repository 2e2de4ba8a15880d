/* default_data.h - the data of --data (ffnn train, ffnn eval), and where the CLI
 * finds a data set when no --data is given. */
#ifndef FFNN_CLI_DEFAULT_DATA_H
#define FFNN_CLI_DEFAULT_DATA_H

#include <stddef.h>
#include <stdio.h>

#include "ffnn.h"

/* --data of ffnn train and ffnn eval: spec is a synthetic set ("synth:points..."),
 * an IDX directory, or NULL for the default (ffnn_cli_find_default_data, with its
 * progress on stderr). train may be NULL: the test set only (eval). description
 * [desc_size] gets the name the first output line gives the data. Returns 0, or 1
 * with "CMD: ..." printed (cmd: "ffnn train"); *train and *test, when set, are the
 * caller's to free either way. */
int ffnn_cli_load_data(const char *cmd, const char *spec, ffnn_dataset **train,
                       ffnn_dataset **test, char *description, size_t desc_size);

/* Find a directory of IDX files (train-images-idx3-ubyte[.gz] and the other
 * three), trying in order:
 *   (a) data/mnist/ under the current directory, when it holds all four files;
 *   (b) a download of MNIST into data/mnist/ with curl (or wget) from public
 *       mirrors; each file goes to a temporary name, the set must load with
 *       ffnn_dataset_load_idx, and only then is each renamed into place;
 *   (c) /usr/share/datasets/fashion-mnist (Debian package dataset-fashion-mnist);
 *   (d) as root with apt-get present: `apt-get install -y dataset-fashion-mnist`,
 *       then (c) again.
 * Returns 0 with dir [dir_size] set to the directory and description [desc_size]
 * to e.g. "MNIST (data/mnist)" or "Fashion-MNIST (/usr/share/datasets/fashion-mnist)".
 * Otherwise returns non-zero after printing to log the commands that get data.
 * At most one line goes to log when (b) or (c) is taken: that MNIST was downloaded, or
 * why it was not (no network, ...) and that Fashion-MNIST is used; the download tools'
 * own messages are discarded; (d) says what it runs. log may be NULL for silence.
 * Nothing is written to stdout. */
int ffnn_cli_find_default_data(char *dir, size_t dir_size, char *description,
                               size_t desc_size, FILE *log);

#endif
