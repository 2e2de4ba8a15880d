/*
 * arch.c - the architecture string: parse and print.
 *
 *   arch       := input ( '-' layer )+            e.g. "784-256relu-10"
 *   input      := positive integer                  features per sample
 *   layer      := width [activation] [':nobias']    a dense layer
 *   activation := relu | sigmoid | tanh | identity  (default identity)
 *
 * Whitespace is not allowed. Errors name the 1-based column and the token.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model.h"

enum { FFNN_MAX_WIDTH = 1 << 24, FFNN_MAX_LAYERS = 1024 };

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

/* Parse the leading decimal width of a token; *digits receives its length. */
static ffnn_status parse_width(const char *arch, const token *t, size_t *width,
                               size_t *digits)
{
    size_t n = 0;
    unsigned long long value = 0;
    while (n < t->length && t->start[n] >= '0' && t->start[n] <= '9') {
        value = value * 10 + (unsigned long long)(t->start[n] - '0');
        if (value > FFNN_MAX_WIDTH) {
            char what[96];
            snprintf(what, sizeof what, "width larger than the limit %d", FFNN_MAX_WIDTH);
            return token_error(arch, t, what);
        }
        n++;
    }
    if (n == 0)
        return token_error(arch, t, "expected a width (a positive integer) first");
    if (value == 0)
        return token_error(arch, t, "width must be at least 1, found 0");
    *width = (size_t)value;
    *digits = n;
    return FFNN_OK;
}

/* Parse "<width>[activation][:nobias]" into layer (in/offsets left to the caller). */
static ffnn_status parse_layer(const char *arch, const token *t, ffnn_dense_layer *layer)
{
    size_t digits = 0;
    ffnn_status st = parse_width(arch, t, &layer->out, &digits);
    if (st != FFNN_OK)
        return st;
    const char *rest = t->start + digits;
    size_t rest_len = t->length - digits;
    layer->has_bias = 1;
    const char *colon = memchr(rest, ':', rest_len);
    size_t act_len = colon ? (size_t)(colon - rest) : rest_len;
    if (colon) {
        size_t opt_len = rest_len - act_len - 1;
        if (opt_len != 6 || strncmp(colon + 1, "nobias", 6) != 0)
            return token_error(arch, t, "unknown option after ':' (expected ':nobias')");
        layer->has_bias = 0;
    }
    layer->act = FFNN_ACT_IDENTITY;
    if (act_len > 0) {
        char name[32];
        if (act_len >= sizeof name)
            return token_error(arch, t, "unknown activation (expected relu, sigmoid, tanh or identity)");
        memcpy(name, rest, act_len);
        name[act_len] = '\0';
        if (ffnn_activation_from_name(name, &layer->act) != FFNN_OK)
            return token_error(arch, t, "unknown activation (expected relu, sigmoid, tanh or identity)");
    }
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

ffnn_status ffnn_arch_parse(const char *arch, size_t *input_size,
                            ffnn_dense_layer **layers_out, int *layer_count,
                            size_t *parameter_count)
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

    ffnn_dense_layer *layers = calloc((size_t)(n_tokens - 1), sizeof *layers);
    if (!layers)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory parsing architecture");
    size_t fan_in = input, offset = 0;
    for (int i = 0; i < n_tokens - 1; i++) {
        if ((st = next_token(arch, &pos, &t)) != FFNN_OK ||
            (st = parse_layer(arch, &t, &layers[i])) != FFNN_OK) {
            free(layers);
            return st;
        }
        ffnn_dense_layer *l = &layers[i];
        l->in = fan_in;
        l->weight_offset = offset;
        offset += l->in * l->out; /* in, out <= 2^24: no overflow per layer */
        l->bias_offset = offset;
        offset += l->has_bias ? l->out : 0;
        if (offset > ((size_t)1 << 36)) {
            free(layers);
            return token_error(arch, &t, "the network has more than 2^36 parameters");
        }
        fan_in = l->out;
    }
    *input_size = input;
    *layers_out = layers;
    *layer_count = n_tokens - 1;
    *parameter_count = offset;
    return FFNN_OK;
}

void ffnn_arch_format(size_t input_size, const ffnn_dense_layer *layers,
                      int layer_count, char *buf, size_t buf_size)
{
    if (buf_size == 0)
        return;
    size_t used = (size_t)snprintf(buf, buf_size, "%zu", input_size);
    for (int i = 0; i < layer_count && used < buf_size; i++) {
        const ffnn_dense_layer *l = &layers[i];
        used += (size_t)snprintf(buf + used, buf_size - used, "-%zu%s%s", l->out,
                                 l->act == FFNN_ACT_IDENTITY ? "" : ffnn_activation_name(l->act),
                                 l->has_bias ? "" : ":nobias");
    }
}
