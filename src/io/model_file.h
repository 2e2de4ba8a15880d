/* model_file.h - what the model file's reader (model_load.c) and writer
 * (model_save.c) share: the metadata's format name and limits, the names of the
 * standardisation tensors (docs/FORMATS.md). Private to the library. */
#ifndef FFNN_IO_MODEL_FILE_H
#define FFNN_IO_MODEL_FILE_H

#define ST_FORMAT "ffnn-model"   /* __metadata__ "format"                */
#define ST_ENSEMBLE_FORMAT "ffnn-ensemble" /* ... of an ensemble model file  */
#define ST_VERSION_MAX 64        /* ffnn_version: at most 63 characters  */
#define ST_INTERRUPTED_MAX 128   /* interrupted: at most 127 characters  */

/* The optional standardisation tensors, stat 1-4 (entry 0 is NULL):
 * standardize.input.mean, .input.scale, .target.mean, .target.scale. */
extern const char *const ffnn_st_stat_names[5];

#endif
