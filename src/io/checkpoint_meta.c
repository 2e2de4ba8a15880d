/*
 * checkpoint_meta.c - a checkpoint's __metadata__ (docs/FORMATS.md,
 * "Checkpoints"): the run's state and position under keys of their own, and the
 * training options under the keys of the option table (core/train_options.def:
 * each option's key and when it is written, required or refused), parsed by
 * that table. io/checkpoint.c reads and writes the tensors around it.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/train_options.h"
#include "io/checkpoint_meta.h"

enum { CK_VERSION_MAX = FFNN_RUN_STATE_VERSION_MAX };

/* ------------------------------------------------------------ reading */


/* The keys of the run's state and position (the training options' keys are the
 * option table's, core/train_options.def), and how to read each. */
typedef enum { CK_TEXT, CK_UINT, CK_RNG, CK_DOUBLE } ck_kind;

typedef struct ck_key {
    const char *name;
    ck_kind kind;
    uint64_t max;   /* CK_UINT: the largest value allowed */
    int required;   /* 0: optional (ffnn_version and the schedules' and early
                       stopping's state: ck_check_early_stopping checks those) */
} ck_key;

static const ck_key ck_keys[] = {
    {"format", CK_TEXT, 0, 1},
    {"ffnn_version", CK_TEXT, 0, 0},
    {"arch", CK_TEXT, 0, 1},
    {"train_count", CK_UINT, INT32_MAX, 1},
    {"train_crc32", CK_UINT, UINT32_MAX, 1},
    {"epoch", CK_UINT, 1000000, 1},
    {"step", CK_UINT, INT32_MAX, 1},
    {"steps_per_epoch", CK_UINT, INT32_MAX, 1},
    {"optimizer_steps", CK_UINT, UINT64_MAX, 1},
    {"shuffle_rng", CK_RNG, 0, 1},
    {"plateau_lr", CK_DOUBLE, 0, 0},
    {"plateau_best", CK_DOUBLE, 0, 0},
    {"plateau_bad_epochs", CK_UINT, 1000000, 0},
    {"plateau_epoch", CK_UINT, 1000000, 0},
    {"early_stopping_epoch", CK_UINT, 1000000, 0},
    {"early_stopping_best_epoch", CK_UINT, 1000000, 0},
    {"early_stopping_best_loss", CK_DOUBLE, 0, 0},
};
/* seen[]: the state keys, then the options (CK_OPTION_MAX of them at most) */
enum { CK_KEY_COUNT = sizeof ck_keys / sizeof ck_keys[0], CK_OPTION_MAX = 128,
       CK_SEEN_COUNT = CK_KEY_COUNT + CK_OPTION_MAX };

/* A plain decimal integer (digits only, no leading zero) up to max. */
static int ck_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s || (s[0] == '0' && s[1]))
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v > max)
        return 0;
    *out = v;
    return 1;
}

/* "a,b,c,d": four decimal uint64, not all zero (xoshiro256** has no zero state). */
static int ck_parse_rng(const char *s, uint64_t *rng)
{
    char part[24];
    for (int i = 0; i < 4; i++) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= sizeof part || (i < 3) != (s[n] == ','))
            return 0;
        memcpy(part, s, n);
        part[n] = '\0';
        if (!ck_parse_uint(part, UINT64_MAX, &rng[i]))
            return 0;
        s += n + (i < 3);
    }
    return *s == '\0' && (rng[0] | rng[1] | rng[2] | rng[3]) != 0;
}

/* Store state key k with value v into m; 0 when v does not parse. */
static int ck_store(ck_meta *m, const ck_key *k, const char *v)
{
    uint64_t u = 0;
    const char *name = k->name;
    if (k->kind == CK_TEXT) {
        if (!strcmp(name, "ffnn_version")) m->version = v;
        else if (!strcmp(name, "arch")) m->arch = v;
        return 1;
    }
    if (k->kind == CK_RNG)
        return ck_parse_rng(v, m->rng);
    if (k->kind == CK_DOUBLE) { /* a decimal double; a best metric also "inf" (none yet) */
        char *end = NULL;
        errno = 0;
        double d = strtod(v, &end);
        if (strcmp(name, "plateau_lr") != 0 && !strcmp(v, "inf"))
            d = HUGE_VAL;
        else if (errno || !*v || *end || !isfinite(d) || strpbrk(v, "xXnNiI"))
            return 0;
        if (!strcmp(name, "plateau_lr")) m->plateau.lr = d;
        else if (!strcmp(name, "plateau_best")) m->plateau.best = d;
        else m->es_best_loss = d;
        return 1;
    }
    if (!ck_parse_uint(v, k->max, &u))
        return 0;
    if (!strcmp(name, "train_count")) m->train_count = (size_t)u;
    else if (!strcmp(name, "train_crc32")) m->train_crc32 = (uint32_t)u;
    else if (!strcmp(name, "epoch")) m->epoch = (int)u;
    else if (!strcmp(name, "step")) m->step = (size_t)u;
    else if (!strcmp(name, "steps_per_epoch")) m->steps_per_epoch = (size_t)u;
    else if (!strcmp(name, "optimizer_steps")) m->optimizer_steps = u;
    else if (!strcmp(name, "plateau_bad_epochs")) m->plateau.bad_epochs = (int)u;
    else if (!strcmp(name, "plateau_epoch")) m->plateau_epoch = (int)u;
    else if (!strcmp(name, "early_stopping_epoch")) m->es_epoch = (int)u;
    else if (!strcmp(name, "early_stopping_best_epoch")) m->es_best_epoch = (int)u;
    return 1;
}

/* Read the value v of option o (its checkpoint key) into m->cfg: the checkpoint's
 * spelling (integers plain decimal, no sign or leading zero; numbers finite
 * decimal; bools "true"/"false"), then the option's own range. */
static ffnn_status ck_store_option(const st_reader *r, ck_meta *m, const ffnn_train_option *o,
                                   const char *v)
{
    char range[96], rest[96];
    uint64_t u = 0;
    int ok = 1;
    snprintf(range, sizeof range, "%c%.17g, %.17g%c", o->limit.min_open ? '(' : '[',
             o->limit.min, o->limit.max, o->limit.max_open ? ')' : ']');
    switch (o->type) {
    case FFNN_OPTION_INT: case FFNN_OPTION_SIZE: case FFNN_OPTION_U64:
        ok = ck_parse_uint(v, UINT64_MAX, &u);
        break;
    case FFNN_OPTION_FLOAT: ok = *v && !strpbrk(v, "xXnNiI"); break;
    case FFNN_OPTION_BOOL: ok = !strcmp(v, "true") || !strcmp(v, "false"); break;
    default: break;
    }
    if (ok && ffnn_option_parse(&m->cfg, o, v) == FFNN_OK)
        return FFNN_OK;
    switch (o->type) {
    case FFNN_OPTION_INT: case FFNN_OPTION_SIZE: case FFNN_OPTION_U64:
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected a decimal integer in %s, found "
                            "\"%.40s\"", o->checkpoint_key, range, v);
    case FFNN_OPTION_FLOAT:
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected a finite decimal number in %s, "
                            "found \"%.40s\"", o->checkpoint_key, range, v);
    case FFNN_OPTION_BOOL:
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected \"true\" or \"false\", found "
                            "\"%.40s\"", o->checkpoint_key, v);
    case FFNN_OPTION_INT_LIST:
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected 1 to %d increasing integers in "
                            "%s joined by ',', found \"%.40s\"", o->checkpoint_key,
                            FFNN_LR_MILESTONES_MAX, range, v);
    case FFNN_OPTION_ENUM: break;
    }
    snprintf(rest, sizeof rest, ": header: __metadata__ \"%s\"", o->checkpoint_key);
    return ffnn_fail_context_at(FFNN_ERR_FORMAT, r->path, rest); /* the names accepted */
}

/* Is option o's key required (1), refused (0) or optional (2) for this optimizer?
 * (Hyperparameters of other optimizers are not written, and refused when
 * present.) */
static int ck_option_applies(const ffnn_train_option *o, ffnn_optimizer opt)
{
    const int adam = opt == FFNN_OPT_ADAM || opt == FFNN_OPT_ADAMW;
    switch (o->checkpoint) {
    case FFNN_CK_ALWAYS: return 1;
    case FFNN_CK_MOMENTUM: return opt == FFNN_OPT_MOMENTUM;
    case FFNN_CK_ADAM: return adam;
    default: return 2;
    }
}

/* 1 when key name (a state key or an option's key) was seen. */
static int ck_seen(const unsigned char *seen, const char *name)
{
    for (size_t k = 0; k < CK_KEY_COUNT; k++)
        if (!strcmp(ck_keys[k].name, name))
            return seen[k];
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        if (o->checkpoint_key && !strcmp(o->checkpoint_key, name))
            return seen[CK_KEY_COUNT + i];
    }
    return 0;
}

/* Early stopping's keys: with "early_stopping" (the patience) all of its state,
 * else none, and a state the position can hold. */
static ffnn_status ck_check_early_stopping(const st_reader *r, const unsigned char *seen,
                                           const ck_meta *m)
{
    static const char *const state[] = {"early_stopping_epoch", "early_stopping_best_epoch",
                                        "early_stopping_best_loss"};
    const int on = ck_seen(seen, "early_stopping");
    for (size_t i = 0; i < sizeof state / sizeof state[0]; i++) {
        if (ck_seen(seen, state[i]) && !on)
            return ffnn_st_fail(r, "__metadata__: unexpected \"%s\" without \"early_stopping\" "
                                "(early stopping's state comes with its patience)", state[i]);
        if (!ck_seen(seen, state[i]) && on)
            return ffnn_st_fail(r, "__metadata__: missing \"%s\" (a checkpoint with "
                                "\"early_stopping\" records it)", state[i]);
    }
    if (!on)
        return FFNN_OK;
    if (m->cfg.early_stopping < 1)
        return ffnn_st_fail(r, "__metadata__ \"early_stopping\": expected a patience in [1, "
                            "1000000], found \"%d\"", m->cfg.early_stopping);
    /* the epochs finished at this position: those early stopping can have seen */
    const int finished = m->epoch == 0 ? 0
                         : m->step == m->steps_per_epoch ? m->epoch : m->epoch - 1;
    if (m->es_epoch > finished)
        return ffnn_st_fail(r, "__metadata__ \"early_stopping_epoch\": %d, expected at most %d "
                            "(the epochs finished at epoch %d, step %zu of %zu)", m->es_epoch,
                            finished, m->epoch, m->step, m->steps_per_epoch);
    if (m->es_best_epoch > m->es_epoch)
        return ffnn_st_fail(r, "__metadata__ \"early_stopping_best_epoch\": %d, expected at "
                            "most \"early_stopping_epoch\" %d (an epoch early stopping has "
                            "seen)", m->es_best_epoch, m->es_epoch);
    if (m->es_best_epoch > 0 && !isfinite(m->es_best_loss))
        return ffnn_st_fail(r, "__metadata__ \"early_stopping_best_loss\": expected a finite "
                            "number (the metric of early_stopping_best_epoch %d), found "
                            "\"inf\"", m->es_best_epoch);
    if (m->es_best_epoch == 0 && isfinite(m->es_best_loss))
        return ffnn_st_fail(r, "__metadata__ \"early_stopping_best_loss\": expected \"inf\" "
                            "(early_stopping_best_epoch 0: no best epoch yet), found \"%.17g\"",
                            m->es_best_loss);
    return FFNN_OK;
}

/* One key of __metadata__ into m (format: *format); seen[] marks it. */
static ffnn_status ck_read_key(const st_reader *r, const cJSON *c, ck_meta *m,
                               unsigned char *seen, const char **format)
{
    char found[64];
    size_t k = 0, i = 0;
    const size_t options = ffnn_train_option_count();
    while (k < CK_KEY_COUNT && strcmp(ck_keys[k].name, c->string) != 0)
        k++;
    while (k == CK_KEY_COUNT && i < options &&
           (!ffnn_train_option_at(i)->checkpoint_key ||
            strcmp(ffnn_train_option_at(i)->checkpoint_key, c->string) != 0))
        i++;
    if (k == CK_KEY_COUNT && i == options)
        return ffnn_st_fail(r, "__metadata__: unknown key \"%s\" (docs/FORMATS.md lists "
                            "a checkpoint's keys)", c->string);
    if (!cJSON_IsString(c)) {
        ffnn_st_describe(c, found, sizeof found);
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected a string value, found %s",
                            c->string, found);
    }
    if (k == CK_KEY_COUNT) {
        seen[CK_KEY_COUNT + i] = 1;
        return ck_store_option(r, m, ffnn_train_option_at(i), c->valuestring);
    }
    seen[k] = 1;
    if (!strcmp(c->string, "format")) {
        *format = c->valuestring;
    } else if (!ck_store(m, &ck_keys[k], c->valuestring)) {
        char range[48] = "";
        const char *expected = ck_keys[k].kind == CK_UINT ? "a decimal integer"
                               : ck_keys[k].kind == CK_RNG
                                   ? "four decimal 64-bit integers joined by commas, not all 0"
                                   : "a finite decimal number";
        if (ck_keys[k].kind == CK_UINT)
            snprintf(range, sizeof range, " in [0, %llu]", (unsigned long long)ck_keys[k].max);
        return ffnn_st_fail(r, "__metadata__ \"%s\": expected %s%s, found \"%.40s\"", c->string,
                            expected, range, c->valuestring);
    }
    return FFNN_OK;
}

/* Every required key is there and no other optimizer's is; the position is one
 * a run can reach. */
static ffnn_status ck_check_keys(const st_reader *r, const unsigned char *seen, const ck_meta *m)
{
    for (size_t k = 0; k < CK_KEY_COUNT; k++)
        if (!seen[k] && ck_keys[k].required)
            return ffnn_st_fail(r, "__metadata__: missing \"%s\"", ck_keys[k].name);
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        int applies = ck_option_applies(o, m->cfg.optimizer);
        if (!o->checkpoint_key)
            continue;
        if (!seen[CK_KEY_COUNT + i] && applies == 1)
            return ffnn_st_fail(r, "__metadata__: missing \"%s\" (a checkpoint of optimizer "
                                "%s records it)", o->checkpoint_key,
                                ffnn_optimizer_name(m->cfg.optimizer));
        if (seen[CK_KEY_COUNT + i] && !applies)
            return ffnn_st_fail(r, "__metadata__: unexpected \"%s\" for optimizer %s",
                                o->checkpoint_key, ffnn_optimizer_name(m->cfg.optimizer));
    }
    if (m->cfg.batch_size < 1 || m->train_count < m->cfg.batch_size ||
        m->steps_per_epoch != (m->cfg.drop_last ? m->train_count / m->cfg.batch_size
                               : (m->train_count + m->cfg.batch_size - 1) / m->cfg.batch_size))
        return ffnn_st_fail(r, "__metadata__: steps_per_epoch %zu, expected %s(train_count "
                            "%zu / batch_size %zu), with 1 <= batch_size <= train_count",
                            m->steps_per_epoch, m->cfg.drop_last ? "floor" : "ceil",
                            m->train_count, m->cfg.batch_size);
    if (m->step > m->steps_per_epoch || (m->epoch == 0 && m->step != 0))
        return ffnn_st_fail(r, "__metadata__: epoch %d, step %zu: expected a step in [0, "
                            "steps_per_epoch %zu] (0 at epoch 0)", m->epoch, m->step,
                            m->steps_per_epoch);
    uint64_t expected = m->epoch == 0 ? 0
                        : (uint64_t)(m->epoch - 1) * m->steps_per_epoch + m->step;
    if (m->optimizer_steps != expected)
        return ffnn_st_fail(r, "__metadata__: optimizer_steps %llu, expected %llu (epoch %d, "
                            "step %zu, %zu steps per epoch)",
                            (unsigned long long)m->optimizer_steps,
                            (unsigned long long)expected, m->epoch, m->step,
                            m->steps_per_epoch);
    return ck_check_early_stopping(r, seen, m);
}

/* Parse and check __metadata__ into *m (m->cfg: base, or zero, with the keys
 * found; an optional option the file does not record: its default). */
ffnn_status ffnn_ck_read_metadata(const st_reader *r, const ffnn_train_config *base, ck_meta *m)
{
    const cJSON *md = NULL;
    const char *format = NULL;
    unsigned char seen[CK_SEEN_COUNT] = {0};
    ffnn_status st;

    memset(m, 0, sizeof *m);
    if (base)
        m->cfg = *base;
    const ffnn_train_config d = ffnn_train_config_default();
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        if (o->checkpoint == FFNN_CK_OPTIONAL) /* absent: the default */
            memcpy((char *)&m->cfg + o->offset, (const char *)&d + o->offset, o->size);
        if (o->type == FFNN_OPTION_INT_LIST && o->checkpoint == FFNN_CK_OPTIONAL)
            memcpy((char *)&m->cfg + o->count_offset, (const char *)&d + o->count_offset,
                   sizeof(int));
    }
    m->plateau.best = HUGE_VAL;
    m->es_best_loss = HUGE_VAL;
    m->version = "";
    if (ffnn_train_option_count() > CK_OPTION_MAX)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "checkpoint reader: %zu options, room for "
                         "%d (raise CK_OPTION_MAX)", ffnn_train_option_count(), CK_OPTION_MAX);
    if ((st = ffnn_st_metadata_object(r, "an ffnn checkpoint records format \"" CK_FORMAT
                                      "\" and the run's state there", &md)) != FFNN_OK)
        return st;
    for (const cJSON *c = md->child; c; c = c->next)
        if ((st = ck_read_key(r, c, m, seen, &format)) != FFNN_OK)
            return st;
    if (!format || strcmp(format, CK_FORMAT) != 0)
        return ffnn_st_fail(r, "__metadata__ \"format\": expected \"" CK_FORMAT "\", found "
                            "%s%.40s%s%s", format ? "\"" : "", format ? format : "none",
                            format ? "\"" : "",
                            format && !strcmp(format, "ffnn-model")
                                ? " (a model file: load it with ffnn_model_load, not as a checkpoint)" : "");
    if (strlen(m->version) >= CK_VERSION_MAX)
        return ffnn_st_fail(r, "__metadata__ \"ffnn_version\": expected at most %d "
                            "characters, found %zu", CK_VERSION_MAX - 1, strlen(m->version));
    if (!ck_seen(seen, "optimizer") || !ck_seen(seen, "loss"))
        return ffnn_st_fail(r, "__metadata__: missing \"%s\"",
                            ck_seen(seen, "loss") ? "optimizer" : "loss");
    return ck_check_keys(r, seen, m);
}

/* ------------------------------------------------------------ writing */

static int ck_add_text(cJSON *md, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* md[key] = the formatted text, at any length; 0 when out of memory. */
static int ck_add_text(cJSON *md, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!text)
        return 0;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int ok = cJSON_AddStringToObject(md, key, text) != NULL;
    free(text);
    return ok;
}

/* __metadata__ of run state s (architecture string arch); 0 when out of memory.
 * The options as the table says (core/train_options.def: always, with their
 * optimizer, or when not the default), then the schedule's and early stopping's
 * state, then the position. */
int ffnn_ck_fill_metadata(cJSON *md, const ffnn_run_state *s, const char *arch)
{
    const ffnn_train_config *c = &s->cfg;
    char text[FFNN_OPTION_LIST_TEXT_MAX];
    int ok = ck_add_text(md, "format", CK_FORMAT) &&
             ck_add_text(md, "ffnn_version", FFNN_VERSION) &&
             ck_add_text(md, "arch", "%s", arch);
    for (size_t i = 0; ok && i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        const int applies = ck_option_applies(o, c->optimizer);
        if (!o->checkpoint_key || !applies ||
            (applies == 2 && ffnn_option_is_default(c, o)))
            continue;
        ok = ffnn_option_format(c, o, text, sizeof text) &&
             cJSON_AddStringToObject(md, o->checkpoint_key, text) != NULL;
    }
    if (ok && c->lr_schedule == FFNN_LR_PLATEAU)
        ok = ck_add_text(md, "plateau_lr", "%.17g", s->plateau.lr) &&
             (isfinite(s->plateau.best) ? ck_add_text(md, "plateau_best", "%.17g", s->plateau.best)
                                        : ck_add_text(md, "plateau_best", "inf")) &&
             ck_add_text(md, "plateau_bad_epochs", "%d", s->plateau.bad_epochs) &&
             ck_add_text(md, "plateau_epoch", "%d", s->plateau_epoch);
    if (ok && c->early_stopping > 0) /* its state; the best metric exact (%.17g) */
        ok = ck_add_text(md, "early_stopping_epoch", "%d", s->es_epoch) &&
             ck_add_text(md, "early_stopping_best_epoch", "%d", s->es_best_epoch) &&
             (s->es_best_epoch > 0
                  ? ck_add_text(md, "early_stopping_best_loss", "%.17g", s->es_best_loss)
                  : ck_add_text(md, "early_stopping_best_loss", "inf"));
    return ok && ck_add_text(md, "train_count", "%zu", s->train_count) &&
           ck_add_text(md, "train_crc32", "%lu", (unsigned long)s->train_crc32) &&
           ck_add_text(md, "epoch", "%d", s->epoch) &&
           ck_add_text(md, "step", "%zu", s->step) &&
           ck_add_text(md, "steps_per_epoch", "%zu", s->steps_per_epoch) &&
           ck_add_text(md, "optimizer_steps", "%llu", (unsigned long long)s->optimizer_steps) &&
           ck_add_text(md, "shuffle_rng", "%llu,%llu,%llu,%llu",
                       (unsigned long long)s->epoch_rng[0], (unsigned long long)s->epoch_rng[1],
                       (unsigned long long)s->epoch_rng[2], (unsigned long long)s->epoch_rng[3]);
}
