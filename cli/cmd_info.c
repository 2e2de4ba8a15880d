/*
 * cmd_info.c - ffnn info FILE: a model file's architecture, parameter count,
 * tensors (name, dtype, shape) and metadata. The file is fully checked on loading,
 * as by eval and predict.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "ffnn.h"
#include "info_json.h"
#include "model_files.h"
#include "options.h"
#include "tabular.h"

#define CMD "ffnn info"

const char *const ffnn_cli_info_usage =
    "usage: ffnn info [--json] FILE\n"
    "\n"
    "Describe a model file (safetensors): architecture, parameter count, each\n"
    "tensor's name, dtype and shape, and the metadata. The file is fully checked\n"
    "(as by eval and predict); an invalid file is reported, with the offset or the\n"
    "tensor at fault.\n"
    "\n"
    "options:\n"
    "  --json         one JSON object (file, arch, layers, inputs, outputs,\n"
    "                 parameters, loss, ffnn_version, interrupted, class_names,\n"
    "                 standardized)\n"
    "  -h, --help     this help\n";

enum { OPT_JSON = 256 };

static const struct option info_longopts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int info_option(void *ctx, int c, const char *arg)
{
    (void)arg;
    if (c != OPT_JSON)
        return 2;
    *(int *)ctx = 1;
    return 0;
}

/* The tensors of the plain model m, each name after prefix ("" or "members.<i>."). */
static void print_layers(const ffnn_model *m, const char *prefix)
{
    char name[96], shape[64];
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
        snprintf(name, sizeof name, "%slayers.%d.weight", prefix, i);
        snprintf(shape, sizeof shape, "[%zu, %zu]", out, fan_in);
        if (kind == FFNN_LAYER_EMBEDDING) { /* [sum n_j d_j]: the tables one after another */
            size_t k = 0, n[64], d[64], total = 0;
            ffnn_model_embedding(m, i, &k, n, d, 64);
            for (size_t j = 0; j < k && j < 64; j++)
                total += n[j] * d[j];
            snprintf(what, sizeof what, "embedding of %zu code%s, ", k, k == 1 ? "" : "s");
            snprintf(shape, sizeof shape, "[%zu]", total);
        }
        printf("  %-20s %-14s layer %d: %s%zu -> %zu, %s%s\n", name, shape, i, what, in, out,
               ffnn_activation_name(act), has_bias ? "" : ", no bias");
        snprintf(name, sizeof name, "%slayers.%d.bias", prefix, i);
        snprintf(shape, sizeof shape, "[%zu]", out);
        if (has_bias)
            printf("  %-20s %s\n", name, shape);
    }
    const float *mean = NULL, *target_mean = NULL;
    ffnn_model_standardization(m, &mean, NULL, &target_mean, NULL);
    if (mean)
        printf("  %sstandardize.input.mean, .scale [%zu]\n", prefix, ffnn_model_input_size(m));
    if (target_mean)
        printf("  %sstandardize.target.mean, .scale [%zu]\n", prefix,
               ffnn_model_output_size(m));
}

/* The tensors of m; an ensemble's member by member. */
static void print_tensors(const ffnn_model *m)
{
    printf("tensors (dtype F32, little-endian):\n");
    if (!ffnn_model_member_count(m))
        print_layers(m, "");
    for (int i = 0; i < ffnn_model_member_count(m); i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "members.%d.", i);
        print_layers(ffnn_model_member(m, i), prefix);
    }
}

static void put_names(const ffnn_model *m);

static void print_info(const char *path, ffnn_model *m, const ffnn_model_file_info *info)
{
    char *arch = ffnn_cli_arch_string(m);
    struct stat st;

    if (!arch) {
        fprintf(stderr, "ffnn info: out of memory\n");
        return;
    }
    char *shown = malloc(4 * strlen(path) + 1);
    if (!shown) {
        fprintf(stderr, "ffnn info: out of memory\n");
        free(arch);
        return;
    }
    ffnn_escape_controls(path, shown, 4 * strlen(path) + 1);
    printf("file: %s", shown);
    free(shown);
    if (stat(path, &st) == 0)
        printf(" (%lld bytes, safetensors)", (long long)st.st_size);
    printf("\narch: %s\nlayers: %d, inputs: %zu, outputs: %zu\nparameters: %zu\n", arch,
           ffnn_model_layer_count(m), ffnn_model_input_size(m), ffnn_model_output_size(m),
           ffnn_model_parameter_count(m));
    print_tensors(m);
    if (ffnn_model_member_count(m)) {
        printf("metadata:\n  format        ffnn-ensemble\n  members       %d\n",
               ffnn_model_member_count(m));
        for (int i = 0; i < ffnn_model_member_count(m); i++) {
            char *a = ffnn_cli_arch_string(ffnn_model_member(m, i));
            printf("  member.%d.arch %s\n", i, a ? a : "?");
            free(a);
        }
        printf("  loss          %s\n", ffnn_loss_name(info->loss));
    } else {
        printf("metadata:\n  format        ffnn-model\n  arch          %s\n  loss          %s\n",
               arch, ffnn_loss_name(info->loss));
    }
    char text[4 * sizeof info->interrupted + 1];
    ffnn_escape_controls(info->ffnn_version[0] ? info->ffnn_version : "(absent)", text,
                         sizeof text);
    printf("  ffnn_version  %s\n", text);
    if (info->interrupted[0]) {
        ffnn_escape_controls(info->interrupted, text, sizeof text);
        printf("  interrupted   %s (training stopped early)\n", text);
    }
    if (ffnn_model_class_name(m, 0)) {
        printf("  class_names   ");
        put_names(m);
        putchar('\n');
    }
    const float *mean = NULL, *target_mean = NULL;
    ffnn_model_standardization(m, &mean, NULL, &target_mean, NULL);
    if (mean)
        printf("standardized: inputs (standardize.input.mean, .scale)%s\n",
               target_mean ? " and targets (standardize.target.mean, .scale)" : "");
    ffnn_cli_print_table(m, stdout);
    free(arch);
}

/* The class names, quoted, in brackets (untrusted text: printable ASCII only). */
static void put_names(const ffnn_model *m)
{
    putchar('[');
    for (int c = 0; c < ffnn_model_class_count(m); c++) {
        const char *s = ffnn_model_class_name(m, c);
        printf("%s\"", c ? ", " : "");
        for (size_t n = 0; s && *s && n < 64; s++, n++) {
            unsigned char ch = (unsigned char)*s;
            if (ch < 0x20 || ch > 0x7e)
                ch = '?';
            if (ch == '"' || ch == '\\')
                putchar('\\');
            putchar(ch);
        }
        putchar('"');
    }
    putchar(']');
}

/* The object of info_json.h and a newline; 0, or 1 with a message. */
static int print_json(const char *path, ffnn_model *m, const ffnn_model_file_info *info)
{
    char *text = ffnn_cli_info_json(path, m, info);
    if (!text) {
        fprintf(stderr, "%s: out of memory\n", CMD);
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

int ffnn_cli_info(int argc, char **argv)
{
    ffnn_model_file_info info;
    ffnn_model *m = NULL;
    int operands, json = 0;
    int rc = ffnn_cli_getopt(CMD, argc, argv, info_longopts, ffnn_cli_info_usage, info_option,
                             &json, &operands);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (argc - operands != 1) {
        fprintf(stderr, "%s: expected one model file, found %d arguments (see --help)\n", CMD,
                argc - operands);
        return 2;
    }
    if ((rc = ffnn_cli_load_model(CMD, NULL, argv[operands], &m, &info)) == 0 && json)
        rc = print_json(argv[operands], m, &info);
    else if (rc == 0)
        print_info(argv[operands], m, &info);
    ffnn_model_free(m);
    return rc;
}
