/*
 * cmd_predict.c - ffnn predict --model FILE --input FILE [--loss NAME] [--batch N]:
 * a saved model on IDX images or CSV rows (csv_input.c), one CSV line per input on
 * stdout: the predicted class, then the probabilities (or the raw outputs for mse).
 * Inference runs on a predictor (ffnn_predictor_predict; --threads, --device).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "csv_input.h"
#include "info_json.h"
#include "model_command.h"
#include "model_files.h"
#include "options.h"
#include "tabular.h"

#define CMD "ffnn predict"

const char *const ffnn_cli_predict_usage =
    "usage: ffnn predict --model FILE --input FILE [options]\n"
    "\n"
    "Run a saved model on inputs and print one CSV line per input on stdout: the\n"
    "predicted class, then the class probabilities (softmax for ce; the sigmoid of\n"
    "each output for bce, i.e. P(class 1) for one output) or the raw outputs (mse).\n"
    "\n"
    "options:\n"
    "  --model FILE   a model file (safetensors) written by 'ffnn train --save'\n"
    "  --input FILE   an IDX image file (raw or .gz; pixels are divided by 255), or a\n"
    "                 CSV file: one input per line, as many comma-separated numbers\n"
    "                 as the model has inputs, as the network sees them (pixels in\n"
    "                 [0, 1]). A UTF-8 BOM, CRLF line ends and empty lines are\n"
    "                 accepted. '-' reads CSV from stdin, a batch at a time\n"
    "  --data FILE    a CSV/TSV file (.gz too) or X.npy: raw rows as in ffnn train\n"
    "                 (a model trained with --standardize standardises them itself).\n"
    "                 Columns: all, when there are as many as the model's inputs;\n"
    "                 else the features as ffnn train picks them (--target, default\n"
    "                 the last column, is left out). Prints a header line, then per\n"
    "                 row the class (its label from the training file) and the\n"
    "                 probabilities, or for regression (mse) only the outputs in\n"
    "                 the targets' units\n"
    FFNN_CLI_TABLE_USAGE
    "  --json         one JSON object per row instead of CSV lines\n"
    "  --loss NAME    ce | bce | mse: how outputs become probabilities (default: the\n"
    "                 loss recorded in the model file)\n"
    "  --batch N      inputs per forward pass (default 1024)\n"
    "  --threads N    cpu threads of the predictor (default 0: all cores)\n"
    "  --device NAME  cpu (default) | cuda | auto\n"
    "  -h, --help     this help\n";

typedef struct predict_options {
    ffnn_cli_model_options model; /* --model, --loss, --batch, --data FILE (tabular),
                                     --json */
    const char *input_path;       /* --input FILE ('-': CSV on stdin)              */
    ffnn_cli_table_options table;
    int threads;                  /* --threads N (0: all cores)                    */
    ffnn_device device;           /* --device NAME (default cpu)                   */
} predict_options;

enum { OPT_INPUT = FFNN_CLI_OPT_NEXT, OPT_THREADS, OPT_DEVICE };

static const struct option predict_longopts[] = {
    FFNN_CLI_MODEL_LONGOPTS,
    {"input", required_argument, NULL, OPT_INPUT},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"device", required_argument, NULL, OPT_DEVICE},
    FFNN_CLI_TABLE_LONGOPTS,
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int predict_option(void *ctx, int c, const char *arg)
{
    predict_options *o = ctx;
    if (c == OPT_THREADS) { /* the trainer's range of threads */
        long long v;
        if (ffnn_cli_limit_int(CMD, "--threads", ffnn_train_config_limit("threads"), arg, &v))
            return 2;
        o->threads = (int)v;
        return 0;
    }
    if (c == OPT_DEVICE)
        return ffnn_cli_device(CMD, "--device", arg, &o->device) ? 2 : 0;
    if (c == OPT_INPUT) {
        o->input_path = arg;
        return 0;
    }
    return 2; /* not in predict_longopts */
}

/* The inputs: IDX images (scaled by 1/255 batch by batch) or CSV rows. */
typedef struct predict_input {
    ffnn_dataset *images; /* IDX input, or NULL                     */
    ffnn_dataset *table;  /* --data input, or NULL                  */
    float *x;             /* CSV input [rows, features], or NULL    */
    size_t rows;
} predict_input;

/* IDX (gzip or 00 00 magic) or CSV, by the first bytes. */
static int read_input(const predict_options *o, size_t features, predict_input *in)
{
    int is_stdin = strcmp(o->input_path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(o->input_path, "rb");
    unsigned char magic[2] = {0xff, 0xff};
    char err[768];
    int rc = 0;

    if (!f) {
        fprintf(stderr, "%s: --input %s: %s\n", CMD, o->input_path, strerror(errno));
        return 1;
    }
    if (!is_stdin) {
        size_t got = fread(magic, 1, 2, f);
        rewind(f);
        if (got == 2 && ((magic[0] == 0x1f && magic[1] == 0x8b) || (!magic[0] && !magic[1]))) {
            fclose(f);
            if (ffnn_dataset_load_idx(o->input_path, NULL, &in->images) != FFNN_OK)
                return ffnn_cli_fail(CMD, "--input");
            in->rows = ffnn_dataset_count(in->images);
            return 0;
        }
    }
    if (ffnn_cli_read_csv(f, is_stdin ? "<stdin>" : o->input_path, features, &in->x,
                          &in->rows, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --input: %s\n", CMD, err);
        rc = 1;
    }
    if (!is_stdin)
        fclose(f);
    return rc;
}

/* --data: a tabular file; every column a feature when they are as many as the
 * model's inputs, else the columns ffnn train would take as features. */
static int read_table(const predict_options *o, const ffnn_model *m, predict_input *in)
{
    size_t features = ffnn_model_input_size(m);
    ffnn_cli_table_options t = o->table;
    int regression = o->model.loss == FFNN_LOSS_MSE;
    if (ffnn_cli_model_has_table(m)) { /* raw rows: the model's columns, encoded as in training */
        t.csv.target = ""; /* a target column, when there, is not read */
        if (ffnn_cli_load_table_for(CMD, "--data", o->model.data, &t, 0, NULL, 0, m, &in->table))
            return 1;
        in->rows = ffnn_dataset_count(in->table);
        return 0;
    }
    if (!t.csv.target && !t.csv.features && !t.labels) {
        t.csv.target = ""; /* all columns, no target (quietly: a label column is text) */
        if (ffnn_dataset_load_csv(o->model.data, &t.csv, &in->table) == FFNN_OK &&
            ffnn_dataset_features(in->table) == features) {
            in->rows = ffnn_dataset_count(in->table);
            return 0;
        }
        ffnn_dataset_free(in->table);
        in->table = NULL;
        t.csv.target = NULL; /* the last column is the target: left out */
    }
    if (ffnn_cli_load_table(CMD, "--data", o->model.data, &t, regression, NULL, 0, &in->table))
        return 1;
    if (ffnn_dataset_features(in->table) != features) {
        fprintf(stderr, "%s: --data %s: expected %zu feature columns (the model's inputs), "
                "found %zu (choose them with --features)\n", CMD, o->model.data, features,
                ffnn_dataset_features(in->table));
        return 1;
    }
    in->rows = ffnn_dataset_count(in->table);
    return 0;
}

/* Rows [first, first + n) as floats [n, features]: into scratch for images. */
static const float *input_rows(const predict_input *in, size_t first, size_t n,
                               size_t features, float *scratch)
{
    const uint8_t *px;

    if (in->x)
        return in->x + first * features;
    if (in->table)
        return ffnn_dataset_float_features(in->table) + first * features;
    px = ffnn_dataset_images(in->images) + first * features;
    for (size_t k = 0; k < n * features; k++)
        scratch[k] = (float)px[k] / 255.0f;
    return scratch;
}

/* The untrusted text s (a class label from a file) in CSV: printable ASCII only
 * ('?' for other bytes and ','), at most 64 bytes. */
static void put_label(const char *s)
{
    for (size_t n = 0; *s && n < 64; s++, n++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c > 0x7e || c == ',')
            c = '?';
        putchar(c);
    }
}

/* A class: the model's label for it (JSON: a string by cJSON's printer), or its
 * number. */
static void put_class(const ffnn_model *m, int cls, int json)
{
    const char *name = ffnn_model_class_name(m, cls);
    if (json && name)
        ffnn_cli_put_json_string(stdout, name);
    else if (json)
        printf("\"%d\"", cls);
    else if (name)
        put_label(name);
    else
        printf("%d", cls);
}

/* The header line of --data output. */
static void print_header(const predict_options *o, const ffnn_model *m, size_t width)
{
    int regression = o->model.loss == FFNN_LOSS_MSE;
    if (o->model.json)
        return;
    if (!regression)
        printf("class");
    for (size_t j = 0; j < width; j++) {
        if (regression) {
            printf("%soutput%zu", j ? "," : "", j);
            continue;
        }
        printf(",p_");
        put_class(m, width == 1 ? 1 : (int)j, 0);
    }
    putchar('\n');
}

/* The end of the predictions: stdout flushed; a write error (a full disk, a closed
 * pipe) makes a successful rc 1, with the message. Returns rc. */
static int finish_stdout(int rc)
{
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        rc = 1, fprintf(stderr, "%s: writing stdout: %s\n", CMD, strerror(errno));
    return rc;
}

/* One line per row (rows first .. first + n): class, then the values p [n, width];
 * for tabular input as the header says (regression: the outputs only), --json one
 * object per row. */
static void print_predictions(const predict_options *o, const ffnn_model *m, size_t first,
                              const float *p, const int *cls, size_t n, size_t width)
{
    int table = o->model.data != NULL, regression = o->model.loss == FFNN_LOSS_MSE;
    for (size_t b = 0; b < n; b++) {
        if (o->model.json) {
            printf("{\"row\": %zu", first + b);
            if (!regression) {
                printf(", \"class\": ");
                put_class(m, cls[b], 1);
            }
            printf(", \"%s\": [", regression ? "outputs" : "probabilities");
            for (size_t j = 0; j < width; j++)
                printf("%s%.6g", j ? ", " : "", (double)p[b * width + j]);
            printf("]}\n");
            continue;
        }
        if (table && !regression)
            put_class(m, cls[b], 0);
        else if (!table)
            printf("%d", cls[b]);
        for (size_t j = 0; j < width; j++)
            printf("%s%.6g", table && regression && j == 0 ? "" : ",", (double)p[b * width + j]);
        putchar('\n');
    }
}

/* A run's predictor with its input scratch and outputs for batches of up to chunk
 * rows: x [chunk, features], p [chunk, width], cls [chunk]. */
typedef struct batches {
    size_t chunk, features, width;
    float *x, *p;
    int *cls;
    ffnn_predictor *pr;
} batches;

/* b for m and --device/--threads; 0, or 1 with the message (batches_end frees b
 * either way). */
static int batches_begin(const predict_options *o, const ffnn_model *m, size_t chunk, batches *b)
{
    b->chunk = chunk;
    b->features = ffnn_model_input_size(m);
    b->width = ffnn_model_output_size(m);
    b->x = malloc(chunk * b->features * sizeof *b->x);
    b->p = malloc(chunk * b->width * sizeof *b->p);
    b->cls = malloc(chunk * sizeof *b->cls);
    b->pr = NULL;
    if (!b->x || !b->p || !b->cls) {
        fprintf(stderr, "%s: out of memory for a batch of %zu\n", CMD, chunk);
        return 1;
    }
    if (ffnn_predictor_create(m, o->device, o->threads, chunk, &b->pr) != FFNN_OK)
        return ffnn_cli_fail(CMD, "--device/--threads");
    return 0;
}

/* Rows first .. first + n (x [n, features]) predicted and printed; 0, or 1 with the
 * message. */
static int predict_batch(const predict_options *o, const ffnn_model *m, batches *b,
                         const float *x, size_t n, size_t first)
{
    if (ffnn_predictor_predict(b->pr, x, n, b->p, b->cls) != FFNN_OK)
        return ffnn_cli_fail(CMD, "predicting");
    print_predictions(o, m, first, b->p, b->cls, n, b->width);
    return 0;
}

/* b freed and stdout flushed (finish_stdout); returns the exit status. */
static int batches_end(batches *b, int rc)
{
    ffnn_predictor_free(b->pr);
    free(b->x);
    free(b->p);
    free(b->cls);
    return finish_stdout(rc);
}

static int predict_all(const predict_options *o, const ffnn_model *m, const predict_input *in)
{
    size_t chunk = in->rows < o->model.batch ? in->rows : o->model.batch;
    batches b;
    int rc = batches_begin(o, m, chunk ? chunk : 1, &b);
    for (size_t first = 0; rc == 0 && first < in->rows; first += chunk) {
        size_t n = in->rows - first < chunk ? in->rows - first : chunk;
        rc = predict_batch(o, m, &b, input_rows(in, first, n, b.features, b.x), n, first);
    }
    return batches_end(&b, rc);
}

/* --input -: CSV rows from stdin a batch at a time, each batch predicted,
 * printed and flushed before the next is read (stdin is never held whole; a
 * bad row ends the run with exit 1 after the rows before it were printed). */
static int predict_stdin(const predict_options *o, const ffnn_model *m)
{
    size_t chunk = o->model.batch ? o->model.batch : 1, first = 0;
    batches b;
    int rc = batches_begin(o, m, chunk, &b);
    char err[768];
    ffnn_cli_csv_stream *s = NULL;
    long n = 0;
    if (rc == 0 && !(s = ffnn_cli_csv_open(stdin, "<stdin>", b.features, err, sizeof err)))
        rc = 1, fprintf(stderr, "%s: out of memory for a batch of %zu\n", CMD, chunk);
    while (rc == 0 && (n = ffnn_cli_csv_next(s, b.x, chunk)) > 0) {
        rc = predict_batch(o, m, &b, b.x, (size_t)n, first);
        fflush(stdout);
        first += (size_t)n;
    }
    if (rc == 0 && n < 0)
        rc = 1, fprintf(stderr, "%s: --input: %s\n", CMD, err);
    ffnn_cli_csv_close(s);
    return batches_end(&b, rc);
}

static int run_predict(void *ctx, const ffnn_model *m)
{
    const predict_options *o = ctx;
    if (!o->model.data && strcmp(o->input_path, "-") == 0)
        return predict_stdin(o, m);
    predict_input in = {NULL, NULL, NULL, 0};
    size_t features = ffnn_model_input_size(m);
    if (!o->model.data && ffnn_cli_model_has_table(m)) {
        fprintf(stderr, "%s: --input takes the network's %zu inputs as numbers, but this model "
                "encodes a table's columns (categories, missing cells): give its raw rows "
                "with --data FILE.csv\n", CMD, features);
        return 1;
    }
    int rc = o->model.data ? read_table(o, m, &in) : read_input(o, features, &in);
    if (rc == 0 && o->model.data)
        print_header(o, m, ffnn_model_output_size(m));

    if (rc == 0 && in.images && ffnn_dataset_features(in.images) != features) {
        fprintf(stderr, "%s: --input %s: expected images of %zu pixels (the model's inputs), "
                "found %zu\n", CMD, o->input_path, features,
                ffnn_dataset_features(in.images));
        rc = 1;
    }
    if (rc == 0)
        rc = predict_all(o, m, &in);
    ffnn_dataset_free(in.images);
    ffnn_dataset_free(in.table);
    free(in.x);
    return rc;
}

/* --input or --data, not both */
static int check_predict(void *ctx)
{
    const predict_options *o = ctx;
    if (!o->input_path == !o->model.data)
        return o->input_path ? (fprintf(stderr, "%s: --input and --data exclude each other\n",
                                        CMD), 2)
                             : ffnn_cli_missing(CMD, "--input FILE or --data FILE");
    return 0;
}

int ffnn_cli_predict(int argc, char **argv)
{
    static const ffnn_cli_model_command predict = {
        CMD, predict_longopts, ffnn_cli_predict_usage, predict_option, check_predict,
        run_predict,
    };
    predict_options o;
    memset(&o, 0, sizeof o);
    o.device = FFNN_DEVICE_CPU;
    return ffnn_cli_run_model_command(&predict, argc, argv, &o, &o.model, &o.table);
}
