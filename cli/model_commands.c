/*
 * model_commands.c - the subcommands that work on model files:
 *   ffnn eval    --model FILE [--data DIR]     loss, accuracy, per-class accuracy,
 *                                              confusion matrix on the test set
 *   ffnn predict --model FILE --input FILE     one CSV line per input
 *   ffnn info    FILE                          architecture, tensors, metadata
 * and the model-file parts of ffnn train (--init, --save). Inference runs on the
 * CPU reference (ffnn_model_evaluate / ffnn_model_predict); this file parses
 * options and prints.
 */
#define _POSIX_C_SOURCE 200809L
#include "model_commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv_input.h"
#include "default_data.h"

static const char usage_eval[] =
    "usage: ffnn eval --model FILE [options]\n"
    "\n"
    "Evaluate a saved model on the test set of an IDX directory (t10k-images-idx3-ubyte\n"
    "and t10k-labels-idx1-ubyte, each raw or .gz) with the CPU reference and print the\n"
    "mean loss, the accuracy, the accuracy per class and the confusion matrix (rows:\n"
    "true class, columns: predicted class).\n"
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

static const char usage_predict[] =
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

static const char usage_info[] =
    "usage: ffnn info FILE\n"
    "\n"
    "Describe a model file (safetensors): architecture, parameter count, each\n"
    "tensor's name, dtype and shape, and the metadata. The file is fully checked\n"
    "(as by eval and predict); an invalid file is reported, with the offset or the\n"
    "tensor at fault.\n"
    "\n"
    "options:\n"
    "  -h, --help     this help\n";

/* ------------------------------------------------------------ options */

typedef struct model_options {
    const char *cmd;         /* "ffnn eval" ...                      */
    const char *model_path;
    const char *data_dir;
    const char *input_path;
    int loss_given;
    ffnn_loss loss;
    size_t batch;
} model_options;

enum { OPT_MODEL = 256, OPT_DATA, OPT_INPUT, OPT_LOSS, OPT_BATCH };

static const struct option eval_options[] = {
    {"model", required_argument, NULL, OPT_MODEL}, {"data", required_argument, NULL, OPT_DATA},
    {"loss", required_argument, NULL, OPT_LOSS},   {"batch", required_argument, NULL, OPT_BATCH},
    {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
};

static const struct option predict_options[] = {
    {"model", required_argument, NULL, OPT_MODEL}, {"input", required_argument, NULL, OPT_INPUT},
    {"loss", required_argument, NULL, OPT_LOSS},   {"batch", required_argument, NULL, OPT_BATCH},
    {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
};

static const struct option info_options[] = {
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One option; 0, or 2 on a usage error (message printed). */
static int model_option(model_options *o, int c, const char *arg)
{
    char *end = NULL;
    long long v;

    switch (c) {
    case OPT_MODEL: o->model_path = arg; return 0;
    case OPT_DATA: o->data_dir = arg; return 0;
    case OPT_INPUT: o->input_path = arg; return 0;
    case OPT_LOSS:
        if (ffnn_loss_from_name(arg, &o->loss) != FFNN_OK) {
            fprintf(stderr, "%s: --loss: %s\n", o->cmd, ffnn_last_error());
            return 2;
        }
        o->loss_given = 1;
        return 0;
    case OPT_BATCH:
        errno = 0;
        v = strtoll(arg, &end, 10);
        if (errno || end == arg || *end != '\0' || v < 1 || v > (1 << 20)) {
            fprintf(stderr, "%s: --batch expects an integer in [1, 1048576], found '%s'\n",
                    o->cmd, arg);
            return 2;
        }
        o->batch = (size_t)v;
        return 0;
    default:
        fprintf(stderr, "%s: see '%s --help'\n", o->cmd, o->cmd);
        return 2;
    }
}

/* Parse argv; -1 when --help was printed, 0 to go on, 2 on a usage error. */
static int parse_options(model_options *o, int argc, char **argv,
                         const struct option *longopts, const char *usage)
{
    int c, rc;

    optind = 1;
    argv[0] = (char *)o->cmd; /* getopt's messages name the command */
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return -1;
        }
        if ((rc = model_option(o, c, optarg)) != 0)
            return rc;
    }
    return 0;
}

/* A required option that is missing: a usage error. */
static int missing(const model_options *o, const char *option)
{
    fprintf(stderr, "%s: %s is required (see '%s --help')\n", o->cmd, option, o->cmd);
    return 2;
}

/* Load --model; the loss is the file's unless --loss was given. */
static int load_model(model_options *o, ffnn_model **m, ffnn_model_file_info *info)
{
    if (ffnn_model_load(o->model_path, m, info) != FFNN_OK) {
        fprintf(stderr, "%s: %s%s\n", o->cmd, strcmp(o->cmd, "ffnn info") ? "--model: " : "",
                ffnn_last_error());
        return 1;
    }
    if (!o->loss_given)
        o->loss = info->loss;
    return 0;
}

static int lib_error(const model_options *o, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", o->cmd, what, ffnn_last_error());
    return 1;
}

/* ------------------------------------------------------------ eval */

static void print_per_class(const uint64_t *confusion, int classes)
{
    printf("\nper-class accuracy:\n  class  samples  correct  accuracy\n");
    for (int t = 0; t < classes; t++) {
        uint64_t total = 0, right = confusion[(size_t)t * (size_t)classes + (size_t)t];
        for (int p = 0; p < classes; p++)
            total += confusion[(size_t)t * (size_t)classes + (size_t)p];
        if (total)
            printf("  %5d  %7llu  %7llu   %6.2f%%\n", t, (unsigned long long)total,
                   (unsigned long long)right, 100.0 * (double)right / (double)total);
        else
            printf("  %5d  %7d  %7d        -\n", t, 0, 0);
    }
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

static void print_eval(const model_options *o, const ffnn_model *m, const char *data,
                       size_t count, double loss, const uint64_t *confusion)
{
    int classes = ffnn_model_class_count(m);
    uint64_t right = 0;
    char arch[512];

    for (int c = 0; c < classes; c++)
        right += confusion[(size_t)c * (size_t)classes + (size_t)c];
    ffnn_model_arch_string(m, arch, sizeof arch);
    printf("model: %s (arch %s, loss %s%s)\n", o->model_path, arch, ffnn_loss_name(o->loss),
           o->loss_given ? ", from --loss" : "");
    printf("data: %s (%zu test samples), device: cpu (reference)\n", data, count);
    printf("test_loss %.4f  test_acc %.2f%% (%llu/%zu)\n", loss,
           100.0 * (double)right / (double)count, (unsigned long long)right, count);
    print_per_class(confusion, classes);
    print_confusion(confusion, classes);
}

/* The test set of --data, or of the default data directory. */
static int load_test_set(const model_options *o, ffnn_dataset **test, char *description,
                         size_t size)
{
    char dir[4096];

    if (o->data_dir && strncmp(o->data_dir, "synth:", 6) == 0) {
        snprintf(description, size, "%s", o->data_dir);
        if (ffnn_dataset_synthetic(o->data_dir, 1, NULL, test) != FFNN_OK)
            return lib_error(o, "--data");
        return 0;
    }
    if (o->data_dir) {
        snprintf(dir, sizeof dir, "%s", o->data_dir);
        snprintf(description, size, "%s", o->data_dir);
    } else if (ffnn_cli_find_default_data(dir, sizeof dir, description, size, stderr) != 0) {
        return 1;
    }
    if (ffnn_dataset_load_idx_dir(dir, NULL, test) != FFNN_OK)
        return lib_error(o, "loading the test set");
    return 0;
}

static int run_eval(model_options *o, const ffnn_model *m)
{
    ffnn_dataset *test = NULL;
    uint64_t *confusion = NULL;
    char description[512];
    double loss = 0.0;
    int classes = ffnn_model_class_count(m), rc;

    if ((rc = load_test_set(o, &test, description, sizeof description)) != 0)
        return rc;
    confusion = calloc((size_t)classes * (size_t)classes, sizeof *confusion);
    if (!confusion)
        rc = 1, fprintf(stderr, "%s: out of memory for a %d x %d matrix\n", o->cmd, classes,
                        classes);
    else if (ffnn_model_evaluate(m, o->loss, test, o->batch, &loss, confusion) != FFNN_OK)
        rc = lib_error(o, "evaluating");
    else if (ffnn_dataset_target_width(test) > 0 && o->loss == FFNN_LOSS_MSE)
        printf("data: %s (%zu test samples), device: cpu (reference)\ntest_loss %.6f "
               "(regression: no accuracy)\n", description, ffnn_dataset_count(test), loss);
    else
        print_eval(o, m, description, ffnn_dataset_count(test), loss, confusion);
    free(confusion);
    ffnn_dataset_free(test);
    return rc;
}

static int cmd_eval(int argc, char **argv)
{
    model_options o = {"ffnn eval", NULL, NULL, NULL, 0, FFNN_LOSS_SOFTMAX_CE, 1024};
    ffnn_model_file_info info;
    ffnn_model *m = NULL;
    int rc = parse_options(&o, argc, argv, eval_options, usage_eval);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (optind < argc) {
        fprintf(stderr, "ffnn eval: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (!o.model_path)
        return missing(&o, "--model FILE");
    if ((rc = load_model(&o, &m, &info)) == 0)
        rc = run_eval(&o, m);
    ffnn_model_free(m);
    return rc;
}

/* ------------------------------------------------------------ predict */

/* The inputs: IDX images (scaled by 1/255 batch by batch) or CSV rows. */
typedef struct predict_input {
    ffnn_dataset *images; /* IDX input, or NULL                     */
    float *x;             /* CSV input [rows, features], or NULL    */
    size_t rows;
} predict_input;

/* IDX (gzip or 00 00 magic) or CSV, by the first bytes. */
static int read_input(const model_options *o, size_t features, predict_input *in)
{
    int is_stdin = strcmp(o->input_path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(o->input_path, "rb");
    unsigned char magic[2] = {0xff, 0xff};
    char err[768];
    int rc = 0;

    if (!f) {
        fprintf(stderr, "%s: --input %s: %s\n", o->cmd, o->input_path, strerror(errno));
        return 1;
    }
    if (!is_stdin) {
        size_t got = fread(magic, 1, 2, f);
        rewind(f);
        if (got == 2 && ((magic[0] == 0x1f && magic[1] == 0x8b) || (!magic[0] && !magic[1]))) {
            fclose(f);
            if (ffnn_dataset_load_idx(o->input_path, NULL, &in->images) != FFNN_OK)
                return lib_error(o, "--input");
            in->rows = ffnn_dataset_count(in->images);
            return 0;
        }
    }
    if (ffnn_cli_read_csv(f, is_stdin ? "<stdin>" : o->input_path, features, &in->x,
                          &in->rows, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --input: %s\n", o->cmd, err);
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

static int predict_all(const model_options *o, const ffnn_model *m, const predict_input *in)
{
    size_t features = ffnn_model_input_size(m), width = ffnn_model_output_size(m);
    size_t chunk = in->rows < o->batch ? in->rows : o->batch;
    float *scratch = malloc((chunk ? chunk : 1) * features * sizeof *scratch);
    float *p = malloc((chunk ? chunk : 1) * width * sizeof *p);
    int *cls = malloc((chunk ? chunk : 1) * sizeof *cls), rc = 0;

    if (!scratch || !p || !cls)
        rc = 1, fprintf(stderr, "%s: out of memory for a batch of %zu\n", o->cmd, chunk);
    for (size_t first = 0; rc == 0 && first < in->rows; first += chunk) {
        size_t n = in->rows - first < chunk ? in->rows - first : chunk;
        const float *x = input_rows(in, first, n, features, scratch);
        if (ffnn_model_predict(m, o->loss, x, n, p, cls) != FFNN_OK)
            rc = lib_error(o, "predicting");
        else
            print_predictions(p, cls, n, width);
    }
    free(scratch);
    free(p);
    free(cls);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        rc = 1, fprintf(stderr, "%s: writing stdout: %s\n", o->cmd, strerror(errno));
    return rc;
}

static int run_predict(const model_options *o, const ffnn_model *m)
{
    predict_input in = {NULL, NULL, 0};
    size_t features = ffnn_model_input_size(m);
    int rc = read_input(o, features, &in);

    if (rc == 0 && in.images && ffnn_dataset_features(in.images) != features) {
        fprintf(stderr, "%s: --input %s: expected images of %zu pixels (the model's inputs), "
                "found %zu\n", o->cmd, o->input_path, features,
                ffnn_dataset_features(in.images));
        rc = 1;
    }
    if (rc == 0)
        rc = predict_all(o, m, &in);
    ffnn_dataset_free(in.images);
    free(in.x);
    return rc;
}

static int cmd_predict(int argc, char **argv)
{
    model_options o = {"ffnn predict", NULL, NULL, NULL, 0, FFNN_LOSS_SOFTMAX_CE, 1024};
    ffnn_model_file_info info;
    ffnn_model *m = NULL;
    int rc = parse_options(&o, argc, argv, predict_options, usage_predict);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (optind < argc) {
        fprintf(stderr, "ffnn predict: unexpected argument '%s' (see --help)\n", argv[optind]);
        return 2;
    }
    if (!o.model_path)
        return missing(&o, "--model FILE");
    if (!o.input_path)
        return missing(&o, "--input FILE");
    if ((rc = load_model(&o, &m, &info)) == 0)
        rc = run_predict(&o, m);
    ffnn_model_free(m);
    return rc;
}

/* ------------------------------------------------------------ info */

static void print_tensors(ffnn_model *m)
{
    char name[64], shape[64];

    printf("tensors (dtype F32, little-endian):\n");
    for (int i = 0; i < ffnn_model_layer_count(m); i++) {
        size_t in = 0, out = 0, fan_in = 0;
        ffnn_activation act = FFNN_ACT_IDENTITY;
        ffnn_layer_kind kind = FFNN_LAYER_DENSE;
        int has_bias = 0, same = 0;
        char what[64] = "";
        ffnn_model_layer(m, i, &in, &out, &act, &has_bias);
        ffnn_model_layer_kind(m, i, &kind, &fan_in, &same);
        if (kind == FFNN_LAYER_LOCAL1D)
            snprintf(what, sizeof what, "local1d R=%zu %s, ", fan_in, same ? "same" : "valid");
        snprintf(name, sizeof name, "layers.%d.weight", i);
        snprintf(shape, sizeof shape, "[%zu, %zu]", out, fan_in);
        printf("  %-20s %-14s layer %d: %s%zu -> %zu, %s%s\n", name, shape, i, what, in, out,
               ffnn_activation_name(act), has_bias ? "" : ", no bias");
        snprintf(name, sizeof name, "layers.%d.bias", i);
        snprintf(shape, sizeof shape, "[%zu]", out);
        if (has_bias)
            printf("  %-20s %s\n", name, shape);
    }
}

static void print_info(const char *path, ffnn_model *m, const ffnn_model_file_info *info)
{
    char arch[4096];
    struct stat st;

    ffnn_model_arch_string(m, arch, sizeof arch);
    printf("file: %s", path);
    if (stat(path, &st) == 0)
        printf(" (%lld bytes, safetensors)", (long long)st.st_size);
    printf("\narch: %s\nlayers: %d, inputs: %zu, outputs: %zu\nparameters: %zu\n", arch,
           ffnn_model_layer_count(m), ffnn_model_input_size(m), ffnn_model_output_size(m),
           ffnn_model_parameter_count(m));
    print_tensors(m);
    printf("metadata:\n  format        ffnn-model\n  arch          %s\n  loss          %s\n",
           arch, ffnn_loss_name(info->loss));
    printf("  ffnn_version  %s\n", info->ffnn_version[0] ? info->ffnn_version : "(absent)");
}

static int cmd_info(int argc, char **argv)
{
    model_options o = {"ffnn info", NULL, NULL, NULL, 0, FFNN_LOSS_SOFTMAX_CE, 1024};
    ffnn_model_file_info info;
    ffnn_model *m = NULL;
    int rc = parse_options(&o, argc, argv, info_options, usage_info);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (argc - optind != 1) {
        fprintf(stderr, "ffnn info: expected one model file, found %d arguments (see "
                "--help)\n", argc - optind);
        return 2;
    }
    o.model_path = argv[optind];
    if ((rc = load_model(&o, &m, &info)) == 0)
        print_info(o.model_path, m, &info);
    ffnn_model_free(m);
    return rc;
}

/* ------------------------------------------------------------ dispatch */

int ffnn_cli_is_model_command(const char *name)
{
    return ffnn_cli_model_command_usage(name) != NULL;
}

const char *ffnn_cli_model_command_usage(const char *name)
{
    if (strcmp(name, "eval") == 0)
        return usage_eval;
    if (strcmp(name, "predict") == 0)
        return usage_predict;
    if (strcmp(name, "info") == 0)
        return usage_info;
    return NULL;
}

int ffnn_cli_model_command(int argc, char **argv)
{
    if (strcmp(argv[0], "eval") == 0)
        return cmd_eval(argc, argv);
    if (strcmp(argv[0], "predict") == 0)
        return cmd_predict(argc, argv);
    return cmd_info(argc, argv);
}

/* ------------------------------------------------------------ train --init / --save */

/* 1 when a and b have the same inputs and layers. */
static int same_arch(const ffnn_model *a, const ffnn_model *b)
{
    if (ffnn_model_input_size(a) != ffnn_model_input_size(b) ||
        ffnn_model_layer_count(a) != ffnn_model_layer_count(b))
        return 0;
    for (int i = 0; i < ffnn_model_layer_count(a); i++) {
        size_t in[2], out[2], fan_in[2];
        ffnn_activation act[2];
        ffnn_layer_kind kind[2];
        int bias[2], same[2];
        ffnn_model_layer(a, i, &in[0], &out[0], &act[0], &bias[0]);
        ffnn_model_layer(b, i, &in[1], &out[1], &act[1], &bias[1]);
        ffnn_model_layer_kind(a, i, &kind[0], &fan_in[0], &same[0]);
        ffnn_model_layer_kind(b, i, &kind[1], &fan_in[1], &same[1]);
        if (in[0] != in[1] || out[0] != out[1] || act[0] != act[1] || bias[0] != bias[1] ||
            kind[0] != kind[1] || fan_in[0] != fan_in[1] || same[0] != same[1])
            return 0;
    }
    return 1;
}

/* --arch, when given with --init, must name the file's architecture. */
static int check_arch_matches(const char *arch, const char *init_path, const ffnn_model *m)
{
    ffnn_model *want = NULL;
    char a[4096], b[4096];
    int rc = 0;

    if (ffnn_model_create(arch, &want) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --arch: %s\n", ffnn_last_error());
        return 1;
    }
    ffnn_model_arch_string(want, a, sizeof a);
    ffnn_model_arch_string(m, b, sizeof b);
    if (!same_arch(want, m)) {
        fprintf(stderr, "ffnn train: --arch %s does not match the architecture %s of --init "
                "%s (leave --arch out to use the file's)\n", a, b, init_path);
        rc = 1;
    }
    ffnn_model_free(want);
    return rc;
}

int ffnn_cli_train_model(const char *init_path, const char *arch, const char *default_arch,
                         uint64_t seed, int loss_given, ffnn_loss *loss, ffnn_model **out)
{
    ffnn_model_file_info info;

    if (!init_path) {
        if (ffnn_model_create(arch ? arch : default_arch, out) != FFNN_OK) {
            fprintf(stderr, "ffnn train: --arch: %s\n", ffnn_last_error());
            return 1;
        }
        if (ffnn_model_init(*out, seed) != FFNN_OK) {
            fprintf(stderr, "ffnn train: initialising weights: %s\n", ffnn_last_error());
            return 1;
        }
        return 0;
    }
    if (ffnn_model_load(init_path, out, &info) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --init: %s\n", ffnn_last_error());
        return 1;
    }
    if (!loss_given)
        *loss = info.loss;
    return arch ? check_arch_matches(arch, init_path, *out) : 0;
}

int ffnn_cli_check_save_path(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    struct stat st;

    if (path[0] == '\0' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) ||
        (slash && slash[1] == '\0')) {
        fprintf(stderr, "ffnn train: --save '%s': expected a file name, found a directory\n",
                path);
        return 1;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK) != 0) {
        fprintf(stderr, "ffnn train: --save %s: cannot write in the directory %s: %s\n", path,
                dir, strerror(errno));
        return 1;
    }
    return 0;
}

int ffnn_cli_save_trained(ffnn_trainer *trainer, ffnn_model *model, const char *path,
                          ffnn_loss loss, FILE *info)
{
    if (ffnn_trainer_sync_model(trainer) != FFNN_OK) {
        fprintf(stderr, "ffnn train: copying the trained parameters back: %s\n",
                ffnn_last_error());
        return 1;
    }
    if (ffnn_model_save(model, path, loss) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --save: %s\n", ffnn_last_error());
        return 1;
    }
    fprintf(info, "saved the model to %s (%zu parameters, loss %s)\n", path,
            ffnn_model_parameter_count(model), ffnn_loss_name(loss));
    fflush(info);
    return 0;
}
