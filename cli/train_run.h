/* train_run.h - ffnn train after its options are parsed (cmd_train.c): the
 * options, its data (train_data.c) and the run itself (train_run.c). */
#ifndef FFNN_CLI_TRAIN_RUN_H
#define FFNN_CLI_TRAIN_RUN_H

#include "checkpoints.h"
#include "ffnn.h"
#include "tabular.h"

/* The options of one ffnn train run. */
/* Room for an architecture string ffnn train makes: a table's embedding layer
 * (up to 64 tables) included. */
enum { FFNN_CLI_ARCH_SIZE = 1536 };

typedef struct ffnn_cli_train_options {
    const char *data;          /* --data DIR or synth:... (or NULL: the default)     */
    int class_a, class_b;      /* --classes A,B (class_a < 0: all classes)           */
    int regression;            /* float targets with mse: no accuracy is printed     */
    const char *arch;          /* --arch STR (or NULL)                               */
    ffnn_train_config cfg;
    long long train_limit;     /* --train-limit N (0: all)                           */
    int json;                  /* --json: one JSON object per epoch                  */
    int print_every;           /* --print-every N: an epoch's line every N epochs    */
    int quiet;                 /* --quiet: no progress bar, only the last epoch line */
    const char *save_path;     /* --save FILE (or NULL)                              */
    const char *init_path;     /* --init FILE (or NULL)                              */
    const char *log_steps;     /* --log-steps FILE (or NULL): per-step losses, CSV   */
    const char *log_path;      /* --log FILE (or NULL): per-epoch metrics, CSV       */
    int loss_given;            /* --loss was given (else --init's file decides)      */
    const char *momentum_flag; /* the last of --momentum, --nesterov given (or NULL) */
    const char *adam_flag;     /* the last of --beta1, --beta2, --eps given (or NULL) */
    int weight_decay_given;    /* --weight-decay was given (adamw's default: 0.01)   */
    const char *checkpoint_path; /* --checkpoint FILE (or NULL)                      */
    long long checkpoint_every;  /* --checkpoint-every N (0: epoch ends only)        */
    long long max_steps;         /* --max-steps N (0: no limit)                      */
    const char *resume_path;     /* --resume FILE (or NULL)                          */
    ffnn_cli_given given;        /* which settings were given (--resume checks them) */
    int argc;                    /* the command line after "ffnn", for the resume   */
    char **argv;                 /* command printed after an interrupt              */
    int gpus;                    /* --gpus N (0: not given, -1: all)                 */
    int comm_timing;             /* --comm-timing: time the all-reduce               */
    ffnn_cli_table_options table; /* --labels, --header, --delimiter, --target ...  */
    ffnn_cli_embedding_options embedding; /* --max-one-hot, --embedding-dim          */
    const char *test_path;       /* --test FILE (or NULL)                          */
    double test_split, val_split; /* --test-split F, --val-split F (0: none)       */
    int standardize;             /* --standardize                                  */
    int allow_many_classes;      /* --allow-many-classes (train_tasks.h)           */
    const char *class_weight;    /* --class-weight balanced|LABEL:W,... (or NULL)  */
    const char *sample_weight;   /* --sample-weight COL|w.npy (or NULL)            */
    int cv;                      /* --cv K (0: none)                               */
} ffnn_cli_train_options;

/* Train model on train, evaluating on test after every epoch: the two header
 * lines (data_description names the data), one line (or JSON object) per epoch,
 * the progress bar on a terminal, --log / --log-steps, checkpoints, --resume's
 * continuation and --save. SIGINT/SIGTERM (interrupt.h): the run stops after
 * the current step or launch, writes the checkpoint (--checkpoint) and the model
 * (--save, marked interrupted), prints where it stopped and the command that
 * resumes. Returns the exit status (0; 1 with the message printed; 130 after an
 * interrupt). comm (or NULL): this process's or thread's rank of a data-parallel
 * run: rank 0 alone prints, evaluates, logs and saves; every rank takes part in
 * the checkpoints (collective); an error of one rank alone is printed with its
 * rank and stops every rank (ffnn_comm_abort). */
/* ffnn train's options from argv (argv[0] is the command's word): parsed, checked
 * against each other and the output paths checked, into *o. 0; -1 after --help
 * (exit 0); else the exit status, the message printed. */
int ffnn_cli_train_parse(int argc, char **argv, ffnn_cli_train_options *o);

/* The data of o: --data (or the default data) split as o says into *train, *val
 * and *test (each may come back NULL but train), a one-line description, and the
 * architecture ffnn train uses without --arch (arch; o->cfg.loss becomes mse for
 * float targets unless --loss). 0, or 1 with the message printed. */
int ffnn_cli_train_data(ffnn_cli_train_options *o, ffnn_dataset **train, ffnn_dataset **val,
                        ffnn_dataset **test, char *arch, size_t arch_size, char *description,
                        size_t description_size);

/* Before training model: the training set's class names and table encoding into
 * the model, and --standardize's statistics (fitted on sets[0], the training set);
 * std[3] gets the copies of sets (train, val, test; NULL entries stay NULL) the
 * trainer sees, the sets themselves when not standardising (free only those that
 * differ). 0, or 1 with the message printed. */
int ffnn_cli_train_prepare(const ffnn_cli_train_options *o, ffnn_model *model,
                           ffnn_dataset *sets[3], ffnn_dataset *std[3]);

int ffnn_cli_train_run(const ffnn_cli_train_options *o, ffnn_model *model, ffnn_dataset *train,
                       ffnn_dataset *val, ffnn_dataset *test, const char *data_description,
                       ffnn_comm *comm);

#endif
