/*
 * cmd_predict.c - ffnn predict --model FILE --input FILE [--loss NAME] [--batch N]:
 * a saved model on IDX images or CSV rows (csv_input.c), one CSV line per input on
 * stdout: the predicted class, then the probabilities (or the raw outputs for mse).
 * Inference runs on the library's CPU reference (ffnn_model_predict).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "csv_input.h"
#include "model_files.h"
#include "options.h"

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
    "                 accepted. '-' reads CSV from stdin\n"
    "  --loss NAME    ce | bce | mse: how outputs become probabilities (default: the\n"
    "                 loss recorded in the model file)\n"
    "  --batch N      inputs per forward pass (default 1024)\n"
    "  -h, --help     this help\n";

typedef struct predict_options {
    ffnn_cli_model_options model; /* --model, --loss, --batch                   */
    const char *input_path;       /* --input FILE ('-': CSV on stdin)              */
} predict_options;

enum { OPT_INPUT = FFNN_CLI_OPT_NEXT };

static const struct option predict_longopts[] = {
    FFNN_CLI_MODEL_LONGOPTS,
    {"input", required_argument, NULL, OPT_INPUT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int predict_option(void *ctx, int c, const char *arg)
{
    predict_options *o = ctx;
    int rc;

    if (ffnn_cli_model_option(CMD, &o->model, c, arg, &rc))
        return rc;
    if (c == OPT_INPUT) {
        o->input_path = arg;
        return 0;
    }
    return 2; /* not in predict_longopts */
}

/* The inputs: IDX images (scaled by 1/255 batch by batch) or CSV rows. */
typedef struct predict_input {
    ffnn_dataset *images; /* IDX input, or NULL                     */
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

/* Rows [first, first + n) as floats [n, features]: into scratch for images. */
static const float *input_rows(const predict_input *in, size_t first, size_t n,
                               size_t features, float *scratch)
{
    const uint8_t *px;

    if (in->x)
        return in->x + first * features;
    px = ffnn_dataset_images(in->images) + first * features;
    for (size_t k = 0; k < n * features; k++)
        scratch[k] = (float)px[k] / 255.0f;
    return scratch;
}

/* One line per row: class, then the values p [n, width]. */
static void print_predictions(const float *p, const int *cls, size_t n, size_t width)
{
    for (size_t b = 0; b < n; b++) {
        printf("%d", cls[b]);
        for (size_t j = 0; j < width; j++)
            printf(",%.6g", (double)p[b * width + j]);
        putchar('\n');
    }
}

static int predict_all(const predict_options *o, const ffnn_model *m, const predict_input *in)
{
    size_t features = ffnn_model_input_size(m), width = ffnn_model_output_size(m);
    size_t chunk = in->rows < o->model.batch ? in->rows : o->model.batch;
    float *scratch = malloc((chunk ? chunk : 1) * features * sizeof *scratch);
    float *p = malloc((chunk ? chunk : 1) * width * sizeof *p);
    int *cls = malloc((chunk ? chunk : 1) * sizeof *cls), rc = 0;

    if (!scratch || !p || !cls)
        rc = 1, fprintf(stderr, "%s: out of memory for a batch of %zu\n", CMD, chunk);
    for (size_t first = 0; rc == 0 && first < in->rows; first += chunk) {
        size_t n = in->rows - first < chunk ? in->rows - first : chunk;
        const float *x = input_rows(in, first, n, features, scratch);
        if (ffnn_model_predict(m, o->model.loss, x, n, p, cls) != FFNN_OK)
            rc = ffnn_cli_fail(CMD, "predicting");
        else
            print_predictions(p, cls, n, width);
    }
    free(scratch);
    free(p);
    free(cls);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        rc = 1, fprintf(stderr, "%s: writing stdout: %s\n", CMD, strerror(errno));
    return rc;
}

static int run_predict(const predict_options *o, const ffnn_model *m)
{
    predict_input in = {NULL, NULL, 0};
    size_t features = ffnn_model_input_size(m);
    int rc = read_input(o, features, &in);

    if (rc == 0 && in.images && ffnn_dataset_features(in.images) != features) {
        fprintf(stderr, "%s: --input %s: expected images of %zu pixels (the model's inputs), "
                "found %zu\n", CMD, o->input_path, features,
                ffnn_dataset_features(in.images));
        rc = 1;
    }
    if (rc == 0)
        rc = predict_all(o, m, &in);
    ffnn_dataset_free(in.images);
    free(in.x);
    return rc;
}

int ffnn_cli_predict(int argc, char **argv)
{
    predict_options o = {FFNN_CLI_MODEL_OPTIONS_DEFAULT, NULL};
    ffnn_model *m = NULL;
    int operands;
    int rc = ffnn_cli_getopt(CMD, argc, argv, predict_longopts, ffnn_cli_predict_usage,
                             predict_option, &o, &operands);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (operands < argc)
        return ffnn_cli_unexpected(CMD, argv[operands]);
    if (!o.model.path)
        return ffnn_cli_missing(CMD, "--model FILE");
    if (!o.input_path)
        return ffnn_cli_missing(CMD, "--input FILE");
    if ((rc = ffnn_cli_open_model(CMD, &o.model, &m)) == 0)
        rc = run_predict(&o, m);
    ffnn_model_free(m);
    return rc;
}
