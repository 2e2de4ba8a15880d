/*
 * cmd_export.c - ffnn export --model M.safetensors --onnx M.onnx: a model file as
 * an ONNX model (the library's ffnn_model_export_onnx: opset 17, the model's
 * standardisation, layers, activations and loss head; docs/INFERENCE.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "model_files.h"
#include "options.h"

#define CMD "ffnn export"

const char *const ffnn_cli_export_usage =
    "usage: ffnn export --model FILE --onnx OUT\n"
    "\n"
    "Write a model file (safetensors) as an ONNX model (opset 17) that onnxruntime,\n"
    "TensorRT or onnx2c run: input \"x\" float32 [batch, inputs] in the data's units,\n"
    "output \"y\" float32 [batch, outputs] as ffnn predict prints them (softmax or\n"
    "sigmoid probabilities, or regression outputs in the targets' units). The\n"
    "model's standardisation is the graph's first nodes; its class names, arch,\n"
    "loss and ffnn version are metadata_props. OUT is replaced atomically.\n"
    "\n"
    "options:\n"
    "  --model FILE   the model file (from ffnn train --save)\n"
    "  --onnx OUT     the ONNX file to write\n"
    "  -h, --help     this help\n";

enum { OPT_MODEL = 256, OPT_ONNX };

static const struct option export_longopts[] = {
    {"model", required_argument, NULL, OPT_MODEL},
    {"onnx", required_argument, NULL, OPT_ONNX},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef struct export_options {
    const char *model, *onnx;
} export_options;

static int export_option(void *ctx, int c, const char *arg)
{
    export_options *o = ctx;
    if (c == OPT_MODEL)
        o->model = arg;
    else if (c == OPT_ONNX)
        o->onnx = arg;
    else
        return 2;
    return 0;
}

int ffnn_cli_export(int argc, char **argv)
{
    export_options o = {NULL, NULL};
    ffnn_model *m = NULL;
    int operands;
    int rc = ffnn_cli_getopt(CMD, argc, argv, export_longopts, ffnn_cli_export_usage,
                             export_option, &o, &operands);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (operands < argc)
        return ffnn_cli_unexpected(CMD, argv[operands]);
    if (!o.model)
        return ffnn_cli_missing(CMD, "--model FILE");
    if (!o.onnx)
        return ffnn_cli_missing(CMD, "--onnx OUT");
    if (ffnn_cli_load_model(CMD, "--model", o.model, &m, NULL) != 0)
        return 1;
    if (ffnn_model_export_onnx(m, o.onnx) != FFNN_OK)
        rc = ffnn_cli_fail(CMD, "--onnx");
    else
        printf("wrote %s (ONNX opset 17)\n", o.onnx);
    ffnn_model_free(m);
    return rc;
}
