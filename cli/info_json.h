/* info_json.h - the JSON object of ffnn info --json (info_json.c), built with
 * cJSON's printer so that any string from the file or the command line (the
 * path, the version, the interrupted note, class names) is escaped for JSON;
 * bytes that are not UTF-8 (a path given as raw bytes) become U+FFFD. */
#ifndef FFNN_CLI_INFO_JSON_H
#define FFNN_CLI_INFO_JSON_H

#include "ffnn.h"

/* One line of JSON (no newline): {"file", "arch", "layers", "inputs", "outputs",
 * "parameters", "loss", "ffnn_version" ("" when absent), "interrupted" (null
 * when training ran to its end), "class_names" (array or null), "standardized":
 * {"inputs", "targets"}}. malloc'd (free() it); NULL when out of memory. */
char *ffnn_cli_info_json(const char *path, const ffnn_model *m,
                         const ffnn_model_file_info *info);

#endif
