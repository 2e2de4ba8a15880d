/* messages.h - the library's messages as the CLI prints them (messages.c). */
#ifndef FFNN_CLI_MESSAGES_H
#define FFNN_CLI_MESSAGES_H

#include <stddef.h>

/* text with the library's names of the settings that are flags of ffnn train written
 * as those flags, into out [size] (truncated, NUL-terminated): "strategy NAME",
 * "device NAME", "precision NAME" (a name the library parses), "threads N", "gpus N"
 * become "--strategy NAME", ...; "ffnn_model_load" becomes "--init" and
 * "ffnn_checkpoint_load" "--resume". The library words its messages in its API's
 * terms (ffnn_train_config's fields); the CLI adds its flags this way. */
void ffnn_cli_flag_terms(const char *text, char *out, size_t size);

/* ffnn_last_error() through ffnn_cli_flag_terms, into out [size]. */
void ffnn_cli_last_error(char *out, size_t size);

#endif
