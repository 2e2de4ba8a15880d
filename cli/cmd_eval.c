/*
 * cmd_eval.c - ffnn eval --model FILE [--data DIR|FILE] [options]: a saved model on
 * a test set, computed by the library's CPU reference (ffnn_model_evaluate_metrics):
 * loss and accuracy, precision/recall/F1 per class and the confusion matrix, or
 * for regression MSE, RMSE, MAE and R^2 in the targets' units; text or --json.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "default_data.h"
#include "info_json.h"
#include "model_command.h"
#include "model_files.h"
#include "options.h"
#include "tabular.h"
#include "train_tasks.h"

#define CMD "ffnn eval"

/* printed output caps; per-class scores and the matrix only up to EVAL_MAX_SCORED */
enum { EVAL_MAX_CLASS_ROWS = 100, EVAL_MAX_MATRIX = 20, EVAL_MAX_SCORED = 4096 };

const char *const ffnn_cli_eval_usage =
    "usage: ffnn eval --model FILE [options]\n"
    "\n"
    "Evaluate a saved model on a test set with the CPU reference and print the mean\n"
    "loss, the accuracy, precision, recall and F1 per class and the confusion matrix\n"
    "(rows: true class, columns: predicted class; printed up to 20 classes, per-class\n"
    "rows up to 100), or for regression (loss mse on float targets) MSE, RMSE, MAE\n"
    "and R^2 in the targets' own units. A model trained with --standardize takes\n"
    "raw rows; class labels are matched to the model's classes by their text.\n"
    "\n"
    "options:\n"
    "  --model FILE   a model file (safetensors) written by 'ffnn train --save'\n"
    "  --data DIR     IDX directory (default: as ffnn train - data/mnist/, else MNIST\n"
    "                 downloaded there, else Debian's Fashion-MNIST), or a synthetic\n"
    "                 set as in ffnn train (its test set)\n"
    "  --data FILE    a CSV/TSV file (.gz too) or X.npy with --labels y.npy: all rows\n"
    FFNN_CLI_TABLE_USAGE
    "  --classes A,B  keep only labels A and B, relabelled 0 and 1 (as ffnn train)\n"
    "  --loss NAME    ce | bce | mse (default: the loss recorded in the model file)\n"
    "  --batch N      samples per forward pass (default 1024)\n"
    "  --json         one JSON object instead of the text\n"
    "  --sample-weight COL|w.npy, --class-weight balanced|LABEL:W,...  as ffnn train\n"
    "                 (balanced: of this data): the weighted loss and accuracy too\n"
    "  -h, --help     this help\n";

typedef struct eval_options {
    ffnn_cli_model_options model; /* --model, --loss, --batch, --data (DIR, FILE or
                                     synth:..., or NULL: the default), --json */
    ffnn_cli_table_options table;
    int class_a, class_b;         /* --classes A,B (class_a < 0: all)            */
    const char *sample_weight;    /* --sample-weight COL|w.npy (or NULL)         */
    const char *class_weight;     /* --class-weight SPEC (or NULL)               */
} eval_options;

enum { OPT_CLASSES = FFNN_CLI_OPT_NEXT, OPT_SAMPLE_WEIGHT, OPT_CLASS_WEIGHT };

static const struct option eval_longopts[] = {
    FFNN_CLI_MODEL_LONGOPTS,
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"sample-weight", required_argument, NULL, OPT_SAMPLE_WEIGHT},
    {"class-weight", required_argument, NULL, OPT_CLASS_WEIGHT},
    FFNN_CLI_TABLE_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int eval_option(void *ctx, int c, const char *arg)
{
    eval_options *o = ctx;
    switch (c) {
    case OPT_SAMPLE_WEIGHT: o->sample_weight = arg; return 0;
    case OPT_CLASS_WEIGHT: o->class_weight = arg; return 0;
    case OPT_CLASSES:
        return ffnn_cli_classes(CMD, arg, &o->class_a, &o->class_b);
    default: return 2; /* not in eval_longopts */
    }
}

/* Print the untrusted text s (a class name from a file) with non-printable bytes
 * as '?', at most max bytes (JSON output: ffnn_cli_put_json_string). */
static void put_text(const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c > 0x7e)
            c = '?';
        putchar(c);
    }
    if (*s)
        fputs("...", stdout);
}

/* Class c's label: its name in the model, else its number. */
static void put_class(const ffnn_model *m, int c, int json)
{
    const char *name = ffnn_model_class_name(m, c);
    if (json && name)
        ffnn_cli_put_json_string(stdout, name);
    else if (json)
        printf("\"%d\"", c);
    else if (name)
        put_text(name, 24);
    else
        printf("%d", c);
}

/* Class c's label as printable text: its name (cut to 24 bytes, '?' for bytes
 * outside ASCII) or its number. */
static void class_label(const ffnn_model *m, int c, char *out, size_t size)
{
    const char *name = ffnn_model_class_name(m, c);
    size_t k = 0;
    if (!name) {
        snprintf(out, size, "%d", c);
        return;
    }
    for (; name[k] && k < 24 && k + 4 < size; k++)
        out[k] = name[k] >= 0x20 && name[k] <= 0x7e ? name[k] : '?';
    snprintf(out + k, size - k, "%s", name[k] ? "..." : "");
}

/* Precision, recall, F1 and support of class c from the confusion matrix. */
static void class_scores(const uint64_t *confusion, int classes, int c, double *precision,
                         double *recall, double *f1, uint64_t *support)
{
    uint64_t tp = confusion[(size_t)c * (size_t)classes + (size_t)c], predicted = 0, actual = 0;
    for (int k = 0; k < classes; k++) {
        predicted += confusion[(size_t)k * (size_t)classes + (size_t)c];
        actual += confusion[(size_t)c * (size_t)classes + (size_t)k];
    }
    *precision = predicted ? (double)tp / (double)predicted : NAN;
    *recall = actual ? (double)tp / (double)actual : NAN;
    *f1 = *precision + *recall > 0 ? 2 * *precision * *recall / (*precision + *recall) : NAN;
    if (!(*f1 == *f1) && predicted && actual)
        *f1 = 0.0;
    *support = actual;
}

static void put_number(double v, int json)
{
    if (v != v)
        fputs(json ? "null" : "     -", stdout);
    else
        printf(json ? "%.6f" : "%6.4f", v);
}

static void print_per_class(const ffnn_model *m, const uint64_t *confusion, int classes)
{
    int shown = classes < EVAL_MAX_CLASS_ROWS ? classes : EVAL_MAX_CLASS_ROWS;
    printf("\nper class:\n  %-12s %9s %9s %9s %9s\n", "class", "precision", "recall", "f1",
           "support");
    for (int c = 0; c < shown; c++) {
        double p, r, f;
        uint64_t n;
        class_scores(confusion, classes, c, &p, &r, &f, &n);
        char label[32];
        class_label(m, c, label, sizeof label);
        printf("  %-12s ", label);
        put_number(p, 0);
        printf("    ");
        put_number(r, 0);
        printf("    ");
        put_number(f, 0);
        printf(" %9llu\n", (unsigned long long)n);
    }
    if (shown < classes)
        printf("  ... %d more classes not shown (--json has them all)\n", classes - shown);
}

/* The matrix with true classes as rows, predicted classes as columns. */
static void print_confusion(const uint64_t *confusion, int classes)
{
    uint64_t max = 0;
    int width = 5;

    if (classes > EVAL_MAX_MATRIX) {
        printf("\nconfusion matrix not printed: %d classes (at most %d are; --json has it up "
               "to %d)\n", classes, EVAL_MAX_MATRIX, EVAL_MAX_CLASS_ROWS);
        return;
    }
    for (size_t k = 0; k < (size_t)classes * (size_t)classes; k++)
        max = confusion[k] > max ? confusion[k] : max;
    for (uint64_t v = max; v >= 10000; v /= 10)
        width++;
    printf("\nconfusion matrix (rows: true class, columns: predicted class, by number):\n%10s",
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

static void print_json(const eval_options *o, const ffnn_model *m, const ffnn_metrics *r,
                       int regression, const uint64_t *confusion)
{
    int classes = ffnn_model_class_count(m);
    printf("{\"model\": ");
    ffnn_cli_put_json_string(stdout, o->model.path);
    printf(", \"loss_name\": \"%s\", \"count\": %zu, \"loss\": %.6f",
           ffnn_loss_name(o->model.loss), r->count, r->loss);
    if (r->weight_sum > 0.0) { /* sample or class weights */
        printf(", \"weight_sum\": %.9g, \"weighted_loss\": %.6f", r->weight_sum,
               r->weighted_loss);
        if (!regression)
            printf(", \"weighted_accuracy\": %.6f", r->weighted_accuracy);
    }
    if (regression) {
        printf(", \"mse\": %.6g, \"rmse\": %.6g, \"mae\": %.6g, \"r2\": ", r->mse, r->rmse,
               r->mae);
        put_number(r->r2, 1);
        printf("}\n");
        return;
    }
    printf(", \"accuracy\": %.6f", r->accuracy);
    if (!confusion) {
        printf(", \"per_class\": null}\n");
        return;
    }
    printf(", \"per_class\": [");
    for (int c = 0; c < classes; c++) {
        double p, rc, f;
        uint64_t n;
        class_scores(confusion, classes, c, &p, &rc, &f, &n);
        printf("%s{\"class\": %d, \"label\": ", c ? ", " : "", c);
        put_class(m, c, 1);
        printf(", \"precision\": ");
        put_number(p, 1);
        printf(", \"recall\": ");
        put_number(rc, 1);
        printf(", \"f1\": ");
        put_number(f, 1);
        printf(", \"support\": %llu}", (unsigned long long)n);
    }
    printf("]");
    if (classes <= EVAL_MAX_CLASS_ROWS) {
        printf(", \"confusion\": [");
        for (int t = 0; t < classes; t++) {
            printf("%s[", t ? ", " : "");
            for (int p = 0; p < classes; p++)
                printf("%s%llu", p ? ", " : "",
                       (unsigned long long)confusion[(size_t)t * (size_t)classes + (size_t)p]);
            printf("]");
        }
        printf("]");
    }
    printf("}\n");
}

/* The weighted metrics' line, with sample or class weights (train_tasks.h). */
static void print_weighted(const ffnn_metrics *r)
{
    char text[160];
    ffnn_cli_weighted_text(r, text, sizeof text);
    if (text[0])
        printf("%s\n", text);
}

static void print_text(const eval_options *o, const ffnn_model *m, const char *data,
                       const ffnn_metrics *r, int regression, const uint64_t *confusion)
{
    char arch[512];
    ffnn_model_arch_string(m, arch, sizeof arch);
    printf("model: %s (arch %s, loss %s%s)\n", o->model.path, arch,
           ffnn_loss_name(o->model.loss), o->model.loss_given ? ", from --loss" : "");
    printf("data: %s (%zu test samples), device: cpu (omp predictor, all cores)\n", data, r->count);
    if (regression) {
        printf("test_loss %.6f  mse %.6g  rmse %.6g  mae %.6g  r2 %.4f (targets' units)\n",
               r->loss, r->mse, r->rmse, r->mae, r->r2);
        print_weighted(r);
        return;
    }
    printf("test_loss %.4f  test_acc %.2f%% (%llu/%zu)\n", r->loss, 100.0 * r->accuracy,
           (unsigned long long)llround(r->accuracy * (double)r->count), r->count);
    print_weighted(r);
    if (!confusion) /* many classes: run_many_classes prints instead */
        return;
    print_per_class(m, confusion, ffnn_model_class_count(m));
    print_confusion(confusion, ffnn_model_class_count(m));
}

/* The test set: a tabular file (labels matched to the model's class names) or
 * the test part of --data (IDX, synth); --classes applied. */
static int load_test(const eval_options *o, const ffnn_model *m, ffnn_dataset **test,
                     char *description, size_t size)
{
    if (o->model.data && ffnn_cli_is_table(o->model.data)) {
        int classes = ffnn_model_class_count(m), regression = o->model.loss == FFNN_LOSS_MSE;
        const char **names = NULL;
        if (!regression && ffnn_model_class_name(m, 0) && o->class_a < 0) {
            /* the model's classes (with --classes: the file's, then A and B kept) */
            if (!(names = calloc((size_t)classes, sizeof *names)))
                return fprintf(stderr, "%s: out of memory\n", CMD), 1;
            for (int c = 0; c < classes; c++)
                names[c] = ffnn_model_class_name(m, c);
        }
        char ignore[1024];
        ffnn_cli_table_options t = ffnn_cli_weight_column_ignored(&o->table, o->model.data,
                                                                  o->sample_weight, ignore,
                                                                  sizeof ignore);
        int rc = ffnn_cli_check_labels_given(CMD, o->model.data, o->table.labels) ||
                 ffnn_cli_load_table_for(CMD, "--data", o->model.data, &t, regression, names,
                                         names ? classes : 0, m, test);
        free(names);
        if (rc)
            return 1;
        snprintf(description, size, "%s", o->model.data);
    } else if (ffnn_cli_load_data(CMD, o->model.data, NULL, test, description, size) != 0) {
        return 1;
    }
    if (o->class_a >= 0) {
        ffnn_dataset *sel = NULL;
        if (ffnn_dataset_select_classes(*test, o->class_a, o->class_b, &sel) != FFNN_OK)
            return ffnn_cli_fail(CMD, "--classes");
        ffnn_dataset_free(*test);
        *test = sel;
        size_t used = strlen(description);
        snprintf(description + used, size - used, ", classes %d,%d as 0,1", o->class_a,
                 o->class_b);
    }
    return 0;
}

/* A model of more than EVAL_MAX_SCORED classes: loss, accuracy and the accuracy
 * (recall) of each class from per-class counts; no matrix. */
static int run_many_classes(const eval_options *o, const ffnn_model *m, const ffnn_dataset *test,
                            const char *description)
{
    int classes = ffnn_model_class_count(m), shown = 0;
    uint64_t *correct = calloc((size_t)classes, sizeof *correct);
    uint64_t *total = calloc((size_t)classes, sizeof *total), right = 0;
    double loss = 0;
    if (!correct || !total) {
        free(correct);
        free(total);
        fprintf(stderr, "%s: out of memory for %d classes\n", CMD, classes);
        return 1;
    }
    if (ffnn_model_evaluate_per_class(m, test, o->model.batch, &loss, correct,
                                      total) != FFNN_OK) {
        free(correct);
        free(total);
        return ffnn_cli_fail(CMD, "evaluating");
    }
    for (int c = 0; c < classes; c++)
        right += correct[c];
    size_t n = ffnn_dataset_count(test);
    if (o->model.json) {
        printf("{\"count\": %zu, \"loss\": %.6f, \"accuracy\": %.6f, \"classes\": %d, "
               "\"per_class\": null}\n", n, loss, (double)right / (double)n, classes);
    } else {
        printf("data: %s (%zu test samples), device: cpu (omp predictor, all cores)\n",
               description, n);
        printf("test_loss %.4f  test_acc %.2f%% (%llu/%zu)\n\nper class (recall):\n", loss,
               100.0 * (double)right / (double)n, (unsigned long long)right, n);
        for (int c = 0; c < classes && shown < EVAL_MAX_CLASS_ROWS; c++, shown++) {
            char label[32];
            class_label(m, c, label, sizeof label);
            printf("  %-12s %7llu/%-7llu\n", label, (unsigned long long)correct[c],
                   (unsigned long long)total[c]);
        }
        printf("  ... %d more classes not shown (at most %d rows are printed)\n"
               "\nconfusion matrix not printed: %d classes (at most %d are)\n",
               classes - shown, EVAL_MAX_CLASS_ROWS, classes, EVAL_MAX_MATRIX);
    }
    free(correct);
    free(total);
    return 0;
}

/* Evaluate m on the test set and print. */
static int run_eval(void *ctx, const ffnn_model *m)
{
    eval_options *o = ctx;
    ffnn_dataset *test = NULL;
    uint64_t *confusion = NULL;
    char description[1024];
    ffnn_metrics r;
    int classes = ffnn_model_class_count(m), rc;

    if ((rc = load_test(o, m, &test, description, sizeof description)) != 0 ||
        (rc = ffnn_cli_sample_weights(CMD, o->model.data, &o->table, o->sample_weight, test)) != 0 ||
        (rc = ffnn_cli_class_weights(CMD, o->class_weight, &test, 1)) != 0) {
        ffnn_dataset_free(test);
        return rc;
    }
    int regression = ffnn_dataset_target_width(test) > 0 && o->model.loss == FFNN_LOSS_MSE;
    /* the matrix only up to EVAL_MAX_SCORED classes (8 bytes x classes^2); above,
     * per-class counts (O(classes) memory, ffnn_model_evaluate_per_class) */
    if (!regression && classes > EVAL_MAX_SCORED) {
        rc = run_many_classes(o, m, test, description);
        ffnn_dataset_free(test);
        return rc;
    }
    if (!(confusion = calloc((size_t)classes * (size_t)classes, sizeof *confusion)))
        rc = 1, fprintf(stderr, "%s: out of memory for a %d x %d matrix\n", CMD, classes,
                        classes);
    else if (ffnn_model_evaluate_metrics(m, test, o->model.batch, &r,
                                         confusion) != FFNN_OK)
        rc = ffnn_cli_fail(CMD, "evaluating");
    else if (o->model.json)
        print_json(o, m, &r, regression, confusion);
    else
        print_text(o, m, description, &r, regression, confusion);
    free(confusion);
    ffnn_dataset_free(test);
    return rc;
}

int ffnn_cli_eval(int argc, char **argv)
{
    static const ffnn_cli_model_command eval = {
        CMD, eval_longopts, ffnn_cli_eval_usage, eval_option, NULL, run_eval,
    };
    eval_options o;
    memset(&o, 0, sizeof o);
    o.class_a = o.class_b = -1;
    return ffnn_cli_run_model_command(&eval, argc, argv, &o, &o.model, &o.table);
}
