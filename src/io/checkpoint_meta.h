/* checkpoint_meta.h - a checkpoint's __metadata__, read and written
 * (checkpoint_meta.c) for io/checkpoint.c. Private to io. */
#ifndef FFNN_IO_CHECKPOINT_META_H
#define FFNN_IO_CHECKPOINT_META_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"
#include "core/schedule.h"
#include "io/run_state.h"
#include "io/safetensors.h"

#define CK_FORMAT "ffnn-checkpoint"

/* What __metadata__ holds, parsed. */
typedef struct ck_meta {
    const char *arch;          /* owned by the cJSON tree */
    const char *version;       /* "" when absent          */
    ffnn_train_config cfg;
    size_t train_count;
    uint32_t train_crc32;
    int epoch;
    size_t step, steps_per_epoch;
    uint64_t optimizer_steps;
    uint64_t rng[4];
    ffnn_plateau plateau;
    int plateau_epoch;
    int es_epoch, es_best_epoch; /* early stopping's state (cfg.early_stopping > 0) */
    double es_best_loss;         /* HUGE_VAL: none yet                              */
} ck_meta;

/* Parse and check r's __metadata__ into *m: every key known, every required one
 * there, no other optimizer's, each value in its syntax and range, a position a
 * run can reach and early stopping's state consistent. m->cfg: base (NULL: all
 * zero) with the options the file records; an optional option it does not
 * record: its default. FFNN_OK or FFNN_ERR_FORMAT naming the key. */
ffnn_status ffnn_ck_read_metadata(const st_reader *r, const ffnn_train_config *base, ck_meta *m);

/* Fill md with the metadata of run state s (architecture string arch); 0 when
 * out of memory. */
int ffnn_ck_fill_metadata(cJSON *md, const ffnn_run_state *s, const char *arch);

#endif
