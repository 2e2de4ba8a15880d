/* model.h - the in-memory layout of ffnn_model (private to the library). */
#ifndef FFNN_MODEL_H
#define FFNN_MODEL_H

#include <stddef.h>

#include "ffnn.h"
#include "core/embedding.h"
#include "core/local1d.h"

/* What only a local1d layer has (src/core/local1d.h has the formulas). */
typedef struct ffnn_local1d_spec {
    size_t R;                     /* receptive field: inputs per output          */
    ffnn_local1d_padding padding; /* valid: out = in - R + 1; same: out = in      */
} ffnn_local1d_spec;

/* One layer: z = the kind's linear map of x (+ b), y = act(z). The fields above
 * `spec` mean the same for every kind; spec holds what only one kind has.
 * Offsets index the model's parameter arena. */
typedef struct ffnn_layer {
    ffnn_layer_kind kind;    /* FFNN_LAYER_DENSE, _LOCAL1D or _EMBEDDING        */
    size_t in, out;          /* input width, output width                      */
    size_t fan_in;           /* inputs per output: in (dense), R (local1d), 1
                                (embedding); W is [out, fan_in] (embedding:
                                [spec.embedding.weights], ffnn_layer_weights);
                                init bound 1/sqrt(fan_in)                      */
    ffnn_activation act;
    float act_param;         /* act's parameter (core/activation.h): leaky_relu's
                                negative slope, elu's alpha (the default when the
                                architecture string gives none); 0 for the others */
    int has_bias;
    int has_dropout;         /* 1: inverted dropout on the output while training
                                (architecture option ':dropoutP')                 */
    float dropout;           /* its probability P, in [0, 1) (0: the op runs, keeps
                                everything)                                        */
    size_t weight_offset;    /* W [ffnn_layer_weights] at params + weight_offset */
    size_t bias_offset;      /* b [out] at params + bias_offset (if has_bias)  */
    union {
        ffnn_local1d_spec local1d; /* kind FFNN_LAYER_LOCAL1D                  */
        ffnn_embedding_spec embedding; /* kind FFNN_LAYER_EMBEDDING (layer 0;
                                          its table array owned: ffnn_layers_free) */
    } spec;
} ffnn_layer;

/* The floats of layer l's weight: out * fan_in, or an embedding's sum n_j d_j. */
static inline size_t ffnn_layer_weights(const ffnn_layer *l)
{
    return l->kind == FFNN_LAYER_EMBEDDING ? l->spec.embedding.weights : l->out * l->fan_in;
}

/* The shape of layer l's weight in files (docs/FORMATS.md) into dims; its rank:
 * [out, fan_in] (2), or an embedding's [sum n_j d_j] (1: the tables' rows of
 * different widths one after another). */
static inline int ffnn_layer_weight_shape(const ffnn_layer *l, size_t dims[2])
{
    dims[0] = l->kind == FFNN_LAYER_EMBEDDING ? l->spec.embedding.weights : l->out;
    dims[1] = l->kind == FFNN_LAYER_EMBEDDING ? 1 : l->fan_in;
    return l->kind == FFNN_LAYER_EMBEDDING ? 1 : 2;
}

/* Free layers [count] and what they own (an embedding's tables). */
void ffnn_layers_free(ffnn_layer *layers, int count);

struct ffnn_model {
    size_t input_size;       /* features per sample                            */
    int layer_count;
    ffnn_layer *layers;      /* [layer_count], owned                           */
    size_t parameter_count;
    float *params;           /* [parameter_count], owned: per layer W then b    */
    /* z-score standardisation (model_meta.c), each owned or NULL: the network
     * sees (x - input_mean) / input_scale; a regression output o is reported
     * as o * target_scale + target_mean */
    float *input_mean, *input_scale;   /* [input_size]                     */
    float *target_mean, *target_scale; /* [output width]                   */
    char **class_names;      /* [class_name_count] original labels, or NULL   */
    int class_name_count;
    char *table;             /* the encoding of a table's columns into the inputs
                                (data/table.h) as its JSON text, owned, or NULL */
    /* the loss the model is trained with, which says how its outputs are read
     * (softmax, sigmoid, raw): set by ffnn_model_load, ffnn_trainer_create and
     * ffnn_model_set_loss; has_loss 0 until then */
    ffnn_loss loss;
    int has_loss;
    /* a trainer training this model (ffnn_trainer_create sets, free clears):
     * stale is 1 while its device parameters are newer than params, and
     * ffnn_model_fresh() then calls sync(owner) first */
    ffnn_status (*sync)(void *owner);
    void *owner;
    int stale;
    /* an ensemble model (core/ensemble.c): members [member_count] owned, each a
     * plain model with its own layers, parameters and standardisation; the
     * ensemble itself has no layers (layer_count 0, params NULL), its
     * input_size, output_width, loss, class names and table are the members';
     * parameter_count is their sum. member_count 0: a plain model. */
    struct ffnn_model **members;
    int member_count;
    size_t output_width;     /* an ensemble's outputs (plain: the last layer's) */
};

/* The output width of m: its last layer's, or an ensemble's members'. */
static inline size_t ffnn_model_out(const ffnn_model *m)
{
    return m->member_count ? m->output_width : m->layers[m->layer_count - 1].out;
}

/* FFNN_ERR_INVALID_ARGUMENT "WHAT: an ensemble model has no single network
 * (...)" when m is an ensemble, else FFNN_OK: for the calls that need one
 * network (training, the network-only forward, the standardisation setters). */
ffnn_status ffnn_model_refuse_ensemble(const ffnn_model *m, const char *what);

/* An ensemble's ffnn_model_arch_string: "ensemble of K: ARCH0, ARCH1, ...". */
size_t ffnn_ensemble_arch_string(const ffnn_model *m, char *buf, size_t buf_size);

/* The model of an architecture string without its parameters (params NULL):
 * what the file readers build first, to match a file's tensors against before
 * anything sized from the file is allocated. Errors as ffnn_model_create. */
ffnn_status ffnn_model_create_layout(const char *arch, ffnn_model **out);

/* Allocate m->params (zeroed), after the host memory check (core/memory.h).
 * Errors: FFNN_ERR_NO_MEMORY with the estimate and what is available. */
ffnn_status ffnn_model_alloc_params(ffnn_model *m);

/* Give m a copy of the JSON text of its input encoding (NULL: none); what
 * data/table.h's ffnn_table_to_json writes (the public ffnn_model_set_table of
 * data/table_json.c takes an ffnn_table). Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_model_set_table_json(ffnn_model *m, const char *json);

/* Bring params up to date with the trainer of m, if any (model_meta.c). Every
 * reader of params (forward, predict, evaluate, save, the pointer accessors)
 * calls it first. Errors: the trainer's (e.g. FFNN_ERR_CUDA). */
/* FFNN_OK when params holds the model's latest weights; FFNN_ERR_INVALID_ARGUMENT
 * while a trainer is inside an epoch and holds newer ones (the trainer copies
 * them into params at the end of every ffnn_trainer_run_epoch, _run_epoch_until
 * and _step call, and on ffnn_trainer_sync_model). Every reader of params through a const model
 * (forward, predict, evaluate, save, the predictor) calls it first: a const
 * model is never written (model_meta.c). */
ffnn_status ffnn_model_fresh(const ffnn_model *m);

/* Bring params up to date with the trainer of m, if any: the trainer's
 * parameters copied into m. Errors: the trainer's (e.g. FFNN_ERR_CUDA). */
ffnn_status ffnn_model_sync(ffnn_model *m);

/* The one rule pairing a loss with a network, applied by ffnn_trainer_create,
 * ffnn_model_predict, the model reader and ffnn_model_save alike (model_meta.c):
 * the loss is known; ce and bce apply softmax / the sigmoid to the logits
 * themselves, so the last layer has no activation; ce has at least 2 outputs.
 * Errors: FFNN_ERR_INVALID_ARGUMENT naming the rule and the way out. */
ffnn_status ffnn_model_check_loss(const ffnn_model *m, ffnn_loss loss);

/* Parse an architecture string into input_size and a layer array (offsets
 * filled in; *layers owned by the caller). Errors: FFNN_ERR_PARSE with the
 * 1-based column and token; FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_arch_parse(const char *arch, size_t *input_size, ffnn_layer **layers,
                            int *layer_count, size_t *parameter_count);

/* Print the canonical form of an architecture (inverse of ffnn_arch_parse) into
 * buf [buf_size] (truncated, NUL-terminated when buf_size > 0); returns the
 * length of the whole string, like snprintf. */
size_t ffnn_arch_format(size_t input_size, const ffnn_layer *layers, int layer_count,
                        char *buf, size_t buf_size);

/* Room for the canonical string of layer_count layers, NUL included. */
size_t ffnn_arch_format_size(int layer_count);

#endif
