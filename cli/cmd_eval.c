/*
 * cmd_eval.c - ffnn eval --model FILE [--data DIR] [--loss NAME] [--batch N]: the
 * mean loss, the accuracy, the accuracy per class and the confusion matrix of a
 * saved model on a test set, computed by the library's CPU reference
 * (ffnn_model_evaluate); this file parses options and prints.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "default_data.h"
#include "model_files.h"
#include "options.h"

#define CMD "ffnn eval"

const char *const ffnn_cli_eval_usage =
    "usage: ffnn eval --model FILE [options]\n"
    "\n"
    "Evaluate a saved model on the test set of an IDX directory (t10k-images-idx3-ubyte\n"
    "and t10k-labels-idx1-ubyte, each raw or .gz) with the CPU reference and print the\n"
    "mean loss, the accuracy, the accuracy per class (the first 100 classes) and the\n"
    "confusion matrix (rows: true class, columns: predicted class; up to 32 classes).\n"
    "\n"
    "options:\n"
    "  --model FILE   a model file (safetensors) written by 'ffnn train --save'\n"
    "  --data DIR     IDX directory (default: as ffnn train - data/mnist/, else MNIST\n"
    "                 downloaded there, else Debian's Fashion-MNIST), or a synthetic\n"
    "                 set as in ffnn train (synth:points[:N[:SEED]],\n"
    "                 synth:regression[:N[:SEED]]: its test set; regression prints\n"
    "                 the loss only)\n"
    "  --loss NAME    ce | bce | mse (default: the loss recorded in the model file)\n"
    "  --batch N      samples per forward pass (default 1024)\n"
    "  -h, --help     this help\n";

typedef struct eval_options {
    ffnn_cli_model_options model; /* --model, --loss, --batch                   */
    const char *data;             /* --data DIR or synth:..., or NULL: the default */
} eval_options;

enum { OPT_DATA = FFNN_CLI_OPT_NEXT };

static const struct option eval_longopts[] = {
    FFNN_CLI_MODEL_LONGOPTS,
    {"data", required_argument, NULL, OPT_DATA},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int eval_option(void *ctx, int c, const char *arg)
{
    eval_options *o = ctx;
    int rc;

    if (ffnn_cli_model_option(CMD, &o->model, c, arg, &rc))
        return rc;
    if (c == OPT_DATA) {
        o->data = arg;
        return 0;
    }
    return 2; /* not in eval_longopts */
}

/* Output caps: a model with many outputs (20,000 classes) gets per-class counts
 * instead of a confusion matrix (O(classes) memory, ffnn_model_evaluate_per_class),
 * and at most PER_CLASS_SHOWN rows of per-class accuracy. */
enum { CONFUSION_MAX_CLASSES = 32, PER_CLASS_SHOWN = 100 };

static void print_per_class(const uint64_t *correct, const uint64_t *total, int classes)
{
    int shown = classes < PER_CLASS_SHOWN ? classes : PER_CLASS_SHOWN;
    printf("\nper-class accuracy:\n  class  samples  correct  accuracy\n");
    for (int t = 0; t < shown; t++) {
        if (total[t])
            printf("  %5d  %7llu  %7llu   %6.2f%%\n", t, (unsigned long long)total[t],
                   (unsigned long long)correct[t],
                   100.0 * (double)correct[t] / (double)total[t]);
        else
            printf("  %5d  %7d  %7d        -\n", t, 0, 0);
    }
    if (shown < classes)
        printf("  ... %d more classes not shown (at most %d rows are printed)\n",
               classes - shown, PER_CLASS_SHOWN);
}

/* The matrix with true classes as rows, predicted classes as columns. */
static void print_confusion(const uint64_t *confusion, int classes)
{
    uint64_t max = 0;
    int width = 5;

    for (size_t k = 0; k < (size_t)classes * (size_t)classes; k++)
        max = confusion[k] > max ? confusion[k] : max;
    for (uint64_t v = max; v >= 10000; v /= 10)
        width++;
    printf("\nconfusion matrix (rows: true class, columns: predicted class):\n%10s",
           "true\\pred");
    for (int p = 0; p < classes; p++)
        printf(" %*d", width, p);
    for (int t = 0; t < classes; t++) {
        printf("\n%10d", t);
        for (int p = 0; p < classes; p++)
            printf(" %*llu", width,
                   (unsigned long long)confusion[(size_t)t * (size_t)classes + (size_t)p]);
    }
    printf("\n");
}

/* correct [classes], total [classes], and confusion [classes, classes] or NULL
 * (more than CONFUSION_MAX_CLASSES classes: not printed). */
static void print_eval(const eval_options *o, const ffnn_model *m, const char *data,
                       size_t count, double loss, const uint64_t *correct,
                       const uint64_t *total, const uint64_t *confusion)
{
    int classes = ffnn_model_class_count(m);
    uint64_t right = 0;
    char *arch = ffnn_cli_arch_string(m);

    for (int c = 0; c < classes; c++)
        right += correct[c];
    printf("model: %s (arch %s, loss %s%s)\n", o->model.path, arch ? arch : "?",
           ffnn_loss_name(o->model.loss),
           o->model.loss_given ? ", from --loss" : "");
    printf("data: %s (%zu test samples), device: cpu (reference)\n", data, count);
    printf("test_loss %.4f  test_acc %.2f%% (%llu/%zu)\n", loss,
           100.0 * (double)right / (double)count, (unsigned long long)right, count);
    print_per_class(correct, total, classes);
    if (confusion)
        print_confusion(confusion, classes);
    else
        printf("\nconfusion matrix not printed: %d classes (at most %d are)\n", classes,
               CONFUSION_MAX_CLASSES);
    free(arch);
}

/* Evaluate m on the test set of --data (or of the default data) and print. */
static int run_eval(eval_options *o, const ffnn_model *m)
{
    ffnn_dataset *test = NULL;
    uint64_t *confusion = NULL, *correct = NULL, *total = NULL;
    char description[512];
    double loss = 0.0;
    int classes = ffnn_model_class_count(m), rc;
    int matrix = classes <= CONFUSION_MAX_CLASSES;
    ffnn_status st;

    if ((rc = ffnn_cli_load_data(CMD, o->data, NULL, &test, description,
                                 sizeof description)) != 0) {
        ffnn_dataset_free(test);
        return rc;
    }
    if (matrix)
        confusion = calloc((size_t)classes * (size_t)classes, sizeof *confusion);
    correct = calloc((size_t)classes, sizeof *correct);
    total = calloc((size_t)classes, sizeof *total);
    if ((matrix && !confusion) || !correct || !total) {
        rc = 1, fprintf(stderr, "%s: out of memory for the counts of %d classes\n", CMD,
                        classes);
    } else {
        st = matrix ? ffnn_model_evaluate(m, o->model.loss, test, o->model.batch, &loss,
                                          confusion)
                    : ffnn_model_evaluate_per_class(m, o->model.loss, test, o->model.batch,
                                                    &loss, correct, total);
        if (st != FFNN_OK)
            rc = ffnn_cli_fail(CMD, "evaluating");
    }
    for (int t = 0; rc == 0 && matrix && t < classes; t++) /* the matrix's row sums */
        for (int p = 0; p < classes; p++) {
            total[t] += confusion[(size_t)t * (size_t)classes + (size_t)p];
            correct[t] += t == p ? confusion[(size_t)t * (size_t)classes + (size_t)p] : 0;
        }
    if (rc == 0 && ffnn_dataset_target_width(test) > 0 && o->model.loss == FFNN_LOSS_MSE)
        printf("data: %s (%zu test samples), device: cpu (reference)\ntest_loss %.6f "
               "(regression: no accuracy)\n", description, ffnn_dataset_count(test), loss);
    else if (rc == 0)
        print_eval(o, m, description, ffnn_dataset_count(test), loss, correct, total,
                   confusion);
    free(confusion);
    free(correct);
    free(total);
    ffnn_dataset_free(test);
    return rc;
}

int ffnn_cli_eval(int argc, char **argv)
{
    eval_options o = {FFNN_CLI_MODEL_OPTIONS_DEFAULT, NULL};
    ffnn_model *m = NULL;
    int operands;
    int rc = ffnn_cli_getopt(CMD, argc, argv, eval_longopts, ffnn_cli_eval_usage, eval_option,
                             &o, &operands);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (operands < argc)
        return ffnn_cli_unexpected(CMD, argv[operands]);
    if (!o.model.path)
        return ffnn_cli_missing(CMD, "--model FILE");
    if ((rc = ffnn_cli_open_model(CMD, &o.model, &m)) == 0)
        rc = run_eval(&o, m);
    ffnn_model_free(m);
    return rc;
}
