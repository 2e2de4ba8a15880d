/* info_json.c - ffnn info --json's object (info_json.h). */
#include "info_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnn.h" /* ffnn_utf8_length */
#include "options.h" /* ffnn_cli_arch_string */

/* text as valid UTF-8 (each byte outside a valid sequence replaced by U+FFFD),
 * malloc'd; NULL when out of memory. */
static char *valid_utf8(const char *text)
{
    static const char replacement[] = "\xEF\xBF\xBD";
    size_t n = strlen(text), o = 0;
    char *out = malloc(3 * n + 1);
    const unsigned char *p = (const unsigned char *)text;
    if (!out)
        return NULL;
    while (n > 0) {
        size_t len = ffnn_utf8_length(p, n);
        if (len == 0) {
            memcpy(out + o, replacement, 3);
            o += 3;
            len = 1;
        } else {
            memcpy(out + o, p, len);
            o += len;
        }
        p += len;
        n -= len;
    }
    out[o] = '\0';
    return out;
}

/* obj[key] = text (valid UTF-8; cJSON escapes quotes, backslashes and controls).
 * 0 on success. */
static int add_text(cJSON *obj, const char *key, const char *text)
{
    char *clean = valid_utf8(text);
    cJSON *s = clean ? cJSON_CreateString(clean) : NULL;
    free(clean);
    if (!s)
        return -1;
    cJSON_AddItemToObject(obj, key, s);
    return 0;
}

static int add_number(cJSON *obj, const char *key, double v)
{
    return cJSON_AddNumberToObject(obj, key, v) ? 0 : -1;
}

static int add_class_names(cJSON *obj, const ffnn_model *m)
{
    if (!ffnn_model_class_name(m, 0))
        return cJSON_AddNullToObject(obj, "class_names") ? 0 : -1;
    cJSON *a = cJSON_AddArrayToObject(obj, "class_names");
    if (!a)
        return -1;
    const char *name;
    for (int c = 0; (name = ffnn_model_class_name(m, c)) != NULL; c++) {
        char *clean = valid_utf8(name);
        cJSON *s = clean ? cJSON_CreateString(clean) : NULL;
        free(clean);
        if (!s)
            return -1;
        cJSON_AddItemToArray(a, s);
    }
    return 0;
}

static int add_fields(cJSON *o, const char *path, const ffnn_model *m,
                      const ffnn_model_file_info *info, const char *arch)
{
    const float *mean = NULL, *target_mean = NULL;
    ffnn_model_standardization(m, &mean, NULL, &target_mean, NULL);
    cJSON *std = NULL;
    if (add_text(o, "file", path) || add_text(o, "arch", arch) ||
        add_number(o, "layers", ffnn_model_layer_count(m)) ||
        add_number(o, "inputs", (double)ffnn_model_input_size(m)) ||
        add_number(o, "outputs", (double)ffnn_model_output_size(m)) ||
        add_number(o, "parameters", (double)ffnn_model_parameter_count(m)) ||
        add_text(o, "loss", ffnn_loss_name(info->loss)) ||
        add_text(o, "ffnn_version", info->ffnn_version))
        return -1;
    if (info->interrupted[0] ? add_text(o, "interrupted", info->interrupted)
                             : !cJSON_AddNullToObject(o, "interrupted"))
        return -1;
    if (add_class_names(o, m) || !(std = cJSON_AddObjectToObject(o, "standardized")) ||
        !cJSON_AddBoolToObject(std, "inputs", mean != NULL) ||
        !cJSON_AddBoolToObject(std, "targets", target_mean != NULL))
        return -1;
    cJSON *members = ffnn_model_member_count(m) ? cJSON_AddArrayToObject(o, "members") : NULL;
    if (ffnn_model_member_count(m) && !members)
        return -1;
    for (int i = 0; i < ffnn_model_member_count(m); i++) { /* an ensemble: its members' arch */
        char *text = ffnn_cli_arch_string(ffnn_model_member(m, i));
        cJSON *t = text ? cJSON_CreateString(text) : NULL;
        free(text);
        if (!t || !cJSON_AddItemToArray(members, t))
            return cJSON_Delete(t), -1;
    }
    return 0;
}

/* cJSON leaves DEL and the C1 controls (C2 80..C2 9F) raw: written as \u007f,
 * \u0080..\u009f (they occur only inside strings), so that the JSON shown on a
 * terminal cannot drive it either. A new malloc'd string; text is freed. */
static char *escape_del_c1(char *text)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = strlen(text), o = 0;
    char *out = malloc(6 * n + 1);
    if (!out) {
        cJSON_free(text);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        int c1 = c == 0xC2 && (unsigned char)text[i + 1] >= 0x80 &&
                 (unsigned char)text[i + 1] <= 0x9F;
        if (c == 0x7F || c1) {
            unsigned char code = c1 ? (unsigned char)text[++i] : c;
            memcpy(out + o, "\\u00", 4);
            out[o + 4] = hex[code >> 4];
            out[o + 5] = hex[code & 15];
            o += 6;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    cJSON_free(text);
    return out;
}

char *ffnn_cli_info_json(const char *path, const ffnn_model *m,
                         const ffnn_model_file_info *info)
{
    size_t n = ffnn_model_arch_string(m, NULL, 0);
    char *arch = malloc(n + 1), *text = NULL;
    cJSON *o = cJSON_CreateObject();
    if (arch && o) {
        ffnn_model_arch_string(m, arch, n + 1);
        if (add_fields(o, path, m, info, arch) == 0)
            text = cJSON_PrintUnformatted(o);
    }
    if (text)
        text = escape_del_c1(text);
    cJSON_Delete(o);
    free(arch);
    return text;
}

int ffnn_cli_put_json_string(FILE *f, const char *text)
{
    char *clean = valid_utf8(text);
    cJSON *s = clean ? cJSON_CreateString(clean) : NULL;
    char *json = s ? cJSON_PrintUnformatted(s) : NULL;
    free(clean);
    cJSON_Delete(s);
    if (json)
        json = escape_del_c1(json);
    if (!json)
        return -1;
    fputs(json, f);
    free(json);
    return 0;
}
