/* arch_parse.c - libFuzzer target: the architecture-string parser (core/arch.c)
 * on arbitrary text. A string that parses must print to its canonical form and
 * parse back to the same layers (ffnn_arch_parse(ffnn_arch_format(.)) is the
 * identity), with nothing allocated for parameters. Seeds: fuzz/corpus/arch/. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when layers a and b are the same: every field, an embedding's tables by
 * their contents (the table pointers differ between two parses). */
static int same_layer(const ffnn_layer *a, const ffnn_layer *b)
{
    ffnn_layer x = *a, y = *b;
    if (a->kind != b->kind)
        return 0;
    if (a->kind == FFNN_LAYER_EMBEDDING) {
        const ffnn_embedding_spec *e = &a->spec.embedding, *f = &b->spec.embedding;
        if (e->count != f->count ||
            memcmp(e->table, f->table, e->count * sizeof *e->table) != 0)
            return 0;
        x.spec.embedding.table = NULL;
        y.spec.embedding.table = NULL;
    }
    return memcmp(&x, &y, sizeof x) == 0; /* calloc'd layers: padding is zero */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    ffnn_model *a = NULL, *b = NULL;
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (ffnn_model_create_layout(text, &a) == FFNN_OK) {
        size_t n = ffnn_arch_format(a->input_size, a->layers, a->layer_count, NULL, 0) + 1;
        char *canon = malloc(n);
        if (!canon)
            abort();
        if (ffnn_arch_format(a->input_size, a->layers, a->layer_count, canon, n) + 1 != n ||
            n > ffnn_arch_format_size(a->layer_count))
            abort(); /* the length and the room promised for it */
        if (ffnn_model_create_layout(canon, &b) != FFNN_OK ||
            b->layer_count != a->layer_count || b->parameter_count != a->parameter_count ||
            b->input_size != a->input_size)
            abort(); /* the canonical form parses to the same layers */
        for (int i = 0; i < a->layer_count; i++)
            if (!same_layer(&a->layers[i], &b->layers[i]))
                abort();
        free(canon);
    }
    ffnn_model_free(a);
    ffnn_model_free(b);
    free(text);
    return 0;
}
