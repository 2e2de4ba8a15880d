/*
 * arch.c - the architecture string: parse and print.
 *
 *   arch       := input ( '-' layer )+            e.g. "784-256relu-10",
 *                                                      "64-local5relu-local3samerelu-2"
 *   input      := positive integer                  features per sample
 *   layer      := kind [activation] [':nobias'] [':dropout' P]
 *   kind       := width                             a dense layer of width outputs
 *               | 'local' R                         a 1-D locally connected layer,
 *                                                   'valid': out = in - R + 1
 *               | 'local' R 'same'                  the same with (R-1)/2 zeros padded
 *                                                   on each side: out = in (R odd)
 *               | 'embed' N 'x' D ('_' N 'x' D)*    first layer only: an embedding
 *                                                   layer (core/embedding.h), one
 *                                                   table per code, the last inputs;
 *                                                   nothing may follow it
 *   activation := name [param]                     (default identity)
 *   name       := relu | sigmoid | tanh | leaky_relu | elu | softplus | gelu
 *               | gelu_tanh | silu | mish | hardswish | identity
 *   param      := a decimal, leaky_relu and elu only: leaky_relu's negative slope
 *                 (>= 0, default 0.01: '256leaky_relu0.2'), elu's alpha (> 0,
 *                 default 1: '128elu0.5'); no sign, exponent allowed ('1e-3' is not:
 *                 '-' separates layers)
 *   P          := a decimal in [0, 1): inverted dropout of the layer's output while
 *                 training (core/dropout.h; not after the last layer)
 *
 * A local1d layer (src/core/local1d.h) gives every output m its own R weights
 * W[m, :] over the inputs m - pad .. m - pad + R - 1 and its own bias b[m]; R is a
 * positive integer. Whitespace is not allowed. Errors name the 1-based column and
 * the token: an unknown activation or option, a width or R of 0 or above 2^24, an
 * even R with 'same', a 'valid' R wider than the layer's input (out < 1), an
 * activation parameter out of range or after an activation without one (the
 * message also names the parameter's own column).
 * Canonical form: no 'identity', no 'valid', a parameter only when it is not the
 * default (the shortest decimal that reads back as the same float);
 * ffnn_arch_parse(ffnn_arch_format(.))
 * gives the same layers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/activation.h"
#include "core/error.h"
#include "core/model.h"

enum { FFNN_MAX_WIDTH = 1 << 24, FFNN_MAX_LAYERS = 1024 };
/* The range of activation parameters and non-zero dropout probabilities. */
#define FFNN_PARAM_MIN 1e-6f
#define FFNN_PARAM_MAX 1e6f

typedef struct token {
    const char *start; /* into the arch string */
    size_t length;
    size_t column;     /* 1-based */
} token;

static ffnn_status token_error(const char *arch, const token *t, const char *what)
{
    return ffnn_fail(FFNN_ERR_PARSE,
                     "architecture '%s': column %zu, token '%.*s': %s", arch,
                     t->column, (int)t->length, t->start, what);
}

/* Parse the decimal number at t->start + from (what: "width" or "receptive field
 * R", for messages); *digits receives its length. */
static ffnn_status parse_number(const char *arch, const token *t, size_t from,
                                const char *what, size_t *number, size_t *digits)
{
    size_t n = 0;
    unsigned long long value = 0;
    while (from + n < t->length && t->start[from + n] >= '0' && t->start[from + n] <= '9') {
        value = value * 10 + (unsigned long long)(t->start[from + n] - '0');
        if (value > FFNN_MAX_WIDTH) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s larger than the limit %d", what, FFNN_MAX_WIDTH);
            return token_error(arch, t, msg);
        }
        n++;
    }
    if (n == 0) {
        char msg[128];
        snprintf(msg, sizeof msg, t->start[0] == 'e' ? "expected a %s (a positive integer), "
                                                      "e.g. embed100x16"
                                  : from ? "expected a %s (a positive integer) after 'local', "
                                           "e.g. local3"
                                         : "expected a %s (a positive integer, or local<R>) first",
                 what);
        return token_error(arch, t, msg);
    }
    if (value == 0) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s must be at least 1, found 0", what);
        return token_error(arch, t, msg);
    }
    *number = (size_t)value;
    *digits = n;
    return FFNN_OK;
}

static ffnn_status parse_width(const char *arch, const token *t, size_t *width,
                               size_t *digits)
{
    /* a decimal point after the digits: most likely an activation's parameter
     * written as a layer of its own (8leaky_relu-0.2) */
    size_t n = 0;
    while (n < t->length && t->start[n] >= '0' && t->start[n] <= '9')
        n++;
    if (n > 0 && n < t->length && t->start[n] == '.')
        return token_error(arch, t, "a width is a whole number (an activation's parameter "
                                    "follows its name directly, e.g. 256leaky_relu0.2)");
    return parse_number(arch, t, 0, "width", width, digits);
}

/* The activation at t->start + at, len characters: a name (letters and '_'), then
 * for leaky_relu and elu an optional decimal parameter (core/activation.h). */
static ffnn_status parse_activation(const char *arch, const token *t, size_t at, size_t len,
                                    ffnn_layer *layer)
{
    const char *text = t->start + at;
    size_t name_len = 0;
    while (name_len < len && ((text[name_len] >= 'a' && text[name_len] <= 'z') ||
                              text[name_len] == '_'))
        name_len++;
    char name[32];
    const char *unknown = layer->kind == FFNN_LAYER_LOCAL1D
                              ? "unknown activation (expected local<R>, then optionally "
                                "'same', then relu, sigmoid, tanh, leaky_relu[SLOPE], elu[ALPHA], "
                                "softplus, gelu, gelu_tanh, silu, mish, hardswish or identity)"
                              : "unknown activation (expected relu, sigmoid, tanh, "
                                "leaky_relu[SLOPE], elu[ALPHA], softplus, gelu, gelu_tanh, silu, "
                                "mish, hardswish or identity)";
    if (name_len == 0 || name_len >= sizeof name)
        return token_error(arch, t, unknown);
    memcpy(name, text, name_len);
    name[name_len] = '\0';
    if (ffnn_activation_from_name(name, &layer->act) != FFNN_OK)
        return token_error(arch, t, unknown);
    layer->act_param = ffnn_act_default_param(layer->act);
    if (name_len == len)
        return FFNN_OK;
    /* the parameter: its own column in the message */
    const size_t param_len = len - name_len, column = t->column + at + name_len;
    char msg[256];
    if (!ffnn_act_has_param(layer->act)) {
        snprintf(msg, sizeof msg, "%s takes no parameter, found '%.*s' at column %zu (only "
                 "leaky_relu and elu do, e.g. 256leaky_relu0.2, 128elu0.5)", name,
                 (int)param_len, text + name_len, column);
        return token_error(arch, t, msg);
    }
    const int leaky = layer->act == FFNN_ACT_LEAKY_RELU;
    char num[32], *stop = NULL;
    float v = -1.0f;
    if (param_len < sizeof num) {
        memcpy(num, text + name_len, param_len);
        num[param_len] = '\0';
        errno = 0;
        v = strtof(num, &stop); /* as ffnn_arch_format reads it back */
        /* digits and '.' (and an exponent) only: no sign, hex, inf or nan; in range */
        if (errno || *stop || strpbrk(num, "xXnNiI+"))
            v = -1.0f;
    }
    /* 0 (leaky_relu), or within [FFNN_PARAM_MIN, FFNN_PARAM_MAX]: the canonical form
     * then needs no exponent ('-' separates layers) and fits its room */
    if (!((leaky && v == 0.0f) || (v >= FFNN_PARAM_MIN && v <= FFNN_PARAM_MAX))) {
        snprintf(msg, sizeof msg, "%s at column %zu: '%.*s' is not %s (e.g. %s)",
                 leaky ? "leaky_relu's negative slope" : "elu's alpha", column,
                 (int)param_len, text + name_len,
                 leaky ? "0 or a decimal in [1e-6, 1e6] (the derivative is read from the "
                         "output's sign)"
                       : "a decimal in [1e-6, 1e6] (the derivative is read from the output)",
                 leaky ? "256leaky_relu0.2" : "128elu0.5");
        return token_error(arch, t, msg);
    }
    layer->act_param = v;
    return FFNN_OK;
}

/* Parse "embed<N>x<D>[_<N>x<D>]..." into layer->spec.embedding's tables (the
 * array allocated here; widths and offsets left to the caller). */
static ffnn_status parse_embedding(const char *arch, const token *t, ffnn_layer *layer)
{
    ffnn_embedding_spec *e = &layer->spec.embedding;
    size_t at = 5, count = 1; /* after "embed" */
    for (size_t i = at; i < t->length; i++)
        count += t->start[i] == '_';
    if (count > FFNN_EMBEDDING_MAX_TABLES)
        return token_error(arch, t, "more than 64 embedding tables in one layer");
    layer->kind = FFNN_LAYER_EMBEDDING;
    layer->has_bias = 0;
    layer->act = FFNN_ACT_IDENTITY;
    if (!(e->table = calloc(count, sizeof *e->table)))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory parsing architecture");
    e->count = count;
    ffnn_status st;
    for (size_t j = 0; j < count; j++) {
        size_t digits = 0;
        if ((st = parse_number(arch, t, at, "table's level count N (embed<N>x<D>)",
                               &e->table[j].levels, &digits)) != FFNN_OK)
            return st;
        at += digits;
        if (at >= t->length || t->start[at] != 'x')
            return token_error(arch, t, "expected 'x' and a dimension after an embedding "
                               "table's level count, e.g. embed100x16_40x9");
        if ((st = parse_number(arch, t, at + 1, "table's dimension D (embed<N>x<D>)",
                               &e->table[j].dim, &digits)) != FFNN_OK)
            return st;
        at += 1 + digits;
        if (j + 1 < count && (at >= t->length || t->start[at] != '_'))
            break;
        at += j + 1 < count;
    }
    if (at != t->length)
        return token_error(arch, t, "an embedding layer is embed<N>x<D>[_<N>x<D>]... with "
                           "no activation or option after it, e.g. embed100x16_40x9");
    return FFNN_OK;
}

/* Parse "<width>[activation][:nobias]" or "local<R>[same][activation][:nobias]"
 * into layer (in, out of local1d, fan_in and offsets left to the caller). */
static ffnn_status parse_layer(const char *arch, const token *t, ffnn_layer *layer)
{
    size_t digits = 0, skip = 0;
    ffnn_status st;
    if (t->length >= 5 && strncmp(t->start, "embed", 5) == 0)
        return parse_embedding(arch, t, layer);
    if (t->length >= 5 && strncmp(t->start, "local", 5) == 0) {
        layer->kind = FFNN_LAYER_LOCAL1D;
        if ((st = parse_number(arch, t, 5, "receptive field R", &layer->spec.local1d.R,
                               &digits)) != FFNN_OK)
            return st;
        skip = 5 + digits;
        layer->spec.local1d.padding = FFNN_LOCAL1D_VALID;
        if (t->length - skip >= 4 && strncmp(t->start + skip, "same", 4) == 0) {
            layer->spec.local1d.padding = FFNN_LOCAL1D_SAME;
            skip += 4;
            if (layer->spec.local1d.R % 2 == 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "'same' padding needs an odd receptive field R (a "
                         "window centred on its output), found R = %zu",
                         layer->spec.local1d.R);
                return token_error(arch, t, msg);
            }
        }
    } else {
        layer->kind = FFNN_LAYER_DENSE;
        if ((st = parse_width(arch, t, &layer->out, &digits)) != FFNN_OK)
            return st;
        skip = digits;
    }
    const char *rest = t->start + skip;
    size_t rest_len = t->length - skip;
    layer->has_bias = 1;
    layer->dropout = 0.0f;
    layer->has_dropout = 0;
    const char *colon = memchr(rest, ':', rest_len);
    size_t act_len = colon ? (size_t)(colon - rest) : rest_len;
    for (const char *opt = colon; opt;) { /* ':nobias', ':dropoutP', in any order */
        const char *end = t->start + t->length;
        const char *next = memchr(opt + 1, ':', (size_t)(end - opt - 1));
        size_t opt_len = (size_t)((next ? next : end) - opt - 1);
        if (opt_len == 6 && strncmp(opt + 1, "nobias", 6) == 0 && layer->has_bias) {
            layer->has_bias = 0;
        } else if (opt_len > 7 && strncmp(opt + 1, "dropout", 7) == 0 &&
                   !layer->has_dropout) {
            char num[32], *stop = NULL;
            if (opt_len - 7 >= sizeof num)
                return token_error(arch, t, "dropout probability too long");
            memcpy(num, opt + 8, opt_len - 7);
            num[opt_len - 7] = '\0';
            errno = 0;
            const float p = strtof(num, &stop); /* as ffnn_arch_format reads it back */
            if (errno || *stop || !(p == 0.0f || (p >= FFNN_PARAM_MIN && p < 1.0f)) ||
                strpbrk(num, "xXnNiI+"))
                return token_error(arch, t, "dropout probability must be 0 or a decimal in "
                                   "[1e-6, 1) (as a float), e.g. ':dropout0.5'");
            layer->dropout = p;
            layer->has_dropout = 1;
        } else {
            return token_error(arch, t, "unknown option after ':', or one repeated (expected "
                               "':nobias' or ':dropoutP', P in [0, 1))");
        }
        opt = next;
    }
    layer->act = FFNN_ACT_IDENTITY;
    layer->act_param = 0.0f;
    if (act_len > 0)
        return parse_activation(arch, t, (size_t)(rest - t->start), act_len, layer);
    return FFNN_OK;
}

/* Split on '-' into tokens; an empty token is an error. */
static ffnn_status next_token(const char *arch, size_t *pos, token *t)
{
    const char *start = arch + *pos;
    const char *end = strchr(start, '-');
    size_t length = end ? (size_t)(end - start) : strlen(start);
    t->start = start;
    t->length = length;
    t->column = *pos + 1;
    if (length == 0)
        return ffnn_fail(FFNN_ERR_PARSE,
                         "architecture '%s': column %zu: empty token (expected a "
                         "width such as 256relu between '-' separators)",
                         arch, *pos + 1);
    *pos += length + (end ? 1 : 0);
    return FFNN_OK;
}

ffnn_status ffnn_arch_parse(const char *arch, size_t *input_size, ffnn_layer **layers_out,
                            int *layer_count, size_t *parameter_count)
{
    if (!arch || !*arch)
        return ffnn_fail(FFNN_ERR_PARSE,
                         "architecture string is empty (expected e.g. '784-256relu-10')");
    size_t len = strlen(arch);
    int n_tokens = 1;
    for (size_t i = 0; i < len; i++) {
        if (arch[i] == ' ' || arch[i] == '\t')
            return ffnn_fail(FFNN_ERR_PARSE,
                             "architecture '%s': column %zu: whitespace is not allowed",
                             arch, i + 1);
        n_tokens += arch[i] == '-';
    }
    if (n_tokens < 2)
        return ffnn_fail(FFNN_ERR_PARSE,
                         "architecture '%s': expected an input width and at least one "
                         "layer, e.g. '784-256relu-10'", arch);
    if (n_tokens - 1 > FFNN_MAX_LAYERS)
        return ffnn_fail(FFNN_ERR_PARSE, "architecture '%s': more than %d layers",
                         arch, FFNN_MAX_LAYERS);

    size_t pos = 0;
    token t;
    ffnn_status st = next_token(arch, &pos, &t);
    if (st != FFNN_OK)
        return st;
    size_t input = 0, digits = 0;
    if ((st = parse_width(arch, &t, &input, &digits)) != FFNN_OK)
        return st;
    if (digits != t.length)
        return token_error(arch, &t, "the first token is the input width: digits only");

    ffnn_layer *layers = calloc((size_t)(n_tokens - 1), sizeof *layers);
    if (!layers)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory parsing architecture");
    size_t fan_in = input, offset = 0;
    for (int i = 0; i < n_tokens - 1; i++) {
        if ((st = next_token(arch, &pos, &t)) != FFNN_OK ||
            (st = parse_layer(arch, &t, &layers[i])) != FFNN_OK) {
            ffnn_layers_free(layers, i + 1);
            return st;
        }
        ffnn_layer *l = &layers[i];
        l->in = fan_in;
        l->fan_in = fan_in;
        if (l->kind == FFNN_LAYER_EMBEDDING) {
            ffnn_embedding_spec *e = &l->spec.embedding;
            e->in = l->in;
            const char *why = i != 0 ? "an embedding layer reads the input's codes: it "
                                       "must be the first layer"
                              : ffnn_embedding_layout(e) != 0
                                  ? "more embedding tables than inputs (each table reads "
                                    "one code, the last inputs)"
                                  : NULL;
            if (why || e->out > FFNN_MAX_WIDTH) {
                ffnn_layers_free(layers, i + 1);
                return token_error(arch, &t, why ? why : "output width above 2^24");
            }
            l->out = e->out;
            l->fan_in = 1;
        }
        if (l->kind == FFNN_LAYER_LOCAL1D) {
            const size_t R = l->spec.local1d.R;
            l->fan_in = R;
            l->out = ffnn_local1d_output_size(l->in, R, l->spec.local1d.padding);
            if (l->out == 0) { /* valid padding, R > in */
                char msg[200];
                snprintf(msg, sizeof msg, "receptive field R = %zu is wider than the layer's "
                         "%zu input%s: 'valid' output width N - R + 1 would be below 1 (use "
                         "R <= %zu or 'same')", R, l->in, l->in == 1 ? "" : "s", l->in);
                ffnn_layers_free(layers, i + 1);
                return token_error(arch, &t, msg);
            }
        }
        l->weight_offset = offset;
        offset += ffnn_layer_weights(l); /* fan_in, out, n, d <= 2^24: no overflow */
        l->bias_offset = offset;
        offset += l->has_bias ? l->out : 0;
        if (offset > ((size_t)1 << 36)) {
            ffnn_layers_free(layers, i + 1);
            return token_error(arch, &t, "the network has more than 2^36 parameters");
        }
        fan_in = l->out;
    }
    if (layers[n_tokens - 2].has_dropout) {
        ffnn_layers_free(layers, n_tokens - 1);
        return ffnn_fail(FFNN_ERR_PARSE, "architecture '%s': dropout on the last layer (the "
                         "network's output); put it after a hidden layer", arch);
    }
    *input_size = input;
    *layers_out = layers;
    *layer_count = n_tokens - 1;
    *parameter_count = offset;
    return FFNN_OK;
}

/* The shortest fixed-point decimal that reads back as v (an activation parameter,
 * a dropout probability; 0 or within [FFNN_PARAM_MIN, FFNN_PARAM_MAX], so at most
 * 16 characters): '0.2', not '0.200000003'; never an exponent ('1e-05' would split
 * at its '-'). */
static void format_param(float v, char *buf, size_t size)
{
    for (int decimals = 0; decimals <= 16; decimals++) {
        snprintf(buf, size, "%.*f", decimals, (double)v);
        if (strtof(buf, NULL) == v)
            return;
    }
}

size_t ffnn_arch_format(size_t input_size, const ffnn_layer *layers, int layer_count,
                        char *buf, size_t buf_size)
{
    /* used counts the whole string; writing stops (NUL-terminated) when buf is full */
    size_t used = (size_t)snprintf(buf_size ? buf : NULL, buf_size, "%zu", input_size);
    for (int i = 0; i < layer_count; i++) {
        const ffnn_layer *l = &layers[i];
        char act[48] = ""; /* the name, and a parameter that is not the default */
        if (l->act != FFNN_ACT_IDENTITY)
            snprintf(act, sizeof act, "%s", ffnn_activation_name(l->act));
        if (ffnn_act_has_param(l->act) && l->act_param != ffnn_act_default_param(l->act))
            format_param(l->act_param, act + strlen(act), sizeof act - strlen(act));
        const char *bias = l->has_bias ? "" : ":nobias";
        char *at = used < buf_size ? buf + used : NULL;
        size_t room = used < buf_size ? buf_size - used : 0;
        char drop[32] = "";
        if (l->has_dropout) {
            snprintf(drop, sizeof drop, ":dropout");
            format_param(l->dropout, drop + 8, sizeof drop - 8);
        }
        if (l->kind == FFNN_LAYER_EMBEDDING) {
            const ffnn_embedding_spec *e = &l->spec.embedding;
            for (size_t j = 0; j < e->count; j++) {
                used += (size_t)snprintf(at, room, "%s%zux%zu", j ? "_" : "-embed",
                                         e->table[j].levels, e->table[j].dim);
                at = used < buf_size ? buf + used : NULL;
                room = used < buf_size ? buf_size - used : 0;
            }
        } else if (l->kind == FFNN_LAYER_LOCAL1D)
            used += (size_t)snprintf(at, room, "-local%zu%s%s%s%s", l->spec.local1d.R,
                                     l->spec.local1d.padding == FFNN_LOCAL1D_SAME ? "same" : "",
                                     act, bias, drop);
        else
            used += (size_t)snprintf(at, room, "-%zu%s%s%s", l->out, act, bias, drop);
    }
    return used;
}

/* input: at most 8 digits; a layer at most "-local" + 8 digits + "same" +
 * "leaky_relu" + a 16-character parameter + ":nobias" + ":dropout" + 16 = 75
 * characters. */
size_t ffnn_arch_format_size(int layer_count)
{
    /* + an embedding layer's "-embed" and 64 tables of "_" + 8 + "x" + 8 digits */
    return 16 + 96 * (size_t)(layer_count > 0 ? layer_count : 0) + 8 + 64 * 18;
}

void ffnn_layers_free(ffnn_layer *layers, int count)
{
    for (int i = 0; layers && i < count; i++)
        if (layers[i].kind == FFNN_LAYER_EMBEDDING)
            free(layers[i].spec.embedding.table);
    free(layers);
}
