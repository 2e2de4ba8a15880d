/* embedding.c - the shape rules of the embedding layer (embedding.h): its
 * layout and fastai's dimension rule. Core: the architecture parser (arch.c),
 * the table encoding and every backend use them. */
#include "core/embedding.h"

#include <math.h>

size_t ffnn_embedding_dim_rule(size_t n)
{
    const double d = rint(1.6 * pow((double)n, 0.56)); /* half to even */
    return d < 1.0 ? 1 : d > 600.0 ? 600 : (size_t)d;
}

int ffnn_embedding_layout(ffnn_embedding_spec *s)
{
    if (s->count > s->in)
        return -1;
    s->passed = s->in - s->count;
    s->out = s->passed;
    s->weights = 0;
    for (size_t j = 0; j < s->count; j++) {
        s->table[j].weight_at = s->weights;
        s->table[j].out_at = s->out;
        s->weights += s->table[j].levels * s->table[j].dim;
        s->out += s->table[j].dim;
    }
    return 0;
}
