/* info_json.c - libFuzzer target: ffnn info --json's object (cli/info_json.c)
 * of every model file the reader accepts. The JSON must parse (cJSON), hold
 * exactly the fields documented, with the model's values and the file's
 * strings unchanged (a crafted string cannot add or change a field), and carry
 * no raw control byte (C0, DEL, C1) that a terminal would act on. A finding is
 * a crash, a sanitizer report or an abort() below.
 * Seeds: fuzz/corpus/info/ (fuzz/make_corpus.py). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ffnn.h"
#include "fuzz_file.h"
#include "info_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fields[] = {"file", "arch", "layers", "inputs", "outputs",
                                     "parameters", "loss", "ffnn_version", "interrupted",
                                     "class_names", "standardized"};

static void need(int ok)
{
    if (!ok)
        abort();
}

static void same_text(const cJSON *o, const char *key, const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    need(cJSON_IsString(v) && strcmp(v->valuestring, want) == 0);
}

static void same_number(const cJSON *o, const char *key, double want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    need(cJSON_IsNumber(v) && v->valuedouble == want);
}

static void check(const char *text, const char *path, const ffnn_model *m,
                  const ffnn_model_file_info *info)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        need(*p >= 0x20 && *p != 0x7f && !(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f));
    cJSON *o = cJSON_Parse(text);
    need(cJSON_IsObject(o) && cJSON_GetArraySize(o) == (int)(sizeof fields / sizeof *fields));
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        need(cJSON_GetObjectItemCaseSensitive(o, fields[i]) != NULL);
    size_t n = ffnn_model_arch_string(m, NULL, 0);
    char *arch = malloc(n + 1);
    need(arch != NULL);
    ffnn_model_arch_string(m, arch, n + 1);
    same_text(o, "file", path);
    same_text(o, "arch", arch);
    free(arch);
    same_number(o, "layers", ffnn_model_layer_count(m));
    same_number(o, "inputs", (double)ffnn_model_input_size(m));
    same_number(o, "outputs", (double)ffnn_model_output_size(m));
    same_number(o, "parameters", (double)ffnn_model_parameter_count(m));
    same_text(o, "loss", ffnn_loss_name(info->loss));
    same_text(o, "ffnn_version", info->ffnn_version);
    if (info->interrupted[0])
        same_text(o, "interrupted", info->interrupted);
    else
        need(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "interrupted")));
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "class_names");
    if (ffnn_model_class_name(m, 0)) {
        int count = 0;
        while (ffnn_model_class_name(m, count))
            count++;
        need(cJSON_IsArray(names) && cJSON_GetArraySize(names) == count);
        for (int c = 0; c < count; c++) {
            const cJSON *s = cJSON_GetArrayItem(names, c);
            need(cJSON_IsString(s) && strcmp(s->valuestring, ffnn_model_class_name(m, c)) == 0);
        }
    } else {
        need(cJSON_IsNull(names));
    }
    const cJSON *std = cJSON_GetObjectItemCaseSensitive(o, "standardized");
    const float *mean = NULL, *target_mean = NULL;
    ffnn_model_standardization(m, &mean, NULL, &target_mean, NULL);
    need(cJSON_IsObject(std) && cJSON_GetArraySize(std) == 2 &&
         cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(std, "inputs")) &&
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(std, "inputs")) == (mean != NULL) &&
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(std, "targets")) ==
             (target_mean != NULL));
    cJSON_Delete(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file_write("info", ".safetensors", data, size);
    ffnn_model *m = NULL;
    ffnn_model_file_info info;
    if (!path || ffnn_model_load(path, &m, &info) != FFNN_OK)
        return 0;
    char *text = ffnn_cli_info_json(path, m, &info);
    need(text != NULL);
    check(text, path, m, &info);
    free(text);
    ffnn_model_free(m);
    return 0;
}
