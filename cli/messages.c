/* messages.c - the library's messages in the CLI's terms (messages.h). */
#include "messages.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ffnn.h"

typedef enum { VALUE_NONE, VALUE_STRATEGY, VALUE_DEVICE, VALUE_PRECISION, VALUE_NUMBER } value_kind;

/* One API term and the CLI's flag for it; the term counts when a value of its kind
 * follows it (after one space). */
typedef struct term {
    const char *api, *flag;
    value_kind value;
} term;

static const term terms[] = {
    {"strategy ", "--strategy ", VALUE_STRATEGY},
    {"device ", "--device ", VALUE_DEVICE},
    {"precision ", "--precision ", VALUE_PRECISION},
    {"threads ", "--threads ", VALUE_NUMBER},
    {"gpus ", "--gpus ", VALUE_NUMBER},
    {"ffnn_model_load", "--init", VALUE_NONE},
    {"ffnn_checkpoint_load", "--resume", VALUE_NONE},
};

/* 1 when the word at p (letters, digits, '_') is a value of kind k. */
static int is_value(const char *p, value_kind k)
{
    char word[32];
    size_t n = 0;
    while (n + 1 < sizeof word && (isalnum((unsigned char)p[n]) || p[n] == '_'))
        n++;
    if (n == 0 || n + 1 >= sizeof word)
        return k == VALUE_NONE;
    memcpy(word, p, n);
    word[n] = '\0';
    switch (k) {
    case VALUE_NONE: return 1;
    case VALUE_NUMBER: return strspn(word, "0123456789") == n;
    case VALUE_STRATEGY: {
        ffnn_strategy s;
        return ffnn_strategy_from_name(word, &s) == FFNN_OK;
    }
    case VALUE_DEVICE: {
        ffnn_device d;
        return ffnn_device_from_name(word, &d) == FFNN_OK;
    }
    case VALUE_PRECISION: {
        ffnn_precision q;
        return ffnn_precision_from_name(word, &q) == FFNN_OK;
    }
    }
    return 0;
}

void ffnn_cli_flag_terms(const char *text, char *out, size_t size)
{
    size_t o = 0;
    if (size == 0)
        return;
    for (const char *p = text; *p && o + 1 < size;) {
        int at_word =
            p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-');
        const term *hit = NULL;
        for (size_t i = 0; at_word && !hit && i < sizeof terms / sizeof terms[0]; i++) {
            size_t len = strlen(terms[i].api);
            int whole = terms[i].value != VALUE_NONE ||
                        !(isalnum((unsigned char)p[len]) || p[len] == '_');
            if (strncmp(p, terms[i].api, len) == 0 && whole && is_value(p + len, terms[i].value))
                hit = &terms[i];
        }
        if (hit) {
            int n = snprintf(out + o, size - o, "%s", hit->flag);
            o = n < 0 || (size_t)n >= size - o ? size - 1 : o + (size_t)n;
            p += strlen(hit->api);
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

void ffnn_cli_last_error(char *out, size_t size)
{
    char copy[1024]; /* the value checks above may record errors of their own */
    snprintf(copy, sizeof copy, "%s", ffnn_last_error());
    ffnn_cli_flag_terms(copy, out, size);
}
