/* names.c - names of the public enums, both ways (used by the CLI and files). */
#include <string.h>

#include "core/error.h"

typedef struct name_entry {
    const char *name;
    int value;
} name_entry;

static const name_entry activation_names[] = {
    {"identity", FFNN_ACT_IDENTITY}, {"relu", FFNN_ACT_RELU},
    {"sigmoid", FFNN_ACT_SIGMOID},   {"tanh", FFNN_ACT_TANH},
    {"leaky_relu", FFNN_ACT_LEAKY_RELU}, {"elu", FFNN_ACT_ELU},
    {"softplus", FFNN_ACT_SOFTPLUS}, {"gelu", FFNN_ACT_GELU},
    {"gelu_tanh", FFNN_ACT_GELU_TANH}, {"silu", FFNN_ACT_SILU},
    {"mish", FFNN_ACT_MISH}, {"hardswish", FFNN_ACT_HARDSWISH},
};
static const name_entry loss_names[] = {
    {"ce", FFNN_LOSS_SOFTMAX_CE},  {"bce", FFNN_LOSS_SIGMOID_BCE}, {"mse", FFNN_LOSS_MSE},
};
static const name_entry device_names[] = {
    {"auto", FFNN_DEVICE_AUTO}, {"cpu", FFNN_DEVICE_CPU}, {"cuda", FFNN_DEVICE_CUDA},
};
static const name_entry kernels_names[] = {
    {"auto", FFNN_STRATEGY_AUTO},     {"tiled", FFNN_STRATEGY_TILED},
    {"naive", FFNN_STRATEGY_NAIVE},   {"cublas", FFNN_STRATEGY_CUBLAS},
    {"fused", FFNN_STRATEGY_FUSED},   {"graph", FFNN_STRATEGY_GRAPH},
    {"persistent", FFNN_STRATEGY_PERSISTENT}, {"cublaslt", FFNN_STRATEGY_CUBLASLT},
    {"reference", FFNN_STRATEGY_REFERENCE}, {"tune", FFNN_STRATEGY_TUNE},
    {"batched", FFNN_STRATEGY_BATCHED},
};
static const name_entry precision_names[] = {
    {"fp32", FFNN_PRECISION_FP32}, {"tf32", FFNN_PRECISION_TF32}, {"bf16", FFNN_PRECISION_BF16},
    {"tf32x3", FFNN_PRECISION_TF32X3},
};
static const name_entry optimizer_names[] = {
    {"sgd", FFNN_OPT_SGD}, {"momentum", FFNN_OPT_MOMENTUM}, {"adam", FFNN_OPT_ADAM},
    {"adamw", FFNN_OPT_ADAMW},
};

static const name_entry lr_schedule_names[] = {
    {"constant", FFNN_LR_CONSTANT}, {"step", FFNN_LR_STEP},     {"multistep", FFNN_LR_MULTISTEP},
    {"exponential", FFNN_LR_EXPONENTIAL}, {"cosine", FFNN_LR_COSINE},
    {"linear", FFNN_LR_LINEAR},     {"plateau", FFNN_LR_PLATEAU},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static ffnn_status lookup(const name_entry *table, size_t n, const char *what,
                          const char *name, int *out)
{
    char accepted[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (name && strcmp(table[i].name, name) == 0) {
            *out = table[i].value;
            return FFNN_OK;
        }
        strncat(accepted, i ? ", " : "", sizeof accepted - strlen(accepted) - 1);
        strncat(accepted, table[i].name, sizeof accepted - strlen(accepted) - 1);
    }
    return ffnn_fail(FFNN_ERR_PARSE, "unknown %s '%s' (expected one of: %s)", what,
                     name ? name : "(null)", accepted);
}

static const char *name_of(const name_entry *table, size_t n, int value)
{
    for (size_t i = 0; i < n; i++)
        if (table[i].value == value)
            return table[i].name;
    return "unknown";
}

#define ENUM_NAMES(type, table, what)                                          \
    ffnn_status type##_from_name(const char *name, type *out)                  \
    {                                                                          \
        int v = 0;                                                             \
        ffnn_status st = lookup(table, COUNT(table), what, name, &v);          \
        if (st == FFNN_OK)                                                     \
            *out = (type)v;                                                    \
        return st;                                                             \
    }                                                                          \
    const char *type##_name(type value) { return name_of(table, COUNT(table), (int)value); }

ENUM_NAMES(ffnn_activation, activation_names, "activation")
ENUM_NAMES(ffnn_loss, loss_names, "loss")
ENUM_NAMES(ffnn_device, device_names, "device")
ENUM_NAMES(ffnn_strategy, kernels_names, "strategy")
ENUM_NAMES(ffnn_precision, precision_names, "precision")
ENUM_NAMES(ffnn_optimizer, optimizer_names, "optimizer")
ENUM_NAMES(ffnn_lr_schedule, lr_schedule_names, "learning-rate schedule")
