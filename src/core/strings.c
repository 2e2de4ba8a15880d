/* strings.c - see strings.h. */
#include "core/strings.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

ffnn_status ffnn_strings_copy(const char *const *src, size_t count, char ***out)
{
    char **copy = calloc(count ? count : 1, sizeof *copy);
    if (!copy)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for %zu class names", count);
    for (size_t c = 0; c < count; c++) {
        size_t n = strlen(src[c]);
        if (!(copy[c] = malloc(n + 1))) {
            ffnn_strings_free(copy, c);
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the class names");
        }
        memcpy(copy[c], src[c], n + 1);
    }
    *out = copy;
    return FFNN_OK;
}

void ffnn_strings_free(char **v, size_t count)
{
    if (!v)
        return;
    for (size_t c = 0; c < count; c++)
        free(v[c]);
    free(v);
}
