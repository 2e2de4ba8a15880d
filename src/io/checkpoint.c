/*
 * checkpoint.c - training checkpoints as safetensors files (docs/FORMATS.md,
 * "Checkpoints"): an ffnn_run_state (io/run_state.h) written to a file and read
 * back. Nothing here knows the trainer: train/checkpoint.c fills a run state
 * from it to save, and checks and consumes the one read here to resume.
 *
 * Tensors, in the data section in this order:
 *   train.step_losses                          F64 [step]   the epoch's losses so far
 *   layers.<i>.weight / layers.<i>.bias        F32          the parameters (model file names)
 *   optimizer.layers.<i>.weight.<state> ...    F32          the optimizer state, one arena per
 *                                                           state (momentum_buffer; exp_avg,
 *                                                           exp_avg_sq), PyTorch's names
 *   ema.layers.<i>.weight ...                  F32          the EMA weights (ema_decay > 0)
 *   early_stopping.best.layers.<i>.weight ...  F32          early stopping's best epoch's
 *                                                           weights (once it has one)
 * __metadata__ (strings; io/checkpoint_meta.c): format "ffnn-checkpoint", ffnn_version, arch, loss, the
 * configuration a run must share to continue exactly (optimizer and its
 * hyperparameters, learning_rate, batch_size, seed, shuffle), epochs, the
 * training set (train_count, train_crc32) and the position: epoch, step,
 * steps_per_epoch, optimizer_steps, shuffle_rng (xoshiro256** state at the start
 * of the epoch, four decimal uint64 joined by commas); the optional settings and
 * the plateau schedule's and early stopping's state.
 *
 * Writing refuses NaN/Inf in a parameter or state value and goes through
 * io/atomic_file.c. Reading runs the safetensors checks of io/safetensors.c,
 * then checks every key and tensor here, and only then allocates the buffers
 * sized from the file and reads all data into them.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/train_options.h"
#include "io/atomic_file.h"
#include "io/checkpoint_meta.h"
#include "io/run_state.h"
#include "io/safetensors.h"

#define CK_LOSSES "train.step_losses"
#define CK_STATE_PREFIX "optimizer."
#define CK_EMA_PREFIX "ema."
#define CK_BEST_PREFIX "early_stopping.best."
enum { CK_CHUNK = 4096 };

/* ------------------------------------------------------------ names */

/* PyTorch's name of state k of an optimizer (torch.optim's state_dict keys). */
static const char *ck_state_name(ffnn_optimizer kind, size_t k)
{
    if (kind == FFNN_OPT_MOMENTUM)
        return "momentum_buffer";
    return k == 0 ? "exp_avg" : "exp_avg_sq";
}

/* The arenas of a checkpoint's floats, each laid out like the parameters: 0 the
 * parameters, 1 .. states the optimizer's states, then the EMA weights (when
 * ema), then early stopping's best weights. The tensor of layer i's weight or
 * bias in arena k, e.g. "optimizer.layers.0.weight.exp_avg", into name. */
static void ck_tensor_name(char *name, size_t size, size_t k, size_t states, ffnn_optimizer opt,
                           int ema, size_t i, int bias)
{
    const char *prefix = "", *state = "";
    if (k >= 1 && k <= states)
        prefix = CK_STATE_PREFIX, state = ck_state_name(opt, k - 1);
    else if (k == states + 1 && ema)
        prefix = CK_EMA_PREFIX;
    else if (k > states)
        prefix = CK_BEST_PREFIX;
    snprintf(name, size, "%slayers.%zu.%s%s%s", prefix, i, bias ? "bias" : "weight",
             *state ? "." : "", state);
}

void ffnn_checkpoint_float_text(float f, char *buf, size_t size)
{
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, size, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            return;
    }
}

/* ------------------------------------------------------------ the tensors */

/* "layers.<i>.weight" / "layers.<i>.bias" in name [len] (i plain decimal). */
static int ck_parse_param(const char *name, size_t len, long *layer, int *bias)
{
    char buf[48], *end;
    if (len >= sizeof buf || len < 8 || strncmp(name, "layers.", 7) != 0)
        return 0;
    memcpy(buf, name, len);
    buf[len] = '\0';
    const char *p = buf + 7;
    if (*p < '0' || *p > '9' || (*p == '0' && p[1] != '.'))
        return 0;
    errno = 0;
    *layer = strtol(p, &end, 10);
    if (errno || *end != '.')
        return 0;
    *bias = strcmp(end + 1, "bias") == 0;
    return *bias || strcmp(end + 1, "weight") == 0;
}

/* Where each tensor of the file goes. */
typedef struct ck_layout {
    const ffnn_model *m;
    char *arch;                /* m's canonical architecture, for messages      */
    size_t states;             /* optimizer states: 0, 1 or 2                 */
    size_t ema;                /* 1: EMA weights (ema.layers...) after them    */
    int es_on;                 /* the metadata has "early_stopping"            */
    size_t best;               /* 1: early stopping's best weights after those */
    unsigned char *seen;       /* [states + ema + best + 1][2 * layers]        */
    const st_tensor *losses;   /* train.step_losses                            */
} ck_layout;

/* optimizer.layers.<i>.<weight|bias>.<state>, ema.layers.<i>.<weight|bias> or
 * early_stopping.best.layers.<i>.<weight|bias>: F32 with the parameter's shape;
 * param_offset becomes the offset into the state arenas. */
static ffnn_status ck_match_state(const st_reader *r, ck_layout *lay, st_tensor *t)
{
    const int is_best = strncmp(t->name, CK_BEST_PREFIX, strlen(CK_BEST_PREFIX)) == 0;
    const int is_ema = strncmp(t->name, CK_EMA_PREFIX, strlen(CK_EMA_PREFIX)) == 0;
    const char *p = t->name + strlen(is_best  ? CK_BEST_PREFIX
                                     : is_ema ? CK_EMA_PREFIX
                                              : CK_STATE_PREFIX);
    const char *dot = is_ema || is_best ? p + strlen(p) : strrchr(p, '.');
    long i = 0;
    int bias = 0;
    size_t k = 0;
    ffnn_optimizer kind = lay->states == 1 ? FFNN_OPT_MOMENTUM : FFNN_OPT_ADAM;
    while (!is_ema && !is_best && k < lay->states &&
           (!dot || strcmp(dot + 1, ck_state_name(kind, k)) != 0))
        k++;
    if (is_ema && !lay->ema)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": EMA weights in a checkpoint "
                            "without \"ema_decay\"", t->name);
    if (is_best && !lay->best)
        return ffnn_st_fail(r, "unexpected tensor \"%s\": early stopping's best weights in a "
                            "checkpoint %s", t->name,
                            lay->es_on ? "with \"early_stopping_best_epoch\" 0 (no best epoch "
                                         "yet)"
                                       : "without \"early_stopping\"");
    if (is_ema)
        k = lay->states; /* the arena after the optimizer states */
    if (is_best)
        k = lay->states + lay->ema; /* the last arena */
    if (is_best && (!ck_parse_param(p, (size_t)(dot - p), &i, &bias) ||
                    i >= lay->m->layer_count || (bias && !lay->m->layers[i].has_bias)))
        return ffnn_st_fail(r, "unexpected tensor \"%s\": the best epoch's weights of "
                            "architecture %s are " CK_BEST_PREFIX "layers.<i>.<weight|bias>",
                            t->name, lay->arch);
    if ((!is_ema && !is_best && k == lay->states) ||
        !ck_parse_param(p, (size_t)(dot - p), &i, &bias) ||
        i >= lay->m->layer_count || (bias && !lay->m->layers[i].has_bias))
        return ffnn_st_fail(r, "unexpected tensor \"%s\": the optimizer state of architecture "
                            "%s with optimizer %s is optimizer.layers.<i>.<weight|bias>.<%s%s%s>",
                            t->name, lay->arch, lay->states == 0 ? "sgd" : ffnn_optimizer_name(kind),
                            lay->states == 0 ? "none" : ck_state_name(kind, 0),
                            lay->states == 2 ? "|" : "",
                            lay->states == 2 ? ck_state_name(kind, 1) : "");
    const ffnn_layer *l = &lay->m->layers[i];
    char text[160];
    ffnn_st_shape_text(t->shape, text, sizeof text);
    if (strcmp(t->dtype->name, "F32") != 0)
        return ffnn_st_fail(r, "tensor \"%s\": dtype %s, expected F32", t->name, t->dtype->name);
    size_t shape[2];
    const int rank = bias ? 1 : ffnn_layer_weight_shape(l, shape);
    if (bias)
        shape[0] = l->out;
    if ((int)t->rank != rank || t->dims[0] != shape[0] || (rank == 2 && t->dims[1] != shape[1])) {
        char want[64];
        if (rank == 1)
            snprintf(want, sizeof want, "[%zu]", shape[0]);
        else
            snprintf(want, sizeof want, "[%zu, %zu]", shape[0], shape[1]);
        return ffnn_st_fail(r, "tensor \"%s\": shape %s, expected %s (the shape of its "
                            "parameter in architecture %s)", t->name, text, want, lay->arch);
    }
    t->param_offset = k * lay->m->parameter_count + (bias ? l->bias_offset : l->weight_offset);
    lay->seen[(k + 1) * 2 * (size_t)lay->m->layer_count + 2 * (size_t)i + (size_t)bias] = 1;
    return FFNN_OK;
}

/* 1 when name is a tensor of the arenas after the parameters: an optimizer
 * state, the EMA weights or early stopping's best weights. */
static int ck_is_arena(const char *name)
{
    return strncmp(name, CK_STATE_PREFIX, strlen(CK_STATE_PREFIX)) == 0 ||
           strncmp(name, CK_EMA_PREFIX, strlen(CK_EMA_PREFIX)) == 0 ||
           strncmp(name, CK_BEST_PREFIX, strlen(CK_BEST_PREFIX)) == 0;
}

/* Every tensor is a parameter, an optimizer state (or EMA or best weights) or
 * the step losses, and every one of those is there. */
static ffnn_status ck_match_tensors(const st_reader *r, ck_layout *lay, const ck_meta *meta)
{
    const ffnn_model *m = lay->m;
    size_t L = (size_t)m->layer_count;
    ffnn_status st = FFNN_OK;

    lay->seen = calloc((lay->states + lay->ema + lay->best + 1) * 2 * L, 1);
    if (!lay->seen)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", r->path);
    for (size_t k = 0; k < r->count && st == FFNN_OK; k++) {
        st_tensor *t = &r->tensors[k];
        if (strcmp(t->name, CK_LOSSES) == 0) {
            lay->losses = t;
            if (strcmp(t->dtype->name, "F64") != 0 || t->rank != 1 || t->dims[0] != meta->step)
                st = ffnn_st_fail(r, "tensor \"" CK_LOSSES "\": expected F64 [%zu] (one loss "
                                  "per step done in epoch %d), found %s of rank %d",
                                  meta->step, meta->epoch, t->dtype->name, t->rank);
        } else if (ck_is_arena(t->name)) {
            st = ck_match_state(r, lay, t);
        } else if (strncmp(t->name, "layers.", 7) == 0) {
            st = ffnn_st_match_tensor(r, m, lay->arch, t, lay->seen);
        } else {
            st = ffnn_st_fail(r, "unexpected tensor \"%s\": a checkpoint holds " CK_LOSSES
                              ", layers.<i>.<weight|bias>, " CK_STATE_PREFIX
                              "layers.<i>.<weight|bias>.<state>, " CK_EMA_PREFIX "layers... "
                              "and " CK_BEST_PREFIX "layers...", t->name);
        }
    }
    if (st == FFNN_OK && !lay->losses)
        st = ffnn_st_fail(r, "missing tensor \"" CK_LOSSES "\" (F64 [%zu])", meta->step);
    ffnn_optimizer kind = meta->cfg.optimizer;
    char name[128], why[64];
    for (size_t k = 0; k <= lay->states + lay->ema + lay->best && st == FFNN_OK; k++)
        for (size_t i = 0; i < L && st == FFNN_OK; i++)
            for (int bias = 0; bias <= m->layers[i].has_bias && st == FFNN_OK; bias++)
                if (!lay->seen[k * 2 * L + 2 * i + (size_t)bias]) {
                    const int ema = k == lay->states + 1 && lay->ema;
                    const int best = k > lay->states + lay->ema;
                    ck_tensor_name(name, sizeof name, k, lay->states, kind, (int)lay->ema, i,
                                   bias);
                    snprintf(why, sizeof why, "%s", ema ? ", ema_decay" : "");
                    if (best)
                        snprintf(why, sizeof why, ", early_stopping_best_epoch %d",
                                 meta->es_best_epoch);
                    st = ffnn_st_fail(r, "missing tensor \"%s\" (architecture %s, optimizer "
                                      "%s%s)", name, lay->arch, ffnn_optimizer_name(kind), why);
                }
    return st;
}

/* Decode little-endian float64 in place: bytes [8 n] -> v [n]; the index of the
 * first non-finite value, or n. */
static size_t ck_decode_f64(double *v, size_t n)
{
    size_t bad = n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b = (const uint8_t *)(v + i);
        uint64_t u = 0;
        for (int k = 7; k >= 0; k--)
            u = u << 8 | b[k];
        memcpy(v + i, &u, 8);
        if (bad == n && !isfinite(v[i]))
            bad = i;
    }
    return bad;
}

/* The data: parameters into params [n], states (with the EMA and best weights)
 * into state [(states + ema + best) * n], the step losses into losses [step];
 * NaN and Inf are refused. */
static ffnn_status ck_read_data(st_reader *r, const ck_layout *lay, float *params, float *state,
                                double *losses)
{
    char what[160];
    ffnn_status st;

    for (size_t k = 0; k < r->count; k++) {
        const st_tensor *t = &r->tensors[k];
        int is_loss = t == lay->losses;
        int is_state = !is_loss && ck_is_arena(t->name);
        size_t size = is_loss ? 8 : 4, n = (size_t)((t->end - t->begin) / size), bad;
        void *dst = is_loss ? (void *)losses
                            : (void *)((is_state ? state : params) + t->param_offset);
        uint64_t at = ffnn_st_data_start(r) + t->begin;
        if (n == 0)
            continue;
        snprintf(what, sizeof what, "tensor \"%.120s\"", t->name);
        if ((st = ffnn_st_read_at(r, at, dst, n * size, what)) != FFNN_OK)
            return st;
        bad = is_loss ? ck_decode_f64(dst, n) : ffnn_st_decode_f32(dst, n);
        if (bad < n)
            return ffnn_st_fail_at(r, at + size * bad, "tensor \"%s\" element %zu is %g: "
                                   "expected a finite number", t->name, bad,
                                   is_loss ? ((double *)dst)[bad] : (double)((float *)dst)[bad]);
    }
    return FFNN_OK;
}

/* ------------------------------------------------------------ reading */

ffnn_status ffnn_checkpoint_read(const char *path, const ffnn_train_config *base,
                                 ffnn_run_state *s)
{
    st_reader r;
    ck_meta meta;
    ck_layout lay;
    ffnn_model *model = NULL;
    float *state = NULL;    /* [(states + ema + best) * parameter_count] or NULL */
    double *losses = NULL;  /* [meta.step] (at least one element)  */
    ffnn_status st;

    if (!s || !path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_checkpoint_read: NULL argument");
    memset(s, 0, sizeof *s);
    memset(&r, 0, sizeof r);
    memset(&lay, 0, sizeof lay);
    r.path = path;
    r.kind = "checkpoint";
    if ((st = ffnn_st_read_layout(&r)) == FFNN_OK &&
        (st = ffnn_ck_read_metadata(&r, base, &meta)) == FFNN_OK &&
        ffnn_model_create_layout(meta.arch, &model) != FFNN_OK)
        st = ffnn_fail_context_at(FFNN_ERR_FORMAT, path, ": header: __metadata__ \"arch\"");
    if (st == FFNN_OK) {
        size_t arch_size = ffnn_arch_format_size(model->layer_count);
        lay.m = model;
        lay.states = ffnn_optimizer_state_count(meta.cfg.optimizer);
        lay.ema = meta.cfg.ema_decay > 0.0f;
        lay.es_on = meta.cfg.early_stopping > 0;
        lay.best = lay.es_on && meta.es_best_epoch > 0;
        lay.arch = malloc(arch_size);
        if (!lay.arch)
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", path);
        else {
            ffnn_model_arch_string(model, lay.arch, arch_size);
            st = ck_match_tensors(&r, &lay, &meta);
        }
    }
    /* matched: every buffer below is bounded by the file's tensors */
    if (st == FFNN_OK && (st = ffnn_model_alloc_params(model)) != FFNN_OK)
        st = ffnn_fail_context_at(st, path, "");
    if (st == FFNN_OK) {
        size_t n = model->parameter_count;
        const size_t arenas = lay.states + lay.ema + lay.best;
        losses = malloc((meta.step ? meta.step : 1) * sizeof *losses);
        state = arenas ? malloc(arenas * n * sizeof *state) : NULL;
        if (!losses || (arenas && !state))
            st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for the optimizer state",
                           path);
    }
    if (st == FFNN_OK)
        st = ck_read_data(&r, &lay, model->params, state, losses);
    if (st == FFNN_OK) {
        s->model = model;
        s->params = model->params;
        s->cfg = meta.cfg;
        s->train_count = meta.train_count;
        s->train_crc32 = meta.train_crc32;
        s->steps_per_epoch = meta.steps_per_epoch;
        s->epoch = meta.epoch;
        s->step = meta.step;
        s->optimizer_steps = meta.optimizer_steps;
        memcpy(s->epoch_rng, meta.rng, sizeof s->epoch_rng);
        s->step_losses = losses;
        const size_t n = model->parameter_count;
        /* one block: ffnn_run_state_free frees the first of these that is there */
        s->opt_state = lay.states ? state : NULL;
        s->ema = lay.ema ? state + lay.states * n : NULL;
        s->es_best = lay.best ? state + (lay.states + lay.ema) * n : NULL;
        s->plateau = meta.plateau;
        s->plateau_epoch = meta.plateau_epoch;
        if (lay.es_on) {
            s->es_epoch = meta.es_epoch;
            s->es_best_epoch = meta.es_best_epoch;
            s->es_best_loss = meta.es_best_epoch > 0 ? meta.es_best_loss : 0.0;
        }
        if (!lay.states && !lay.ema && !lay.best)
            free(state);
        snprintf(s->ffnn_version, sizeof s->ffnn_version, "%s", meta.version);
    } else {
        ffnn_model_free(model);
        free(state);
        free(losses);
    }
    free(lay.seen);
    free(lay.arch);
    ffnn_st_close(&r);
    return st;
}

void ffnn_run_state_free(ffnn_run_state *s)
{
    if (!s)
        return;
    /* all were allocated by ffnn_checkpoint_read (opt_state, ema and es_best in
     * one block, which starts with the first of them that is there) */
    ffnn_model_free((ffnn_model *)s->model);
    free((void *)s->step_losses);
    free((void *)(s->opt_state ? s->opt_state : s->ema ? s->ema : s->es_best));
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ writing */

typedef struct ck_writer {
    const char *header;     /* [header_size] */
    size_t header_size;
    const double *losses;   /* [loss_count]  */
    size_t loss_count;
    const float *params;    /* [param_count] */
    size_t param_count;
    const float *state;     /* [state_count]: the optimizer state arenas, after the parameters */
    size_t state_count;
    const float *ema;       /* [ema_count]: the EMA weights (0 or param_count)     */
    size_t ema_count;
    const float *best;      /* [best_count]: early stopping's best weights, last
                               (0 or param_count)                                */
    size_t best_count;
} ck_writer;

/* Add item to obj under key; 0 (item freed) when out of memory. */
static int ck_add(cJSON *obj, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(obj, key, item))
        return 1;
    cJSON_Delete(item);
    return 0;
}

static int ck_add_tensor(cJSON *root, const char *name, const char *dtype, const double *dims,
                         int rank, double begin, double end)
{
    double offsets[2] = {begin, end};
    cJSON *t = cJSON_CreateObject();
    if (!ck_add(root, name, t))
        return 0;
    return cJSON_AddStringToObject(t, "dtype", dtype) &&
           ck_add(t, "shape", cJSON_CreateDoubleArray(dims, rank)) &&
           ck_add(t, "data_offsets", cJSON_CreateDoubleArray(offsets, 2));
}

/* The tensors: step losses at 0, then the parameters, then each state arena
 * (ck_tensor_name's order: the optimizer's, the EMA weights, the best weights). */
static int ck_fill_tensors(cJSON *root, const ffnn_model *m, ffnn_optimizer opt, size_t step,
                           int ema, int best)
{
    size_t n = m->parameter_count, states = ffnn_optimizer_state_count(opt);
    double losses_dims[1] = {(double)step}, base = 8.0 * (double)step;
    char name[128];

    if (!ck_add_tensor(root, CK_LOSSES, "F64", losses_dims, 1, 0.0, base))
        return 0;
    for (size_t k = 0; k <= states + (ema ? 1 : 0) + (best ? 1 : 0); k++) {
        for (int i = 0; i < m->layer_count; i++) {
            const ffnn_layer *l = &m->layers[i];
            size_t shape[2];
            const int rank = ffnn_layer_weight_shape(l, shape);
            for (int bias = 0; bias <= l->has_bias; bias++) {
                double dims[2] = {(double)(bias ? l->out : shape[0]), (double)shape[1]};
                size_t first = k * n + (bias ? l->bias_offset : l->weight_offset);
                size_t count = bias ? l->out : ffnn_layer_weights(l);
                ck_tensor_name(name, sizeof name, k, states, opt, ema, (size_t)i, bias);
                if (!ck_add_tensor(root, name, "F32", dims, bias ? 1 : rank,
                                   base + 4.0 * (double)first,
                                   base + 4.0 * (double)(first + count)))
                    return 0;
            }
        }
    }
    return 1;
}

/* The checkpoint's keys (ffnn_st_fill_fn; ctx: the run state). */
static int ck_fill_header(cJSON *root, const char *arch, const void *ctx)
{
    const ffnn_run_state *s = ctx;
    cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
    return md && ffnn_ck_fill_metadata(md, s, arch) &&
           ck_fill_tensors(root, s->model, s->cfg.optimizer, s->step, s->ema != NULL,
                           s->es_best != NULL);
}

/* The header text padded with spaces to a multiple of 8 bytes; *text malloc'd. */
static ffnn_status ck_build_header(const ffnn_run_state *s, char **text, size_t *size)
{
    return ffnn_st_build_header(s->model, ck_fill_header, s, "a checkpoint header", text, size);
}

/* Length, header, the losses as little-endian float64, the parameters and then
 * the optimizer state as little-endian float32. */
static ffnn_status ck_fill(ffnn_atomic_file *af, void *user)
{
    const ck_writer *w = user;
    uint8_t buf[8 * CK_CHUNK]; /* the losses, CK_CHUNK at a time */
    ffnn_status st;

    if ((st = ffnn_st_write_start(af, w->header, w->header_size)) != FFNN_OK)
        return st;
    for (size_t first = 0; first < w->loss_count; first += CK_CHUNK) {
        size_t n = w->loss_count - first < CK_CHUNK ? w->loss_count - first : CK_CHUNK;
        for (size_t k = 0; k < n; k++) {
            uint64_t u;
            memcpy(&u, w->losses + first + k, 8);
            for (int b = 0; b < 8; b++)
                buf[8 * k + (size_t)b] = (uint8_t)(u >> (8 * b));
        }
        if ((st = ffnn_atomic_file_write(af, buf, 8 * n)) != FFNN_OK)
            return st;
    }
    if ((st = ffnn_st_write_f32(af, w->params, w->param_count)) != FFNN_OK ||
        (st = ffnn_st_write_f32(af, w->state, w->state_count)) != FFNN_OK ||
        (st = ffnn_st_write_f32(af, w->ema, w->ema_count)) != FFNN_OK)
        return st;
    return ffnn_st_write_f32(af, w->best, w->best_count);
}

/* Refuse NaN and Inf in the parameters, the optimizer state, the EMA weights
 * and early stopping's best weights (a reader refuses them). */
static ffnn_status ck_check_finite(const char *path, const ffnn_run_state *s)
{
    const ffnn_model *m = s->model;
    ffnn_optimizer opt = s->cfg.optimizer;
    size_t n = m->parameter_count, states = ffnn_optimizer_state_count(opt);
    const int ema = s->ema != NULL;
    char name[128];
    for (size_t k = 0; k <= states + (size_t)ema + (s->es_best != NULL); k++)
        for (int i = 0; i < m->layer_count; i++) {
            const ffnn_layer *l = &m->layers[i];
            const float *arena = k == 0            ? s->params
                                 : k <= states     ? s->opt_state + (k - 1) * n
                                 : k == states + 1 && ema ? s->ema
                                                   : s->es_best;
            for (int bias = 0; bias <= l->has_bias; bias++) {
                const float *x = arena + (bias ? l->bias_offset : l->weight_offset);
                size_t count = bias ? l->out : ffnn_layer_weights(l);
                for (size_t e = 0; e < count; e++)
                    if (!isfinite(x[e])) {
                        ck_tensor_name(name, sizeof name, k, states, opt, ema, (size_t)i, bias);
                        return ffnn_fail(FFNN_ERR_NUMERIC,
                                         "%s: not written: epoch %d, step %zu: tensor \"%s\" "
                                         "element %zu is %g (the run diverged; the previous "
                                         "checkpoint, if any, is left as it was)", path,
                                         s->epoch, s->step, name, e, (double)x[e]);
                    }
            }
        }
    return FFNN_OK;
}

ffnn_status ffnn_checkpoint_write(const char *path, const ffnn_run_state *s)
{
    if (!path || !s || !s->model || !s->params || (s->step && !s->step_losses) ||
        (ffnn_optimizer_state_count(s->cfg.optimizer) && !s->opt_state) ||
        (s->cfg.ema_decay > 0.0f) != (s->ema != NULL) ||
        (s->cfg.early_stopping > 0 && s->es_best_epoch > 0) != (s->es_best != NULL))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_checkpoint_write: NULL argument");
    size_t n = s->model->parameter_count;
    char *header = NULL;
    ck_writer w;
    memset(&w, 0, sizeof w);
    ffnn_status st = ck_check_finite(path, s);
    if (st == FFNN_OK && (st = ck_build_header(s, &header, &w.header_size)) == FFNN_OK) {
        w.header = header;
        w.losses = s->step_losses;
        w.loss_count = s->step;
        w.params = s->params;
        w.param_count = n;
        w.state = s->opt_state;
        w.state_count = ffnn_optimizer_state_count(s->cfg.optimizer) * n;
        w.ema = s->ema;
        w.ema_count = s->ema ? n : 0;
        w.best = s->es_best;
        w.best_count = s->es_best ? n : 0;
        st = ffnn_atomic_write(path, ck_fill, &w);
    }
    free(header);
    return st;
}
