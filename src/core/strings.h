/* strings.h - owned copies of string arrays (strings.c): the class names a model
 * or a data set keeps. */
#ifndef FFNN_CORE_STRINGS_H
#define FFNN_CORE_STRINGS_H

#include <stddef.h>

#include "ffnn.h"

/* *out = a malloc'd array of count malloc'd copies of src[0..count) (count may be
 * 0: an array of one NULL slot, so that *out is never NULL on success); the caller
 * owns it (ffnn_strings_free). src[i] must not be NULL. FFNN_ERR_NO_MEMORY (nothing
 * left allocated, *out untouched; the message names what of count class names).
 * Thread-safe. */
ffnn_status ffnn_strings_copy(const char *const *src, size_t count, char ***out);

/* Frees v[0..count) and v (v may be NULL). */
void ffnn_strings_free(char **v, size_t count);

#endif
