/* train_tasks.h - ffnn train's task checks (--allow-many-classes), the sample
 * and class weights (--sample-weight, --class-weight) and k-fold
 * cross-validation (--cv K): docs/TRAINING.md. */
#ifndef FFNN_CLI_TRAIN_TASKS_H
#define FFNN_CLI_TRAIN_TASKS_H

#include <stdio.h>

#include "ffnn.h"
#include "tabular.h"
#include "train_run.h"

/* The help text of those options. */
#define FFNN_CLI_TASKS_USAGE                                                              \
    "  --allow-many-classes  train a classifier although it has more classes than\n"      \
    "                    half the training rows (refused otherwise: likely a continuous\n" \
    "                    target, for --loss mse, or an id column)\n"                   \
    "  --sample-weight COL|w.npy  a weight per row: a column of the CSV --data (taken\n"  \
    "                    out of the features) or a .npy of one float per row; the loss\n" \
    "                    is the weighted mean sum w_i l_i / sum w_i over each batch\n"    \
    "                    (cpu backends; docs/TRAINING.md \"Weights\")\n"                 \
    "  --class-weight balanced|LABEL:W,...  each sample's weight times its class's:\n"   \
    "                    balanced = n / (k n_c) on the training split (scikit-learn's);\n" \
    "                    LABEL:W, classes not named 1 (PyTorch's CrossEntropyLoss(\n"     \
    "                    weight=...)). The test line after training adds the\n"     \
    "                    weighted loss and accuracy\n"                                  \
    "  --cv K            K-fold cross-validation (stratified by class, seeded by --seed):\n" \
    "                    K models, each trained on K-1 folds and measured on the one\n"   \
    "                    left; per fold and mean +- std of each metric (--json: JSON).\n"  \
    "                    With --save, then one model refit on all the rows is saved\n"

/* .npy features without --labels: refused (0, or 1 with the message). */
int ffnn_cli_check_labels_given(const char *cmd, const char *data, const char *labels);

/* The task checks of the library (ffnn_dataset_check_task) on the training
 * set as trained (after --test-split and --val-split), with
 * --allow-many-classes. 0, or 1 with the message naming the way out. */
int ffnn_cli_check_task(const char *cmd, const ffnn_cli_train_options *o,
                        const ffnn_dataset *train);

/* The table options of the main load: with --sample-weight COL (a CSV column)
 * and no --features, COL added to --ignore (buf [size] holds the list). */
ffnn_cli_table_options ffnn_cli_weight_column_ignored(const ffnn_cli_table_options *table,
                                                      const char *data, const char *spec,
                                                      char *buf, size_t size);

/* ffnn_cli_encode_splits (text and missing cells encoded), the sample weights
 * of sets[0..n) (n <= 3) kept on the encoded sets. 0, or 1 with the message. */
int ffnn_cli_encode_keeping_weights(const char *cmd, ffnn_dataset **sets, int n, FILE *info,
                                    const ffnn_cli_embedding_options *emb);

/* --sample-weight on the data as loaded (before any split: one weight per row
 * of --data). 0, or 1 with the message. */
int ffnn_cli_sample_weights(const char *cmd, const char *data,
                            const ffnn_cli_table_options *table, const char *spec,
                            ffnn_dataset *train);

/* --class-weight: weights of sets[0] (the training split; balanced is computed
 * on it) applied to each of sets[0..n) that is not NULL. 0, or 1 with the message. */
int ffnn_cli_class_weights(const char *cmd, const char *spec, ffnn_dataset *sets[], int n);

/* "weighted: loss L, accuracy A (weights summing to W)" for metrics with weights
 * (nothing without), into out [size] ("" without). */
void ffnn_cli_weighted_text(const ffnn_metrics *m, char *out, size_t size);

/* After training with weights: the test set's weighted and plain loss and
 * accuracy, one line (a JSON object with json). 0, or 1 with the message. */
int ffnn_cli_print_weighted_test(int json, const ffnn_model *model,
                                 const ffnn_dataset *test, size_t batch, FILE *info);

/* --cv K against the options it excludes (the splits, --test, --resume,
 * checkpoints, early stopping, --gpus, logs). 0, or 2 with the message. */
int ffnn_cli_cv_check(const char *cmd, const ffnn_cli_train_options *o);

/* --cv K: K models, each trained on all folds but one (ffnn_dataset_fold,
 * seed --seed) from the start ffnn train would use (--init or --arch, seeded),
 * measured on its fold: a line (JSON object with --json) per fold, then the
 * mean and standard deviation (over K) of each metric. data: all of --data.
 * 0, or 1 with the message. */
int ffnn_cli_train_cv(const char *cmd, const ffnn_cli_train_options *o, const ffnn_dataset *data,
                      const char *arch, const char *description);

#endif
