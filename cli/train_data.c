/*
 * train_data.c - the data of ffnn train (ffnn_cli_train_data): --data (or the
 * default data) and --test, --classes, --train-limit, the --test-split and
 * --val-split splits, the sample and class weights, a table's encoding, and the
 * architecture without --arch. cmd_train.c parses the options.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "default_data.h"
#include "model_files.h"
#include "options.h"
#include "tabular.h"
#include "train_run.h"
#include "train_tasks.h"

#define CMD "ffnn train"

/* A split of *data: *data keeps the rest, *part (new) gets the fraction. */
static int split(ffnn_dataset **data, double fraction, uint64_t seed, const char *opt,
                 ffnn_dataset **part)
{
    ffnn_dataset *rest = NULL;
    if (ffnn_dataset_split(*data, fraction, seed, &rest, part) != FFNN_OK)
        return ffnn_cli_fail(CMD, opt);
    ffnn_dataset_free(*data);
    *data = rest;
    return 0;
}

/* "N rows x F features, C classes" (or "K targets") of a tabular file. */
static void describe_table(const char *path, const ffnn_dataset *d, char *out, size_t size)
{
    if (ffnn_dataset_target_width(d))
        snprintf(out, size, "%s (%zu features, %zu target%s)", path, ffnn_dataset_features(d),
                 ffnn_dataset_target_width(d), ffnn_dataset_target_width(d) == 1 ? "" : "s");
    else
        snprintf(out, size, "%s (%zu features, %d classes)", path, ffnn_dataset_features(d),
                 ffnn_dataset_classes(d));
}

/* --data (or the default), --test; --classes, --train-limit; --test-split and
 * --val-split; description for the first line. 0, or 1 with the message. */
static int load_data(const ffnn_cli_train_options *o, ffnn_dataset **train, ffnn_dataset **val,
                     ffnn_dataset **test, char *description, size_t description_size)
{
    int regression = o->cfg.loss == FFNN_LOSS_MSE ||
                     (o->table.csv.target && strchr(o->table.csv.target, ','));
    char ignore[1024];
    ffnn_cli_table_options t = ffnn_cli_weight_column_ignored(&o->table, o->data,
                                                              o->sample_weight, ignore,
                                                              sizeof ignore);
    if (o->data && ffnn_cli_is_table(o->data)) {
        if (ffnn_cli_check_labels_given(CMD, o->data, o->table.labels) ||
            ffnn_cli_load_table_for(CMD, "--data", o->data, &t, regression, NULL, 0, NULL,
                                    train))
            return 1;
        describe_table(o->data, *train, description, description_size);
    } else if (ffnn_cli_load_data(CMD, o->data, train, test, description, description_size)) {
        return 1;
    }
    if (ffnn_cli_sample_weights(CMD, o->data, &o->table, o->sample_weight, *train))
        return 1; /* one weight per row of --data, carried through the splits */
    if (o->test_path) {
        int classes = ffnn_dataset_classes(*train);
        const char **names = NULL;
        if (ffnn_dataset_class_name(*train, 0)) { /* the training set's classes */
            if (!(names = calloc((size_t)classes, sizeof *names)))
                return fprintf(stderr, "%s: out of memory\n", CMD), 1;
            for (int c = 0; c < classes; c++)
                names[c] = ffnn_dataset_class_name(*train, c);
        }
        ffnn_dataset_free(*test);
        *test = NULL;
        ffnn_cli_table_options t = o->table;
        t.labels = NULL; /* --labels is the training set's */
        int rc = ffnn_cli_load_table_for(CMD, "--test", o->test_path, &t, regression,
                                         names, names ? classes : 0, NULL, test);
        free(names);
        if (rc)
            return 1;
    }
    if (o->class_a >= 0) { /* --classes A,B */
        ffnn_dataset *sel[2] = {NULL, NULL};
        if (ffnn_dataset_select_classes(*train, o->class_a, o->class_b, &sel[0]) != FFNN_OK ||
            (*test && ffnn_dataset_select_classes(*test, o->class_a, o->class_b, &sel[1]) !=
                          FFNN_OK)) {
            ffnn_dataset_free(sel[0]);
            return ffnn_cli_fail(CMD, "--classes");
        }
        ffnn_dataset_free(*train);
        ffnn_dataset_free(*test);
        *train = sel[0];
        *test = sel[1];
        size_t used = strlen(description);
        snprintf(description + used, description_size - used, ", classes %d,%d as 0,1",
                 o->class_a, o->class_b);
    }
    if (o->train_limit > 0 && (size_t)o->train_limit < ffnn_dataset_count(*train)) {
        ffnn_dataset *part = NULL;
        if (ffnn_dataset_slice(*train, 0, (size_t)o->train_limit, &part) != FFNN_OK)
            return ffnn_cli_fail(CMD, "--train-limit");
        ffnn_dataset_free(*train);
        *train = part;
    }
    if (o->test_split > 0) {
        if (*test) {
            fprintf(stderr, "%s: --test-split: the data has a test set already (%s)\n", CMD,
                    o->test_path ? "--test" : "its own");
            return 1;
        }
        if (split(train, o->test_split, o->cfg.seed, "--test-split", test))
            return 1;
    }
    if (o->val_split > 0 && split(train, o->val_split, o->cfg.seed + 1, "--val-split", val))
        return 1;
    ffnn_dataset *sets[3] = {*train, *val, *test}; /* text and missing cells: encoded */
    int rc = ffnn_cli_encode_keeping_weights(CMD, sets, 3, o->json ? stderr : stdout,
                                             &o->embedding);
    *train = sets[0];
    *val = sets[1];
    *test = sets[2];
    if (rc || ffnn_cli_check_task(CMD, o, *train)) /* no silent wrong task: as trained */
        return 1;
    return ffnn_cli_class_weights(CMD, o->class_weight, sets, 3); /* balanced: of train */
}

/* The default --arch of the data: FEATURES-256relu-CLASSES, or -TARGETS for float
 * targets (which also make mse the default loss). */
static void default_arch(ffnn_cli_train_options *o, const ffnn_dataset *train, char *arch,
                         size_t size)
{
    char emb[FFNN_CLI_ARCH_SIZE - 64]; /* a table's embedded columns: FEATURES-embed...-256relu */
    ffnn_cli_embedding_token(train, emb + 1, sizeof emb - 1);
    emb[0] = emb[1] ? '-' : '\0';
    if (ffnn_dataset_target_width(train) > 0) { /* float targets: one output each, mse */
        snprintf(arch, size, "%zu%s-256relu-%zu", ffnn_dataset_features(train), emb,
                 ffnn_dataset_target_width(train));
        if (!o->loss_given && !o->resume_path)
            o->cfg.loss = FFNN_LOSS_MSE;
    } else {
        snprintf(arch, size, "%zu%s-256relu-%d", ffnn_dataset_features(train), emb,
                 ffnn_dataset_classes(train) < 2 ? 2 : ffnn_dataset_classes(train));
    }
}

int ffnn_cli_train_data(ffnn_cli_train_options *o, ffnn_dataset **train,
                        ffnn_dataset **val, ffnn_dataset **test, char *arch, size_t arch_size,
                        char *description, size_t description_size)
{
    if (load_data(o, train, val, test, description, description_size) != 0)
        return 1;
    default_arch(o, *train, arch, arch_size);
    return 0;
}
