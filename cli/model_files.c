/*
 * model_files.c - model files on the command line (model_files.h): loading one for
 * eval, predict and info, and the model-file parts of ffnn train (--init, --arch
 * checked against it, --save).
 */
#define _POSIX_C_SOURCE 200809L
#include "model_files.h"
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ffnn_cli_load_model(const char *cmd, const char *opt, const char *path, ffnn_model **m,
                        ffnn_model_file_info *info)
{
    if (ffnn_model_load(path, m, info) != FFNN_OK) {
        fprintf(stderr, "%s: %s%s%s\n", cmd, opt ? opt : "", opt ? ": " : "",
                ffnn_last_error());
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ train --init / --save */

int ffnn_cli_same_arch(const ffnn_model *a, const ffnn_model *b)
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
        size_t k[2] = {0, 0}, n[2][64], d[2][64]; /* embedding tables */
        if (kind[0] == FFNN_LAYER_EMBEDDING &&
            (ffnn_model_embedding(a, i, &k[0], n[0], d[0], 64) != FFNN_OK ||
             ffnn_model_embedding(b, i, &k[1], n[1], d[1], 64) != FFNN_OK || k[0] != k[1] ||
             k[0] > 64 || memcmp(n[0], n[1], k[0] * sizeof **n) != 0 ||
             memcmp(d[0], d[1], k[0] * sizeof **d) != 0))
            return 0;
    }
    return 1;
}

int ffnn_cli_compare_arch(const char *arch, const ffnn_model *m, char **given, char **found)
{
    ffnn_model *want = NULL;
    int differs = 0;
    *given = *found = NULL;
    if (ffnn_model_create(arch, &want) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --arch: %s\n", ffnn_last_error());
        return -1;
    }
    if (!ffnn_cli_same_arch(want, m)) {
        *given = ffnn_cli_arch_string(want);
        *found = ffnn_cli_arch_string(m);
        differs = 1;
    }
    ffnn_model_free(want);
    return differs;
}

/* --arch, when given with --init, must name the file's architecture. */
static int check_arch_matches(const char *arch, const char *init_path, const ffnn_model *m)
{
    char *a, *b;
    int differs = ffnn_cli_compare_arch(arch, m, &a, &b);
    if (differs > 0)
        fprintf(stderr, "ffnn train: --arch %s does not match the architecture %s of --init "
                "%s (leave --arch out to use the file's)\n", a ? a : arch, b ? b : "?",
                init_path);
    free(a);
    free(b);
    return differs != 0;
}

/* arch with the embedding layer of default_arch (the data's: a table with embedded
 * columns) after its input width when arch has none: "12-64relu-2" ->
 * "12-embed100x21-64relu-2"; else arch itself. *owned: what to free (or NULL). */
static const char *with_embedding(const char *arch, const char *default_arch, char **owned)
{
    const char *dash = strchr(arch, '-'), *emb = default_arch ? strchr(default_arch, '-') : NULL;
    *owned = NULL;
    if (!dash || !emb || strncmp(emb + 1, "embed", 5) != 0 || strncmp(dash + 1, "embed", 5) == 0)
        return arch;
    const char *emb_end = strchr(emb + 1, '-');
    const size_t head = (size_t)(dash - arch);
    const size_t token = emb_end ? (size_t)(emb_end - emb) : strlen(emb);
    char *s = malloc(strlen(arch) + token + 1);
    if (!s)
        return arch;
    memcpy(s, arch, head);
    memcpy(s + head, emb, token);              /* "-embed..." */
    strcpy(s + head + token, dash);            /* "-64relu-2" */
    return *owned = s;
}

int ffnn_cli_train_model(const char *init_path, const char *arch, const char *default_arch,
                         uint64_t seed, int loss_given, ffnn_loss *loss, ffnn_model **out)
{
    ffnn_model_file_info info;

    if (!init_path) {
        char *owned = NULL;
        const char *use = arch ? with_embedding(arch, default_arch, &owned) : default_arch;
        ffnn_status st = ffnn_model_create(use, out);
        free(owned);
        if (st != FFNN_OK) {
            fprintf(stderr, "ffnn train: --arch: %s\n", ffnn_last_error());
            return 1;
        }
        if (ffnn_model_init(*out, seed) != FFNN_OK) {
            fprintf(stderr, "ffnn train: initialising weights: %s\n", ffnn_last_error());
            return 1;
        }
        return 0;
    }
    if (ffnn_cli_load_model("ffnn train", "--init", init_path, out, &info) != 0)
        return 1;
    if (!loss_given)
        *loss = info.loss;
    return arch ? check_arch_matches(arch, init_path, *out) : 0;
}

int ffnn_cli_save_trained(ffnn_trainer *trainer, ffnn_model *model, const char *path,
                          ffnn_loss loss, FILE *info)
{
    (void)trainer; /* the model reads the trainer's weights itself (or holds the best epoch's) */
    if (ffnn_model_save(model, path) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --save: %s\n", ffnn_last_error());
        return 1;
    }
    fprintf(info, "saved the model to %s (%zu parameters, loss %s)\n", path,
            ffnn_model_parameter_count(model), ffnn_loss_name(loss));
    fflush(info);
    return 0;
}

int ffnn_cli_model_option(const char *cmd, ffnn_cli_model_options *o, int c, const char *arg,
                          int *rc)
{
    long long v;
    switch (c) {
    case FFNN_CLI_OPT_MODEL: o->path = arg; *rc = 0; return 1;
    case FFNN_CLI_OPT_DATA: o->data = arg; *rc = 0; return 1;
    case FFNN_CLI_OPT_JSON: o->json = 1; *rc = 0; return 1;
    case FFNN_CLI_OPT_LOSS:
        o->loss_given = 1;
        *rc = ffnn_cli_loss(cmd, "--loss", arg, &o->loss);
        return 1;
    case FFNN_CLI_OPT_BATCH: /* the library's range of an evaluation batch */
        *rc = ffnn_cli_limit_int(cmd, "--batch", ffnn_train_config_limit("eval_batch_size"), arg,
                                 &v) != 0 ? 2 : 0;
        if (*rc == 0)
            o->batch = (size_t)v;
        return 1;
    default: return 0;
    }
}

int ffnn_cli_open_model(const char *cmd, ffnn_cli_model_options *o, ffnn_model **m)
{
    ffnn_model_file_info info;
    if (ffnn_cli_load_model(cmd, "--model", o->path, m, &info) != 0)
        return 1;
    if (!o->loss_given)
        o->loss = info.loss;
    else if (ffnn_model_set_loss(*m, o->loss) != FFNN_OK) /* how the outputs are read */
        return ffnn_cli_fail(cmd, "--loss");
    return 0;
}
