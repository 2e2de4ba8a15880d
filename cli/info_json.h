/* info_json.h - the JSON object of ffnn info --json and the JSON strings of the
 * other commands (info_json.c), built with cJSON's printer so that any string
 * from a file or the command line (the path, the version, the interrupted
 * note, class names) is escaped for JSON; DEL and C1 controls are written as
 * \u escapes and bytes that are not UTF-8 (a path given as raw bytes) become
 * U+FFFD. */
#ifndef FFNN_CLI_INFO_JSON_H
#define FFNN_CLI_INFO_JSON_H

#include <stdio.h>

#include "ffnn.h"

/* One line of JSON (no newline): {"file", "arch", "layers", "inputs", "outputs",
 * "parameters", "loss", "ffnn_version" ("" when absent), "interrupted" (null
 * when training ran to its end), "class_names" (array or null), "standardized":
 * {"inputs", "targets"}}. malloc'd (free() it); NULL when out of memory. */
char *ffnn_cli_info_json(const char *path, const ffnn_model *m,
                         const ffnn_model_file_info *info);

/* text as one JSON string onto f: quoted, escaped by cJSON's printer, DEL and
 * C1 controls as \u007f, \u0080..\u009f, bytes outside UTF-8 as U+FFFD (the
 * JSON of eval --json and predict --json). 0, or -1 when out of memory. */
int ffnn_cli_put_json_string(FILE *f, const char *text);

#endif
