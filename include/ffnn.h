/*
 * ffnn.h - the public C API of ffnn: feed-forward neural networks trained with
 * hand-written kernels on the CPU (plain C reference) and on NVIDIA GPUs (CUDA).
 *
 * Conventions
 *   - Every fallible function returns an ffnn_status; FFNN_OK is 0. On failure a
 *     one-line message (what, where, expected, found) is available from
 *     ffnn_last_error() until the next failing call on the same thread.
 *   - The library never calls exit() or abort() and never writes to stdout.
 *   - Objects come in create/free pairs; *_free(NULL) is a no-op.
 *   - Tensors are row-major float32. A dense layer's weight is [out, in] (PyTorch
 *     nn.Linear order), its bias [out]; a local1d layer's weight is [out, R] (the
 *     R weights of each output), its bias [out].
 *   - Nothing is global: every call takes the object it works on. The only
 *     per-thread state is the error message.
 */
#ifndef FFNN_H
#define FFNN_H

#include <stddef.h>
#include <stdint.h>

/* FFNN_API marks the public functions: the only symbols libffnn.so exports (the
 * library is built with -fvisibility=hidden; tools/check_abi.sh checks that the
 * exported symbols are exactly the functions declared here). */
#if defined(__GNUC__) || defined(__clang__)
#define FFNN_API __attribute__((visibility("default")))
#else
#define FFNN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header: MAJOR changes with an incompatible change of the ABI (it
 * is the shared library's soname: libffnn.so.MAJOR), MINOR with additions, PATCH with
 * fixes. FFNN_VERSION is the same as a string, written into model files and checkpoints.
 * ffnn_version() gives the version of the library actually linked (at run time). */
#define FFNN_VERSION_MAJOR 0
#define FFNN_VERSION_MINOR 1
#define FFNN_VERSION_PATCH 0
#define FFNN_VERSION_STR_(x) #x
#define FFNN_VERSION_STR(x) FFNN_VERSION_STR_(x)
#define FFNN_VERSION                                                                      \
    FFNN_VERSION_STR(FFNN_VERSION_MAJOR) "." FFNN_VERSION_STR(FFNN_VERSION_MINOR) "."      \
    FFNN_VERSION_STR(FFNN_VERSION_PATCH)

/* The library's version, "MAJOR.MINOR.PATCH" (FFNN_VERSION of the build of libffnn that
 * runs; compare it with the header's FFNN_VERSION to detect a mismatch); *major,
 * *minor, *patch (each may be NULL) receive its numbers. Static string; never fails. */
FFNN_API const char *ffnn_version(int *major, int *minor, int *patch);

/* sizeof the public struct of that name in this build of the library
 * ("ffnn_train_config", "ffnn_epoch_stats", "ffnn_model_file_info",
 * "ffnn_checkpoint_info", "ffnn_train_option", "ffnn_sweep_state"), 0 for another name: a binding
 * that mirrors a struct (python/ffnn/_lib.py) checks its copy against it before
 * using it. Never fails. */
FFNN_API size_t ffnn_struct_size(const char *name);

/* ------------------------------------------------------------------ status */

typedef enum ffnn_status {
    FFNN_OK = 0,
    FFNN_ERR_INVALID_ARGUMENT = 1, /* a value out of range, a NULL pointer      */
    FFNN_ERR_PARSE = 2,            /* malformed architecture string or option   */
    FFNN_ERR_IO = 3,               /* a file could not be opened/read/written   */
    FFNN_ERR_FORMAT = 4,           /* a file's contents are malformed           */
    FFNN_ERR_NO_MEMORY = 5,        /* host allocation failed                    */
    FFNN_ERR_CUDA = 6,             /* a CUDA call or launch failed              */
    FFNN_ERR_UNSUPPORTED = 7,      /* e.g. --device cuda in a build without CUDA */
    FFNN_ERR_NUMERIC = 8           /* NaN or Inf in the loss                    */
} ffnn_status;

/* The message of the last failure on this thread ("" if none). The pointer is
 * owned by the library and stays valid until the next ffnn call on this thread. */
FFNN_API const char *ffnn_last_error(void);

/* Copy text into out [size bytes] with every control character and every byte that is
 * not part of valid UTF-8 written as the four characters \xNN (lower-case hex): the C0
 * controls 0x00-0x1F, DEL 0x7F, the C1 controls (UTF-8 C2 80 .. C2 9F) and stray bytes
 * (raw 0x80 .. 0xFF outside a valid sequence, e.g. 8-bit C1 controls); valid UTF-8
 * characters are copied as they are. The result is truncated between characters to at
 * most size - 1 bytes and always NUL-terminated; with size 0 nothing is written. The
 * library applies it to every message of ffnn_last_error(); use it on bytes from files
 * or users (field names, metadata) before printing them to a terminal, so they cannot
 * send escape sequences (docs/SECURITY.md). text and out must not overlap. Never fails;
 * thread-safe (touches only out). */
FFNN_API void ffnn_escape_controls(const char *text, char *out, size_t size);

/* The length in bytes (1-4) of the valid UTF-8 sequence at s [n bytes]: shortest form,
 * no surrogates (U+D800 .. U+DFFF), at most U+10FFFF (RFC 3629, section 4); 0 when s
 * does not start one, or n is 0 or too short for it. Never fails; thread-safe. */
FFNN_API size_t ffnn_utf8_length(const unsigned char *s, size_t n);

/* Check every symbolic link on path (each prefix that ends a component, the path itself
 * included) against the rule of Linux's fs.protected_symlinks: a link in a sticky,
 * world-writable directory (/tmp, /dev/shm) is refused unless it belongs to this
 * process's effective user or to the directory's owner (another account could have
 * planted it there). The library's file writes (ffnn_model_save, checkpoints) run it;
 * run it on a path before writing a file there yourself. *final_is_link (may be NULL)
 * is set to 1 when path itself is a link, else 0 (components that do not exist are
 * not links). Errors: FFNN_ERR_IO naming path, the link, its owner and the directory;
 * FFNN_ERR_NO_MEMORY. Thread-safe; reads the file system (lstat, stat), changes nothing. */
FFNN_API ffnn_status ffnn_check_path_links(const char *path, int *final_is_link);

/* A short name for a status code, e.g. "format error". */
FFNN_API const char *ffnn_status_name(ffnn_status status);

/* ------------------------------------------------------------------ enums */

typedef enum ffnn_activation {
    FFNN_ACT_IDENTITY = 0, /* f(z) = z                                   */
    FFNN_ACT_RELU = 1,     /* f(z) = max(0, z)                           */
    FFNN_ACT_SIGMOID = 2,  /* f(z) = 1 / (1 + exp(-z))                   */
    FFNN_ACT_TANH = 3,     /* f(z) = tanh(z)                             */
    FFNN_ACT_LEAKY_RELU = 4, /* f(z) = z > 0 ? z : s z, negative slope s >= 0 (default
                              0.01; torch.nn.LeakyReLU(s))                    */
    FFNN_ACT_ELU = 5,      /* f(z) = z > 0 ? z : alpha (exp(z) - 1), alpha > 0 (default
                              1; torch.nn.ELU(alpha))                         */
    FFNN_ACT_SOFTPLUS = 6, /* f(z) = log(1 + exp(z)), z for z > 20
                              (torch.nn.Softplus(), beta 1, threshold 20)  */
    FFNN_ACT_GELU = 7,     /* f(z) = z Phi(z) = z (1 + erf(z / sqrt 2)) / 2, the exact
                              form (torch.nn.GELU())                           */
    FFNN_ACT_GELU_TANH = 8,/* f(z) = z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) / 2
                              (torch.nn.GELU(approximate='tanh'))             */
    FFNN_ACT_SILU = 9,     /* f(z) = z / (1 + exp(-z)) (torch.nn.SiLU())    */
    FFNN_ACT_MISH = 10,    /* f(z) = z tanh(log(1 + exp(z))) (torch.nn.Mish()) */
    FFNN_ACT_HARDSWISH = 11 /* f(z) = z min(max(z + 3, 0), 6) / 6 (torch.nn.Hardswish()) */
} ffnn_activation;

typedef enum ffnn_loss {
    FFNN_LOSS_SOFTMAX_CE = 0, /* softmax cross-entropy on logits; target: class index */
    FFNN_LOSS_SIGMOID_BCE = 1,/* sigmoid binary cross-entropy on logits               */
    FFNN_LOSS_MSE = 2         /* mean squared error on the outputs                    */
} ffnn_loss;

typedef enum ffnn_device {
    FFNN_DEVICE_AUTO = 0, /* cuda when the build has CUDA and a GPU is present, else cpu */
    FFNN_DEVICE_CPU = 1,
    FFNN_DEVICE_CUDA = 2
} ffnn_device;

/* Training strategy of the cuda backend (seeds 000/001, docs/PERFORMANCE.md), or the
 * cpu reference by name. The OpenMP cpu backend ignores the cuda strategies. Every
 * strategy trains the same model with the same arithmetic up to float rounding order
 * (per-step loss within 1e-4 relative of the cpu reference over 200 steps,
 * tests/test_strategies.c). */
typedef enum ffnn_strategy {
    FFNN_STRATEGY_TILED = 0,  /* one launch per op; shared-memory tiled matmuls       */
    FFNN_STRATEGY_NAIVE = 1,  /* one launch per op; one thread per output element     */
    FFNN_STRATEGY_CUBLAS = 2, /* cuBLAS matmuls (the named comparator) with ffnn's own
                                element-wise, loss and update kernels               */
    FFNN_STRATEGY_FUSED = 3,  /* register-blocked matmuls with bias + activation in the
                                epilogue, the activation derivative in the backward
                                matmul and the SGD update in the weight-gradient kernel */
    FFNN_STRATEGY_GRAPH = 4,  /* the fused path with whole runs of steps captured in
                                one CUDA graph: nothing per step on the host          */
    FFNN_STRATEGY_PERSISTENT = 5, /* one cooperative kernel runs many steps, weights
                                held on chip, grid barriers between phases (dense
                                nets with one hidden layer, softmax_ce or mse, sgd) */
    FFNN_STRATEGY_AUTO = 6,   /* the fastest correct strategy for the network and batch
                                (default; the choice is documented in PERFORMANCE.md);
                                on the cpu: the OpenMP backend                      */
    FFNN_STRATEGY_CUBLASLT = 7, /* cuBLASLt matmuls with its epilogues (bias + relu in the
                                forward, the bias gradient in the weight-gradient
                                matmul), the comparator for "fused"; runs of steps in
                                CUDA graphs as cublas */
    FFNN_STRATEGY_REFERENCE = 8, /* the cpu reference (src/backend/cpu/): every op in
                                plain C on one thread, as written - the backend all the
                                others are tested against; slow (about 30x the
                                OpenMP backend on one thread, docs/PERFORMANCE.md).
                                Runs on the cpu: device auto becomes cpu, device
                                cuda is refused                                   */
    FFNN_STRATEGY_TUNE = 9,     /* auto by measurement: on cuda, ffnn_trainer_create times
                                each candidate (persistent where it fits, graph, fused,
                                cublas, cublaslt; those that take cfg.precision) on a
                                copy of the model, the first 128 batches of the data
                                and this config, in this process (a warm-up epoch of
                                those, then >= 20 ms or one real epoch of steps
                                timed), and trains with the fastest
                                (ffnn_trainer_strategy_note has the times). The pick
                                can differ between processes (cuBLAS's speed does),
                                so two tune runs may differ by float rounding; auto
                                stays the deterministic rule. On the cpu and in
                                data-parallel training (ffnn_trainer_create_parallel
                                with a communicator) it is auto                    */
    FFNN_STRATEGY_BATCHED = 10  /* sweeps only (ffnn_sweep_create): the models of a sweep
                                trained together on one GPU, one kernel launch per op
                                for all of them (the model index in the grid: the
                                fused strategy's kernels, K unsplit); plain sgd on
                                dense nets, docs/SWEEP.md. A trainer alone refuses it */
} ffnn_strategy;

/* Arithmetic of the cuda matmuls. fp32 everywhere else; tf32 and bf16 round the
 * matmul inputs (tensor cores) and accumulate in fp32; tf32x3 keeps fp32's accuracy
 * on the TF32 tensor cores (cublas and cublaslt strategies). */
typedef enum ffnn_precision {
    FFNN_PRECISION_FP32 = 0,  /* IEEE float32 multiply-adds (default)             */
    FFNN_PRECISION_TF32 = 1,  /* inputs rounded to TF32 (10-bit mantissa)         */
    FFNN_PRECISION_BF16 = 2,  /* inputs rounded to bfloat16 (7-bit mantissa)      */
    FFNN_PRECISION_TF32X3 = 3 /* "3xTF32": each input split as big + small, both
                                 TF32, and a b ~ a_big b_big + a_big b_small +
                                 a_small b_big in fp32 sums (the small x small term,
                                 ~2^-22 relative, dropped): products within ~2^-20
                                 relative, about fp32's accuracy (Ootomo & Yokota,
                                 IJHPCA 2022; CUTLASS's 3xTF32). fp32 tensors      */
} ffnn_precision;

/* How the gradient becomes an update (PyTorch's torch.optim semantics, see
 * ffnn_train_config for the hyperparameters). */
typedef enum ffnn_optimizer {
    FFNN_OPT_SGD = 0,      /* p -= lr * g                                        */
    FFNN_OPT_MOMENTUM = 1, /* buf = momentum*buf + g (buf = g at step 1);
                              p -= lr * buf, or lr * (g + momentum*buf) (Nesterov) */
    FFNN_OPT_ADAM = 2,     /* Adam with bias correction (no amsgrad); weight_decay: L2
                              added to the gradient, as torch.optim.Adam          */
    FFNN_OPT_ADAMW = 3     /* Adam with decoupled weight decay, as torch.optim.AdamW:
                              p *= 1 - lr weight_decay before the Adam update      */
} ffnn_optimizer;

/* Learning-rate schedules (torch.optim.lr_scheduler), stepped once per epoch
 * (epoch e, 0-based, runs at the rate after e scheduler steps), each with an
 * optional linear warm-up over the first warmup_steps optimizer steps
 * (ffnn_train_config has the settings; lr below is learning_rate):
 *   constant     lr                                       (no scheduler)
 *   step         lr gamma^floor(e / step_size)            StepLR
 *   multistep    lr gamma^(milestones <= e)               MultiStepLR
 *   exponential  lr gamma^e                               ExponentialLR
 *   cosine       eta_min + (lr - eta_min)(1 + cos(pi e / T_max)) / 2
 *                                                         CosineAnnealingLR
 *   linear       lr (1 + (end_factor - 1) min(e, total) / total)
 *                                          LinearLR(start_factor=1, end_factor, total)
 *   plateau      lr times factor after more than patience epochs without a
 *                relative improvement of threshold in the validation loss
 *                (else the training loss)             ReduceLROnPlateau(mode='min') */
typedef enum ffnn_lr_schedule {
    FFNN_LR_CONSTANT = 0,
    FFNN_LR_STEP = 1,
    FFNN_LR_MULTISTEP = 2,
    FFNN_LR_EXPONENTIAL = 3,
    FFNN_LR_COSINE = 4,
    FFNN_LR_LINEAR = 5,
    FFNN_LR_PLATEAU = 6
} ffnn_lr_schedule;

/* Room for multistep milestones in ffnn_train_config. */
#define FFNN_LR_MILESTONES_MAX 16

/* Parse names ("relu", "ce", "cpu", "tiled" ...). Return FFNN_ERR_PARSE on an
 * unknown name, with the accepted names in the message. */
FFNN_API ffnn_status ffnn_activation_from_name(const char *name, ffnn_activation *out);
FFNN_API ffnn_status ffnn_loss_from_name(const char *name, ffnn_loss *out);
FFNN_API ffnn_status ffnn_device_from_name(const char *name, ffnn_device *out);
FFNN_API ffnn_status ffnn_strategy_from_name(const char *name, ffnn_strategy *out);
FFNN_API ffnn_status ffnn_precision_from_name(const char *name, ffnn_precision *out);
FFNN_API ffnn_status ffnn_optimizer_from_name(const char *name, ffnn_optimizer *out);
FFNN_API ffnn_status ffnn_lr_schedule_from_name(const char *name, ffnn_lr_schedule *out);
FFNN_API const char *ffnn_activation_name(ffnn_activation a);
FFNN_API const char *ffnn_loss_name(ffnn_loss l);
FFNN_API const char *ffnn_device_name(ffnn_device d);
FFNN_API const char *ffnn_strategy_name(ffnn_strategy k);
FFNN_API const char *ffnn_precision_name(ffnn_precision p); /* "fp32", "tf32", "bf16",
                                                               "tf32x3" */
FFNN_API const char *ffnn_optimizer_name(ffnn_optimizer o); /* "sgd", "momentum", "adam",
                                                               "adamw" */
/* "constant", "step", "multistep", "exponential", "cosine", "linear", "plateau" */
FFNN_API const char *ffnn_lr_schedule_name(ffnn_lr_schedule s);

/* 1 when the CUDA backend is there, else 0. It is a module of its own,
 * libffnn-cuda.so (docs/BUILD.md "The CUDA module"), loaded the first time a GPU is
 * asked for: where a CUDA driver is installed, 1 when the module loads; elsewhere
 * (where it could not run) 1 when it is found, not loaded. */
FFNN_API int ffnn_has_cuda(void);
/* Number of usable CUDA GPUs (0 without CUDA or without a GPU). Never fails. */
FFNN_API int ffnn_cuda_device_count(void);
/* Name of GPU 0 into buf (e.g. "NVIDIA H100 80GB HBM3"); "" when none. */
FFNN_API void ffnn_cuda_device_name(char *buf, size_t buf_size);
/* Make GPU `device` (0 .. ffnn_cuda_device_count() - 1) the calling thread's CUDA
 * device (cudaSetDevice): the trainers, sweeps and predictors it creates from then
 * on live there. A thread starts on GPU 0. Errors: FFNN_ERR_INVALID_ARGUMENT (out
 * of range), FFNN_ERR_UNSUPPORTED (no GPU or no CUDA module), FFNN_ERR_CUDA.
 * ffnn_cuda_current_device: the calling thread's device, -1 without a GPU. */
FFNN_API ffnn_status ffnn_cuda_set_device(int device);
FFNN_API int ffnn_cuda_current_device(void);

/* ------------------------------------------------------------------ dataset */

/* A data set held in host memory. Features: uint8 [count, features] (images,
 * scaled to [0,1] by 1/255 when fed to a network) or float32 [count, features]
 * (fed as they are). Targets: int32 class labels [count] in [0, classes) or
 * float32 rows [count, target_width] (regression, or soft/multi-label targets
 * for bce). */
typedef struct ffnn_dataset ffnn_dataset;

/* Load an IDX image file and its IDX label file (MNIST, Fashion-MNIST, KMNIST
 * format: http://yann.lecun.com/exdb/mnist/). Either file may be gzip-compressed
 * (detected by its magic bytes 1f 8b, read through zlib) or raw.
 * Checks, before any allocation: magic 00 00, type byte 0x08 (unsigned byte),
 * 3 dimensions for images and 1 for labels, non-zero sizes, count*rows*cols
 * without overflow and equal to the payload size (no truncation, no trailing
 * bytes), equal image and label counts, labels < 256. labels_path may be NULL:
 * images only (e.g. for ffnn predict), every label 0.
 * Errors: FFNN_ERR_IO (cannot open/read), FFNN_ERR_FORMAT (message names the file,
 * the byte offset, what was expected and what was found). *out untouched on error. */
FFNN_API ffnn_status ffnn_dataset_load_idx(const char *images_path, const char *labels_path,
                                           ffnn_dataset **out);

/* Load "<dir>/train-images-idx3-ubyte[.gz]" etc.: the training pair into *train
 * and the test pair ("t10k-...") into *test. Either output may be NULL to skip it. */
FFNN_API ffnn_status ffnn_dataset_load_idx_dir(const char *dir, ffnn_dataset **train,
                                               ffnn_dataset **test);

/* A new data set holding copies of rows [first, first + count) of src. */
FFNN_API ffnn_status ffnn_dataset_slice(const ffnn_dataset *src, size_t first, size_t count,
                                        ffnn_dataset **out);

/* A data set from caller arrays (copied): float32 features x [count, features];
 * either int32 class labels [count] (target_width 0, targets NULL; classes =
 * largest label + 1) or float32 targets [count, target_width] (labels NULL).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (a zero size, a missing array, a negative
 * label, a NaN or Inf value: sample and index named),
 * FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_from_arrays(size_t count, size_t features, const float *x,
                                              const int32_t *labels, size_t target_width,
                                              const float *targets, ffnn_dataset **out);

/* The samples of src labelled a or b, in order, relabelled a -> 0 and b -> 1
 * (2 classes), e.g. MNIST's 0s and 1s (seed 004). Features are kept as they are.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (float targets, a or b negative,
 * a == b, no sample with either label), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_select_classes(const ffnn_dataset *src, int a, int b,
                                                 ffnn_dataset **out);

/* Synthetic data sets (float features), generated from ffnn's documented RNG;
 * the same spec and seed give the same samples on every machine:
 *   "synth:points[:N[:SEED]]"      seed 004's 2-D points, N (default 2100):
 *       x0 = 2u - 1, x1 = 2u - 1 (u uniform in [0, 1), 24 bits, two draws per
 *       sample), label 1 when x0 * x1 > 0 (quadrants one and three), else 0.
 *   "synth:regression[:N[:SEED]]"  seed 001's regression, N (default 2560):
 *       32 features x_j = 2u - 1, then e = u; one float target
 *       y = sum_j a_j x_j + sum_{k<16} c_k sqrt(x_{2k}^2 + x_{2k+1}^2) + 0.1 (e - 0.5)
 *       with a_j = 0.25 (-1)^j, c_k = 0.5 (-1)^k, computed in double, rounded once.
 *   "synth:motif[:N[:SEED]]"       1-D signals for local1d layers, N (default 5000):
 *       label = below(2), p = below(62), then 64 features x_j = 0.5 (2u - 1);
 *       the label's motif is added at x_p..x_{p+2}: (+1, -1, +1) for label 1,
 *       (+1, +1, -1) for label 0 (same sum and energy: only local shape differs).
 * *train gets N samples drawn from stream 2 of the seed (src/core/rng.h), *test
 * ceil(N/5) samples from stream 3; either may be NULL to skip it. SEED in the
 * spec, when given, replaces seed. src/data/synth.c has the details.
 * Errors: FFNN_ERR_PARSE (message: the spec, the column, what was expected),
 * FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_synthetic(const char *spec, uint64_t seed, ffnn_dataset **train,
                                            ffnn_dataset **test);

FFNN_API void ffnn_dataset_free(ffnn_dataset *ds);
FFNN_API size_t ffnn_dataset_count(const ffnn_dataset *ds);      /* samples                 */
FFNN_API size_t ffnn_dataset_features(const ffnn_dataset *ds);   /* values per sample       */
FFNN_API int ffnn_dataset_classes(const ffnn_dataset *ds);       /* max label + 1 (a slice keeps
                                                                    its source's); 0 with
                                                                    float targets */
FFNN_API const uint8_t *ffnn_dataset_images(const ffnn_dataset *ds); /* [count, features]; NULL
                                                                        with float features */
FFNN_API const int32_t *ffnn_dataset_labels(const ffnn_dataset *ds); /* [count]; NULL with float
                                                                        targets */
FFNN_API const float *ffnn_dataset_float_features(const ffnn_dataset *ds); /* [count, features];
                                                                        NULL with uint8 features */
FFNN_API size_t ffnn_dataset_target_width(const ffnn_dataset *ds); /* 0 with class labels */
FFNN_API const float *ffnn_dataset_targets(const ffnn_dataset *ds); /* [count, target_width];
                                                                        NULL with class labels */

/* The original text of class c (a CSV file's label, e.g. "setosa" or "7"), or
 * NULL when the data set has no class names (IDX, NPY, synthetic: the labels are
 * the classes) or c is out of range. Owned by ds. */
FFNN_API const char *ffnn_dataset_class_name(const ffnn_dataset *ds, int c);

/* Whether ds's class labels make a sensible classification task for loss, so
 * that nothing trains silently as another task. With float targets or loss mse
 * nothing is checked. Refused, each with FFNN_ERR_INVALID_ARGUMENT and a message
 * naming the way out:
 *   - a class named "nan" (a missing label, which would be a class of its own);
 *   - class names (CSV) that are all numbers, some not integers: a continuous
 *     target (the way out: loss mse);
 *   - fewer than 2 distinct labels among the samples (e.g. .npy features
 *     without a labels file: every label 0);
 *   - more distinct labels than half the samples (a continuous target or an id
 *     column), unless flags holds FFNN_TASK_ALLOW_MANY_CLASSES.
 * ffnn_trainer_create runs the first three on its training set (flags
 * FFNN_TASK_ALLOW_MANY_CLASSES: the many-classes rule is the caller's, as the
 * CLI's --allow-many-classes). Reads ds only; thread-safe on a shared ds.
 * Errors: FFNN_ERR_INVALID_ARGUMENT, FFNN_ERR_NO_MEMORY (the count of distinct
 * labels needs a table of up to max(classes, 4 count) bytes). */
#define FFNN_TASK_ALLOW_MANY_CLASSES 1u
FFNN_API ffnn_status ffnn_dataset_check_task(const ffnn_dataset *ds, ffnn_loss loss,
                                             unsigned flags);

/* Per-sample weights w [count] (docs/TRAINING.md "Weights"). With weights the
 * training loss of a batch B is the weighted mean sum_{i in B} w_i l_i /
 * sum_{i in B} w_i (PyTorch's CrossEntropyLoss(weight=...) with reduction
 * 'mean' when w_i is the class weight of sample i's label; l_i the per-sample
 * loss as without weights), and its gradient that of this mean; evaluation
 * reports the weighted loss and accuracy beside the plain ones
 * (ffnn_metrics.weighted_*). Weights go with the samples through
 * ffnn_dataset_slice, _split, _fold, _select_classes and _standardize. They
 * train on the cpu backends (reference and OpenMP); ffnn_trainer_create refuses
 * them on cuda and with data parallelism (FFNN_ERR_UNSUPPORTED, naming them).
 * ffnn_dataset_set_sample_weights copies weights [count] (NULL removes them);
 * each finite and >= 0, their sum > 0. Errors: FFNN_ERR_INVALID_ARGUMENT (the
 * sample and value named), FFNN_ERR_NO_MEMORY; ds untouched on error. */
FFNN_API ffnn_status ffnn_dataset_set_sample_weights(ffnn_dataset *ds, const float *weights);
/* The weights [count], owned by ds; NULL when it has none (every weight 1). */
FFNN_API const float *ffnn_dataset_sample_weights(const ffnn_dataset *ds);
/* Multiply each sample's weight (1 without weights) by the weight of its class:
 * w_i *= class_weights[label_i], class_weights [classes] (classes =
 * ffnn_dataset_classes(ds)), each finite and >= 0. Class labels only. Errors:
 * FFNN_ERR_INVALID_ARGUMENT (float targets, another count, a bad weight, all
 * weights 0), FFNN_ERR_NO_MEMORY; ds untouched on error. */
FFNN_API ffnn_status ffnn_dataset_apply_class_weights(ffnn_dataset *ds,
                                                      const float *class_weights, int classes);
/* scikit-learn's class_weight='balanced' (compute_class_weight): out [classes]
 * = count / (k n_c), n_c the samples of class c, k the classes present; 0 for
 * a class without samples. Errors: FFNN_ERR_INVALID_ARGUMENT (float targets). */
FFNN_API ffnn_status ffnn_dataset_balanced_class_weights(const ffnn_dataset *ds, float *out);
/* Take float feature j out of ds (features - 1 remain; at least 2 before):
 * its values go to column [count] (may be NULL), e.g. a CSV file's weight
 * column. Errors: FFNN_ERR_INVALID_ARGUMENT (uint8 features, j out of range,
 * one feature), FFNN_ERR_NO_MEMORY; ds untouched on error. */
FFNN_API ffnn_status ffnn_dataset_remove_feature(ffnn_dataset *ds, size_t j, float *column);

/* Fold `fold` of k-fold cross-validation (0 <= fold < k, 2 <= k <= count):
 * *test gets the fold's samples, *train (either may be NULL) all the others,
 * both in file order. The assignment is seeded and, with class labels,
 * stratified as scikit-learn's StratifiedKFold(shuffle=True) does it in
 * spirit: each class's samples (in file order) are shuffled by ffnn's
 * generator (seed, stream FFNN_STREAM_SPLIT, classes in order 0, 1, ... with
 * one generator), then dealt to folds round-robin, continuing from the fold
 * after the previous class's last one - so every fold's class counts differ by
 * at most one from count_c / k, and fold sizes by at most one. Float targets:
 * one class. Same src, k and seed: the same folds on every machine. Errors:
 * FFNN_ERR_INVALID_ARGUMENT (k or fold out of range), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_fold(const ffnn_dataset *src, int k, int fold, uint64_t seed,
                                       ffnn_dataset **train, ffnn_dataset **test);

/* ------------------------------------------------------------------ tabular files */

/* Whether the first row of a CSV file names the columns. */
typedef enum ffnn_csv_header {
    FFNN_CSV_HEADER_AUTO = 0, /* a header when some column holds a non-number in the
                                 first row and a number in the second (or, with one
                                 row, when no field of it is a number)           */
    FFNN_CSV_HEADER_YES = 1,
    FFNN_CSV_HEADER_NO = 2
} ffnn_csv_header;

/* How to read a CSV/TSV file (ffnn_csv_options_default gives the defaults). */
typedef struct ffnn_csv_options {
    ffnn_csv_header header;  /* default FFNN_CSV_HEADER_AUTO                        */
    char delimiter;          /* 0 (default): '\t' when the name ends in .tsv or
                                .tsv.gz, else ','                                */
    const char *target;      /* the target columns, comma-separated: header names or
                                0-based indices (-1 the last column, -2 the one
                                before ...; a name wins over an index). NULL
                                (default): the last column; "" none (features
                                only, every label 0: rows to predict)            */
    const char *features;    /* the feature columns, same syntax; NULL (default):
                                every column that is not a target               */
    int regression;          /* 0 (default): one target column of class labels
                                (integers or any text); 1: float targets, one per
                                target column (regression)                       */
    size_t skip_rows;        /* lines skipped before the header / first row (0)  */
    const char *const *class_names; /* non-NULL: the classes, in order (e.g. the
                                training set's or a model's, for a test file); a
                                label not among them is an error. NULL: the
                                file's own classes                               */
    int class_count;         /* entries of class_names                          */
    /* real tables (each 0/NULL in the defaults: such a table is refused as before) */
    const char *ignore;      /* columns dropped (ids, dates, free text), same syntax
                                as target; NULL: none                            */
    const char *categorical; /* feature columns read as categories even when they
                                hold numbers (integer codes); NULL: none         */
    int text_categories;     /* 1: a feature column holding text (in its first 1000
                                rows) is categorical; 0: text is an error         */
    int missing;             /* 1: a missing feature cell (empty or one of
                                na_values) reads as NaN, for the caller to fill
                                (the CLI's imputation); 0: an error               */
    const char *na_values;   /* the texts of a missing cell besides an empty one,
                                comma-separated; NULL: "NA,N/A,NaN,nan,null,NULL,
                                None"; "" only empty cells                        */
    int drop_missing_target; /* 1: rows whose target is missing are dropped
                                (counted in the CLI data line); 0: a        
                                missing target is an error naming its line       */
} ffnn_csv_options;

FFNN_API ffnn_csv_options ffnn_csv_options_default(void);

/* The decimal number s[0..n) (no spaces; [+-]digits[.digits][(e|E)[+-]digits],
 * at least one mantissa digit) as the nearest float32, ties to even - the value
 * strtof gives - into *out: 1. 0 when s is not such a number or its value
 * rounds beyond float32's range ("nan", "inf", hex floats and "1e39" are not
 * numbers here). s[n] must be readable (the reader keeps a NUL or a delimiter
 * there). Method: Clinger's fast path in double (exact operands, one rounding;
 * for a negative exponent first a multiply by the nearest double of 10^e, taken
 * when its error bound cannot reach a float32 midpoint) with the one
 * double-rounding case (a result on a float32 midpoint) and every other case sent
 * to strtof. Thread-safe. */
FFNN_API int ffnn_csv_parse_float(const char *s, size_t n, float *out);

/* Load a CSV (RFC 4180) or TSV file, optionally gzip-compressed (read through
 * zlib, detected by its magic bytes), into float32 features [rows, features]
 * and either int32 class labels or float32 targets [rows, target columns].
 * Fields may be quoted ("a ""b"", c" is the text a "b", c; a quoted field may span
 * lines); CRLF or LF line ends; a UTF-8 byte order mark is skipped; blank lines
 * are skipped. Features and float targets are decimal numbers (spaces around
 * them allowed) read as the nearest float32 (ties to even, as strtof), within
 * float32's range; "nan", "inf" and empty fields are refused - unless
 * opt->missing (a missing feature cell reads as NaN) or opt->text_categories (a
 * text feature column reads as the ids of its texts in first-appearance order):
 * the data set then keeps its columns (names, levels, missing counts) for an
 * encoding (ffnn_dataset_table, ffnn_table_fit: "table encoding" below).
 * Class labels: each distinct text of the target column is a class;
 * classes are numbered in sorted order - numerically when every label is an
 * integer (so labels 0..C-1 keep their numbers), else by byte order - and
 * their texts kept (ffnn_dataset_class_name; stored in model files by the CLI).
 * Errors: FFNN_ERR_IO (cannot open/read), FFNN_ERR_FORMAT with "PATH: line L,
 * column C ('NAME'): expected ..., found ..." for a missing value, a non-numeric
 * feature, a ragged row, an unterminated quote, a NUL byte, an empty file (no
 * data rows), a class not among opt->class_names; FFNN_ERR_INVALID_ARGUMENT
 * for a column spec that names no column or uses one twice; FFNN_ERR_NO_MEMORY,
 * also before an allocation when the rows projected from the part of the file
 * read so far would not fit in the host's memory (the estimate in the message).
 * The file is read in 8 MiB chunks (memory: the float32 matrix and one chunk)
 * and its records parsed by a pool of threads of the call's own (as many as
 * omp_get_max_threads(), which OMP_NUM_THREADS sets; they sleep between chunks,
 * no OpenMP waiting policy involved); the result does not depend on the thread
 * count. Thread-safe for distinct calls.
 * Untrusted text in messages is cut to 40 bytes, non-printable bytes as '?'. */
FFNN_API ffnn_status ffnn_dataset_load_csv(const char *path, const ffnn_csv_options *opt,
                                           ffnn_dataset **out);

/* Load NumPy .npy files (format 1.0-3.0, https://numpy.org/doc/stable/reference/
 * generated/numpy.lib.format.html): features x_path of shape (rows, features) or
 * (rows,), dtype float32 or float64 ('<f4', '<f8'), and y_path (may be NULL: all
 * labels 0) of shape (rows,) or (rows, k): integer dtypes ('|u1', '|i1', '<i2',
 * '<u2', '<i4', '<u4', '<i8', '<u8') are class labels (>= 0, below 2^31), float
 * dtypes float targets [rows, k]. C order and little-endian only. float64 values
 * are rounded to float32 and must be within its range. Checked before any
 * allocation: magic, version, header dict, dtype, order, shape against the file
 * size; then every value. x_path may instead be an .npz archive (numpy.savez or
 * savez_compressed: stored or deflated members, CRC-checked; not ZIP64) holding
 * x (or X, or arr_0) and, optionally, y (or arr_1); y_path must then be NULL. Errors: FFNN_ERR_IO, FFNN_ERR_FORMAT (file, byte offset
 * or element, expected, found: e.g. "fortran_order True: expected C order"),
 * FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_load_npy(const char *x_path, const char *y_path,
                                           ffnn_dataset **out);

/* Split src into *rest and *part (each new): part gets round(fraction * count)
 * samples, chosen by a fixed permutation of ffnn's generator (seed, stream
 * FFNN_STREAM_SPLIT = 4, Fisher-Yates as the training shuffle). With class
 * labels the split is stratified: class c's n_c samples (in file order) are
 * shuffled, classes in order 0, 1, ... with the one generator, and the first q_c
 * of them go to part: q_c = floor(fraction * n_c), plus one for the classes with
 * the largest remainders fraction * n_c - q_c (the lower class first on ties)
 * until the q_c sum to round(fraction * count). Float targets: one class. Both
 * sides keep file order. Same src, fraction and seed:
 * the same split on every machine. Errors: FFNN_ERR_INVALID_ARGUMENT (fraction
 * not in (0, 1), or a side that would be empty), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_split(const ffnn_dataset *src, double fraction, uint64_t seed,
                                        ffnn_dataset **rest, ffnn_dataset **part);

/* ------------------------------------------------------------------ model */

/* A network: its architecture and its parameters (host copy). */
typedef struct ffnn_model ffnn_model;

/* Build a model from an architecture string (syntax in docs/ARCHITECTURE.md and
 * docs/CLI.md), e.g. "784-256relu-10" or "64-local5relu-local3samerelu-2":
 *     arch   := input ( '-' layer )+
 *     input  := positive integer (features per sample)
 *     layer  := ( width | 'local' R [ 'same' ] ) [activation] [ ':nobias' ]
 *               [ ':dropout' P ]  (P 0 or in [1e-6, 1): inverted dropout of a hidden layer's
 *               output while training; core/dropout.h has the mask)
 *               width: a dense layer of that many outputs; local R: a 1-D locally
 *               connected layer (each output its own R weights over R consecutive
 *               inputs) with out = in - R + 1, or with 'same' (R odd) out = in and
 *               (R-1)/2 zeros padded on each side
 *     or, as the first layer only, 'embed' N 'x' D ( '_' N 'x' D )*: an embedding
 *               layer (FFNN_LAYER_EMBEDDING) of one table of N levels and D values
 *               per embedded column, the columns' codes the last inputs (e.g.
 *               "12-embed100x16_40x9-64relu-2": 10 values passed through, two
 *               codes; out = 10 + 16 + 9); no activation or option; at most 64
 *               tables; init N(0, 1) as torch.nn.Embedding
 *     activation := name [ parameter ]                  (default identity)
 *     name   := relu | sigmoid | tanh | leaky_relu | elu | softplus | gelu |
 *               gelu_tanh | silu | mish | hardswish | identity
 *     parameter := a decimal right after the name, leaky_relu and elu only:
 *               leaky_relu's negative slope (0 or in [1e-6, 1e6], default 0.01), e.g.
 *               '256leaky_relu0.2'; elu's alpha (in [1e-6, 1e6], default 1), e.g.
 *               '128elu0.5'.
 *               The canonical string writes it only when it is not the default.
 * Parameters are zero until ffnn_model_init() or ffnn_model_set_parameters().
 * Errors: FFNN_ERR_PARSE with the 1-based column and the offending token. */
FFNN_API ffnn_status ffnn_model_create(const char *arch, ffnn_model **out);
FFNN_API void ffnn_model_free(ffnn_model *m);

/* Initialise like PyTorch's nn.Linear.reset_parameters(): weight ~ U(-b, b) with
 * b = gain*sqrt(3/fan_in), gain = sqrt(2/(1+a^2)), a = sqrt(5) (Kaiming-uniform),
 * i.e. b = 1/sqrt(fan_in); bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)). fan_in is
 * the inputs one output sums: in for a dense layer, R for a local1d layer.
 * Values come from ffnn's documented generator (splitmix64-seeded xoshiro256**),
 * layer by layer, weight row-major then bias: the same seed gives the same model. */
FFNN_API ffnn_status ffnn_model_init(ffnn_model *m, uint64_t seed);

FFNN_API int ffnn_model_layer_count(const ffnn_model *m);
FFNN_API size_t ffnn_model_input_size(const ffnn_model *m);
FFNN_API size_t ffnn_model_output_size(const ffnn_model *m);
FFNN_API size_t ffnn_model_parameter_count(const ffnn_model *m);
/* The canonical architecture string into buf [buf_size] (truncated to
 * buf_size-1 characters and NUL-terminated; buf may be NULL when buf_size is 0).
 * Returns the length of the whole string, like snprintf: size a buffer with
 * ffnn_model_arch_string(m, NULL, 0) + 1 (an architecture has up to 1024 layers,
 * so its string can be tens of kilobytes). */
FFNN_API size_t ffnn_model_arch_string(const ffnn_model *m, char *buf, size_t buf_size);
/* Layer i's widths (in: its input, out: its output), has_bias; activation. Any
 * output pointer may be NULL. */
FFNN_API ffnn_status ffnn_model_layer(const ffnn_model *m, int i, size_t *in, size_t *out,
                                      ffnn_activation *act, int *has_bias);

/* What computes a layer's outputs. */
typedef enum ffnn_layer_kind {
    FFNN_LAYER_DENSE = 0,  /* z = x W^T + b, W [out, in]                          */
    FFNN_LAYER_LOCAL1D = 1, /* z[m] = sum_{r<R} W[m,r] x[m+r-pad] + b[m], W [out, R];
                              pad 0 ('valid') or (R-1)/2 ('same')                 */
    FFNN_LAYER_EMBEDDING = 2 /* the first layer only: x = P values then k integer
                              codes (as floats); out = the P values, then each code
                              c_j replaced by row c_j of its table [n_j, d_j] (a
                              code not in [0, n_j): zeros). W [sum_j n_j d_j], the
                              tables one after another; no bias, no activation */
} ffnn_layer_kind;

/* Embedding layer i's tables: *count (k) and, for j < min(k, capacity),
 * levels[j] (n_j) and dims[j] (d_j); levels, dims may be NULL. Its inputs:
 * in - k passed through, then the k codes. FFNN_ERR_INVALID_ARGUMENT when layer
 * i is not an embedding layer. */
FFNN_API ffnn_status ffnn_model_embedding(const ffnn_model *m, int i, size_t *count,
                                          size_t *levels, size_t *dims, size_t capacity);

/* Layer i's kind, *fan_in (the columns of its weight [out, fan_in]: in for a dense
 * layer, R for local1d; 1 for an embedding, whose weight is [sum_j n_j d_j]) and
 * *same_padding (1 for a local1d layer with 'same' padding, else 0). Any output
 * pointer may be NULL. */
FFNN_API ffnn_status ffnn_model_layer_kind(const ffnn_model *m, int i, ffnn_layer_kind *kind,
                                           size_t *fan_in, int *same_padding);

/* Pointers to layer i's weight [out, fan_in] and bias [out] (NULL when bias is off);
 * owned by the model, valid until ffnn_model_free. Writable: changes take effect
 * for trainers created afterwards. */
FFNN_API float *ffnn_model_weight(ffnn_model *m, int i);
FFNN_API float *ffnn_model_bias(ffnn_model *m, int i);
/* All parameters in one contiguous array [parameter_count]: layer by layer,
 * weight [out, fan_in] row-major then bias [out]. Owned by the model. */
FFNN_API float *ffnn_model_parameters(ffnn_model *m);

/* Forward pass on the CPU reference: x [batch, in] -> y [batch, out] (the last
 * layer's activation applied; no softmax). The network alone: x is fed as it is,
 * without the model's standardisation (ffnn_model_predict applies it). */
FFNN_API ffnn_status ffnn_model_forward(const ffnn_model *m, const float *x, size_t batch,
                                        float *y);

/* A trained model and its trainer: the trainer (ffnn_trainer_create) copies its
 * parameters into m when each ffnn_trainer_run_epoch, _run_epoch_until and
 * _step call returns, on ffnn_trainer_sync_model, and a last time in
 * ffnn_trainer_free. Inside an epoch (a step callback) the trainer's weights are
 * newer: the functions that read m through a const pointer (ffnn_model_forward,
 * _predict, _evaluate, _save, ffnn_predictor_create) then fail with
 * FFNN_ERR_INVALID_ARGUMENT naming ffnn_trainer_sync_model - a const model is
 * never written; the non-const accessors (_weight, _bias, _parameters) copy the
 * trainer's parameters first and return NULL when that copy fails
 * (ffnn_last_error says why). */

/* Z-score standardisation kept in the model (and its model file, docs/
 * FORMATS.md): ffnn_model_predict and ffnn_model_evaluate feed the network
 * (x - input_mean) / input_scale, and report regression (mse) outputs as
 * output * target_scale + target_mean, so that callers work in the data's own
 * units. input_mean, input_scale [input_size]; target_mean, target_scale
 * [output width]; either pair may be NULL (none); scales must be > 0 and all
 * values finite (FFNN_ERR_INVALID_ARGUMENT). The arrays are copied. */
FFNN_API ffnn_status ffnn_model_set_standardization(ffnn_model *m, const float *input_mean,
                                                    const float *input_scale,
                                                    const float *target_mean,
                                                    const float *target_scale);
/* The model's standardisation arrays (owned by m; NULL when absent). */
FFNN_API ffnn_status ffnn_model_standardization(const ffnn_model *m, const float **input_mean,
                                                const float **input_scale,
                                                const float **target_mean,
                                                const float **target_scale);
/* Set the standardisation of m from train's float features: mean and population
 * standard deviation (divisor count, as numpy.std) of each feature, computed in
 * double; a constant feature gets scale 1 (the codes of an embedding layer, the
 * last inputs of its first layer, mean 0 and scale 1: read as they are). With
 * targets (and float targets in train) the same for each target column. Errors:
 * FFNN_ERR_INVALID_ARGUMENT (uint8 features, widths that do not match m),
 * FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_model_fit_standardization(ffnn_model *m, const ffnn_dataset *train,
                                                    int targets);
/* A copy of src in the network's units: features (x - input_mean) / input_scale,
 * float targets (t - target_mean) / target_scale when m has target statistics
 * (the data ffnn_trainer_create should train on). Without statistics a plain
 * copy. Errors: FFNN_ERR_INVALID_ARGUMENT (widths), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_dataset_standardize(const ffnn_dataset *src, const ffnn_model *m,
                                              ffnn_dataset **out);

/* The original labels of the model's classes (e.g. from a CSV file's target
 * column): names [count], count = ffnn_model_class_count(m), or count 0 to
 * remove them. Copied; stored in model files. */
FFNN_API ffnn_status ffnn_model_set_class_names(ffnn_model *m, const char *const *names,
                                                int count);
/* The original label of class c, or NULL (no names, c out of range). Owned by m. */
FFNN_API const char *ffnn_model_class_name(const ffnn_model *m, int c);

/* ------------------------------------------------------------------ table encoding */

/* The columns of a table behind a data set and their encoding into the
 * network's inputs. A CSV file read with opt->text_categories or opt->missing
 * (ffnn_dataset_load_csv) gives a raw data set: one float32 value per feature
 * column, a categorical column's value the id of its level (0-based, in order
 * of first appearance), a missing cell NaN; ffnn_dataset_table gives its raw
 * table (the columns' names, kinds, levels, missing counts). ffnn_table_fit on
 * the training split gives a fitted table, the encoding: per numeric column the
 * median of its present values (the fill of a missing cell; the mean of the
 * middle two for an even count, as numpy.median) and, when it had missing
 * cells, one 0/1 indicator input; per categorical column its levels in
 * training, sorted by bytes, plus the level "missing" when training had missing
 * cells (one one-hot input each; a level training lacked is an all-zero row,
 * counted). The inputs of a row: the columns in order (a numeric column's one
 * value, a categorical column's one-hot block), then every indicator, then the
 * codes of the columns ffnn_table_fit_embedding embeds instead. The
 * method: scikit-learn's SimpleImputer(strategy="median", add_indicator=True)
 * on the numeric columns and SimpleImputer(strategy="constant", fill_value=
 * "missing") then OneHotEncoder(handle_unknown="ignore") on the categorical
 * ones (https://scikit-learn.org/stable/modules/impute.html,
 * .../preprocessing.html#encoding-categorical-features). A model keeps its
 * encoding (ffnn_model_set_table; in model files as __metadata__ "table",
 * docs/FORMATS.md), so data to predict is encoded as the training data was.
 * An ffnn_table is immutable once made: every function here but
 * ffnn_table_free is thread-safe on a table shared between threads. */
typedef struct ffnn_table ffnn_table;

/* Column kinds (ffnn_table_column_kind). */
typedef enum { FFNN_TABLE_NUMERIC = 0, FFNN_TABLE_CATEGORICAL = 1 } ffnn_table_kind;

FFNN_API void ffnn_table_free(ffnn_table *t); /* NULL: nothing */

/* The table of ds: raw (a CSV file read with text categories or missing
 * cells), fitted (ds from ffnn_table_encode), or NULL (no table: IDX, NPY,
 * synthetic, an all-numeric CSV file read without those options). Borrowed:
 * owned by ds, valid until ffnn_dataset_free(ds). */
FFNN_API const ffnn_table *ffnn_dataset_table(const ffnn_dataset *ds);

/* 1 when the raw table t needs an encoding (a categorical column or a missing
 * cell), 0 when its values are the network's inputs as they are (or t NULL). */
FFNN_API int ffnn_table_needs_encoding(const ffnn_table *t);

/* The encoding fitted on the raw training split train (its values and the
 * columns of ffnn_dataset_table(train)) into *out (owned by the caller:
 * ffnn_table_free). Errors: FFNN_ERR_INVALID_ARGUMENT (NULL argument; train
 * has no table; a numeric column with no present value, naming it),
 * FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_table_fit(const ffnn_dataset *train, ffnn_table **out);

/* ffnn_table_fit with learned embeddings: then each categorical column with more
 * than max_one_hot levels (the encoding's, "missing" included), or with dims[i]
 * > 0, is embedded, not one-hot encoded: it takes one input, its code (the index
 * of its level among the sorted levels, as a float; a level training lacked -1,
 * counted as unseen), the codes after the indicators in column order - the
 * inputs an embedding layer (FFNN_LAYER_EMBEDDING) reads, of dimension dims[i]
 * (dims NULL or [column count], read for categorical columns only; 0: fastai's
 * rule min(600, round(1.6 n^0.56)) of its n levels). max_one_hot SIZE_MAX with
 * dims NULL: ffnn_table_fit. Errors: those of ffnn_table_fit;
 * FFNN_ERR_INVALID_ARGUMENT for more than 64 embedded columns or a dimension
 * above 2^24. */
FFNN_API ffnn_status ffnn_table_fit_embedding(const ffnn_dataset *train, size_t max_one_hot,
                                              const size_t *dims, ffnn_table **out);
/* Fitted categorical column i: its embedding's dimension, or 0 (one-hot, numeric,
 * out of range). */
FFNN_API size_t ffnn_table_embedding_dim(const ffnn_table *t, size_t i);
/* The architecture token of the embedding layer t's codes need, e.g.
 * "embed100x21_40x11" (ffnn_model_create), into buf [size] (truncated and
 * NUL-terminated as snprintf; buf may be NULL when size is 0); returns the
 * length of the whole token, 0 when no column is embedded. The network's
 * architecture is then "<ffnn_table_width(t)>-<token>-<hidden>..." . */
FFNN_API size_t ffnn_table_embedding_arch(const ffnn_table *t, char *buf, size_t size);

/* The raw data set src [count, columns] encoded by the fitted table enc into
 * *out [count, ffnn_table_width(enc)] float32 (labels or targets and class
 * names copied; *out carries a copy of enc as its table, so a model trained on
 * it can keep it). src's columns are matched to enc's by position, its levels
 * to enc's by text; *unseen (may be NULL) gets the number of cells whose level
 * enc does not know (encoded as all zeros). Errors: FFNN_ERR_INVALID_ARGUMENT
 * (NULL argument, enc not fitted, columns that differ in number or kind,
 * naming the first), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_table_encode(const ffnn_table *enc, const ffnn_dataset *src,
                                       size_t *unseen, ffnn_dataset **out);

/* Accessors. Column i is 0-based; i out of range (or t NULL) gives 0, NULL,
 * -1 or NaN as named. Texts are owned by t. */
FFNN_API int ffnn_table_is_fitted(const ffnn_table *t);      /* 1: an encoding; 0: raw     */
FFNN_API size_t ffnn_table_column_count(const ffnn_table *t); /* feature columns           */
FFNN_API size_t ffnn_table_width(const ffnn_table *t); /* fitted: inputs of a row; raw: 0  */
/* Rows dropped for a missing target (ffnn_csv_options.drop_missing_target);
 * kept by ffnn_table_fit, 0 in a table from ffnn_model_table. */
FFNN_API size_t ffnn_table_dropped(const ffnn_table *t);
/* The header name of column i, or its 0-based index ("3") without a header. */
FFNN_API const char *ffnn_table_column_name(const ffnn_table *t, size_t i);
FFNN_API int ffnn_table_column_kind(const ffnn_table *t, size_t i); /* ffnn_table_kind, -1 */
/* Categorical column i: its levels (raw: in order of first appearance, the
 * values' ids; fitted: sorted, one one-hot input each); numeric: 0 / NULL. */
FFNN_API size_t ffnn_table_level_count(const ffnn_table *t, size_t i);
FFNN_API const char *ffnn_table_level(const ffnn_table *t, size_t i, size_t k);
/* Missing cells of column i: raw, in the file; fitted, in the training split
 * (0 in a table from ffnn_model_table: models do not keep them). */
FFNN_API size_t ffnn_table_missing(const ffnn_table *t, size_t i);
/* Fitted numeric column i: the fill of a missing cell (NaN otherwise). */
FFNN_API float ffnn_table_median(const ffnn_table *t, size_t i);
/* Fitted numeric column i: 1 when a missing indicator input follows (else 0). */
FFNN_API int ffnn_table_indicator(const ffnn_table *t, size_t i);

/* A copy of m's encoding into *out (owned by the caller: ffnn_table_free), or
 * *out NULL when m has none (its inputs are not a table's columns). Errors:
 * FFNN_ERR_INVALID_ARGUMENT (NULL argument), FFNN_ERR_FORMAT (m's stored
 * encoding is damaged; model files are checked when read), FFNN_ERR_NO_MEMORY.
 * Thread-safe for a model no thread is changing. */
FFNN_API ffnn_status ffnn_model_table(const ffnn_model *m, ffnn_table **out);

/* Give m a copy of the fitted table t as its encoding (saved in model files;
 * t NULL removes it). Errors: FFNN_ERR_INVALID_ARGUMENT (m NULL; t raw; t's
 * width not m's input size; t's embedded columns not the tables of m's first
 * layer, in order, or m embedding codes t lacks), FFNN_ERR_NO_MEMORY (m
 * unchanged). */
FFNN_API ffnn_status ffnn_model_set_table(ffnn_model *m, const ffnn_table *t);

/* A raw data set [count, columns] built from columns in memory (a data frame's:
 * the Python module's pandas path), for ffnn_table_fit and ffnn_table_encode
 * as a CSV file read with text categories and missing cells gives one (its
 * columns found by name, texts turned into level ids, by the caller).
 * x [count, columns] float32, row-major: a numeric column's values (finite;
 * NaN a missing cell), a categorical column's level ids (integers in
 * [0, level_counts[i]); NaN a missing cell). names [columns] UTF-8 (NULL:
 * "0", "1", ... as a CSV file without a header); kinds [columns]
 * (ffnn_table_kind); level_counts [columns] (0 for a numeric column) and
 * levels [sum of level_counts]: the texts of the levels, column after column,
 * distinct within a column (id k of a column is its k-th text). Every label
 * of *out is 0 (classes 0): it is rows to encode; train on the encoded
 * features with labels of your own. Everything is copied; *out is owned by
 * the caller (ffnn_dataset_free). Errors, before anything is allocated:
 * FFNN_ERR_INVALID_ARGUMENT (NULL argument or name; count or columns 0; a
 * kind other than the two; a numeric column with levels; more than 2^24
 * levels; an infinite value or an id out of range, naming row and column; a
 * level given twice in a column, naming it); FFNN_ERR_NO_MEMORY. Thread-safe. */
FFNN_API ffnn_status ffnn_dataset_from_columns(size_t count, size_t columns, const float *x,
                                               const char *const *names, const int *kinds,
                                               const size_t *level_counts,
                                               const char *const *levels, ffnn_dataset **out);

/* ------------------------------------------------------------------ model files */

/* Model files are safetensors files (https://github.com/huggingface/safetensors;
 * the full description is docs/FORMATS.md):
 *   [8 bytes]  N: the header length, uint64 little-endian
 *   [N bytes]  a UTF-8 JSON object, padded with spaces to a multiple of 8 bytes:
 *              "__metadata__": {"format": "ffnn-model", "arch": canonical arch
 *                               string, "loss": "ce"|"bce"|"mse",
 *                               "ffnn_version": FFNN_VERSION of the writer}
 *              "layers.<i>.weight": {"dtype": "F32", "shape": [out, in]
 *                                    ([out, R] for a local1d layer),
 *                                    "data_offsets": [begin, end]}
 *              "layers.<i>.bias":   {"dtype": "F32", "shape": [out], ...}
 *                                   (absent for a ':nobias' layer)
 *   [rest]     the tensors' bytes, float32 little-endian; offsets are relative
 *              to the start of this section. ffnn writes the tensors in layer
 *              order (weight, then bias); it reads them in any order.
 * PyTorch users: torch.nn.Sequential names its Linear layers 0, 2, 4 ...; rename
 * the keys to layers.0, layers.1, ... (docs/PYTHON.md "Use with PyTorch"). */

/* What a model file says besides the parameters. */
typedef struct ffnn_model_file_info {
    ffnn_loss loss;          /* metadata "loss": the loss the model was trained with */
    char ffnn_version[64];   /* metadata "ffnn_version" of the writer ("" if absent) */
    char interrupted[128];   /* metadata "interrupted": where an interrupted run
                                stopped, e.g. "SIGINT at epoch 3, step 120 of 938"
                                ("" when training ran to its end)            */
} ffnn_model_file_info;

/* Write m to path with the loss it remembers (ffnn_model_loss), atomically: a
 * temporary file in the same directory is written, fsync'ed and renamed over path, and the directory is
 * fsync'ed; on any failure the temporary file is removed and an existing file
 * at path is left as it was. A file replaced keeps its mode (a new one gets
 * 0666 & ~umask); a symbolic link at path is written through (the file it
 * names is replaced, the link stays), except one another account could have
 * planted (in a sticky world-writable directory such as /tmp, owned neither by
 * this user nor by the directory's owner: refused, as Linux's
 * fs.protected_symlinks does; docs/SECURITY.md). The model needs a loss (ffnn_model_loss;
 * ffnn_model_set_loss checks that it fits the network as ffnn_model_load requires:
 * ce/bce no activation on the last layer, ce 2+ outputs), else
 * FFNN_ERR_INVALID_ARGUMENT and nothing is written. Temporary
 * files "<path>.tmp-<pid>-XXXXXX" left by a killed process (its pid no longer
 * runs) are removed first.
 * Errors: FFNN_ERR_IO (path, step, byte offset and strerror, e.g. "No space
 * left on device"), FFNN_ERR_NUMERIC (a NaN/Inf parameter: tensor and element
 * named, nothing written), FFNN_ERR_INVALID_ARGUMENT, FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_model_save(const ffnn_model *m, const char *path);

/* ffnn_model_save with the metadata key "interrupted": interrupted (1 to 127
 * characters, e.g. "SIGINT at epoch 3, step 120 of 938"), so that a model saved
 * by a run that was stopped early says so (ffnn_model_load returns it in
 * ffnn_model_file_info.interrupted; ffnn info prints it). NULL: ffnn_model_save. */
FFNN_API ffnn_status ffnn_model_save_interrupted(const ffnn_model *m, const char *path,
                                                 const char *interrupted);

/* Check that path can be written by ffnn_model_save / a checkpoint save before
 * any work is done: it is not empty or a directory, a symbolic link there names
 * a file that can be resolved and was not planted by another account (see
 * ffnn_model_save), and the temporary file a save would create
 * ("<path>.tmp-<pid>-XXXXXX" in the same directory) can be created: it is
 * created and removed again (so a name too long for the suffix, a missing or
 * read-only directory, no permission are found now, not after training).
 * Stale temporary files of killed processes are removed. Errors: FFNN_ERR_IO
 * naming path, the temporary file and strerror. */
FFNN_API ffnn_status ffnn_check_output_path(const char *path);

/* Remove the temporary files of the saves this process has in progress (model
 * files, checkpoints), so that nothing is left behind when it must exit at
 * once. Async-signal-safe (only unlink(2)): for a signal handler that then
 * calls _exit. The saves interrupted this way fail; their targets are left as
 * they were. */
FFNN_API void ffnn_remove_temporary_files(void);

/* Read a model file into a new model (*out; free with ffnn_model_free); info
 * (may be NULL) receives the metadata. Checked before the model is allocated,
 * as the reference reader does: header length <= 100,000,000 and within the
 * file; header UTF-8, no NUL byte, a JSON object starting with '{' followed by
 * nothing but whitespace; no duplicate key (at any level); known dtypes; shapes
 * of exact integers whose product (and byte size) does not overflow 64 bits;
 * begin <= end and end - begin = elements x dtype size; tensors tiling the data
 * section exactly (no gap, no overlap, no trailing bytes). Then ffnn's rules:
 * __metadata__ with format "ffnn-model", a valid arch, a known loss, nothing
 * else but ffnn_version; exactly the tensors of that architecture (none missing,
 * none extra), each F32 with no zero dimension and the layer's shape; finite
 * values. A file of format "ffnn-ensemble" gives an ensemble model ("Ensembles"
 * below; docs/FORMATS.md), each member checked as a model file is. Errors:
 * FFNN_ERR_IO (cannot open/read), FFNN_ERR_FORMAT (message: the
 * file, then the byte offset or the tensor/key, what was expected and what was
 * found), FFNN_ERR_NO_MEMORY. *out untouched on error. */
FFNN_API ffnn_status ffnn_model_load(const char *path, ffnn_model **out,
                                     ffnn_model_file_info *info);

/* ------------------------------------------------------------------ ensembles */

/* An ensemble model: K member models (plain models, each a network of its own:
 * their hidden layers may differ) with the same input size, output width, loss,
 * class names and table encoding, read as one model whose prediction is the
 * mean of its members': ffnn_model_predict / ffnn_predictor_predict give, per
 * row, the mean over the members of each member's probabilities (softmax for
 * ce, sigmoid for bce; each member with its own standardisation) or, for mse,
 * of its outputs in the targets' units; the predicted class is the argmax of
 * those means (one output: above 0.5). ffnn_model_evaluate* take the loss of
 * the means: ce -log(mean p[label]), bce of the mean probabilities, mse of the
 * mean outputs (probabilities are clamped to [2^-126, 1 - 2^-24] before the
 * log). A predictor runs every member on its own lanes (each lane its slice of
 * the rows through every member) and averages. ffnn_model_save writes it as
 * one file (format "ffnn-ensemble", docs/FORMATS.md), ffnn_model_load reads
 * it, ffnn_model_export_onnx writes each member's graph and their Mean.
 * An ensemble has no single network: ffnn_model_layer_count is 0,
 * ffnn_model_parameters NULL, ffnn_model_parameter_count the members' sum,
 * ffnn_model_arch_string "ensemble of K: ARCH0, ARCH1, ..." (not an
 * architecture ffnn_model_create takes), ffnn_model_standardization all NULL
 * (the members keep theirs); ffnn_trainer_create, ffnn_train, ffnn_model_init,
 * ffnn_model_forward, ffnn_predictor_forward, ffnn_model_set_standardization,
 * ffnn_model_fit_standardization and a change of loss are refused with
 * FFNN_ERR_INVALID_ARGUMENT (train the members, then build the ensemble). */
#define FFNN_ENSEMBLE_MAX_MEMBERS 1024

/* An ensemble of members [count] (1 <= count <= FFNN_ENSEMBLE_MAX_MEMBERS) into
 * *out (free with ffnn_model_free). Ownership: each member is copied (its
 * parameters, standardisation, class names, table), so the caller keeps its
 * models and may free or change them afterwards; *out owns the copies.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL, a count out of range, a member that
 * is NULL, an ensemble, without a loss, inside a training epoch, or whose
 * input size, output width, loss, class names or table differ from member
 * 0's: the message names the member and both values), FFNN_ERR_NO_MEMORY.
 * *out untouched on error. Thread safety: reads the members only. */
FFNN_API ffnn_status ffnn_model_ensemble(const ffnn_model *const *members, int count,
                                         ffnn_model **out);
/* The members of an ensemble model: their count (0 for a plain model or NULL),
 * and member i (owned by m, valid until ffnn_model_free(m); NULL for i out of
 * range). */
FFNN_API int ffnn_model_member_count(const ffnn_model *m);
FFNN_API const ffnn_model *ffnn_model_member(const ffnn_model *m, int i);

/* Classes m predicts: its output width, or 2 when it has one output. */
FFNN_API int ffnn_model_class_count(const ffnn_model *m);

/* Inference on a predictor of its own (cpu, all cores): x [batch, in] ->
 * p [batch, out], the outputs as the model's loss (ffnn_model_loss) reads them: softmax probabilities (ce), sigmoid probabilities (bce) or
 * the raw outputs (mse); cls [batch] (may be NULL) gets each row's predicted
 * class: the argmax of the outputs (first on ties), or for one output 1 when it
 * is above 0 (ce/bce logits) or 0.5 (mse), else 0 - the rule behind the accuracy
 * of ffnn_trainer_evaluate. Errors: FFNN_ERR_INVALID_ARGUMENT (a model without a
 * loss yet: ffnn_model_set_loss), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_model_predict(const ffnn_model *m, const float *x, size_t batch,
                                        float *p, int *cls);

/* What an evaluation measures. Regression (loss mse on float targets): mse,
 * rmse, mae (means over samples and outputs) and r2 (the coefficient of
 * determination 1 - SS_res / SS_tot of each output, averaged over the outputs,
 * as sklearn.metrics.r2_score; NaN for an output with constant targets), all in
 * the targets' own units; accuracy NaN. Classification: accuracy, the
 * regression fields NaN. */
typedef struct ffnn_metrics {
    size_t count;     /* samples evaluated                                   */
    double loss;      /* mean per-sample loss (regression: original units)   */
    double accuracy;  /* fraction of samples whose predicted class is right  */
    double mse, rmse, mae, r2;
    /* With sample weights (ffnn_dataset_set_sample_weights): the weighted mean
     * sum w_i l_i / sum w_i of the loss and of the correct flags; NaN without
     * weights (and weighted_accuracy NaN where accuracy is). */
    double weighted_loss, weighted_accuracy;
    double weight_sum;  /* sum of the weights (0 without)                    */
} ffnn_metrics;

/* ffnn_model_evaluate with every metric: *metrics, and confusion [classes,
 * classes] (may be NULL; else zeroed first, as ffnn_model_evaluate's). The
 * model's standardisation is applied (data in its own units). Errors: those of
 * ffnn_model_evaluate. */
FFNN_API ffnn_status ffnn_model_evaluate_metrics(const ffnn_model *m, const ffnn_dataset *data,
                                                 size_t batch_size, ffnn_metrics *metrics,
                                                 uint64_t *confusion);

/* Evaluate m on data (images / 255, or the float features) on a predictor of
 * its own (cpu, all cores), batch_size rows per forward pass: *mean_loss is the mean per-sample
 * loss; confusion [classes, classes] (classes = ffnn_model_class_count(m); zeroed
 * first) counts samples by true label (row) and predicted class (column), so
 * accuracy = trace / count. With float targets (one per output; bce or mse) the
 * loss is taken against them and the true class is the class the predicted-class
 * rule gives the target row with threshold 0.5 (argmax for several outputs) -
 * meaningful for 0/1 targets, not for regression.
 * The loss is the model's own (ffnn_model_loss).
 * Errors: FFNN_ERR_INVALID_ARGUMENT (features != inputs, a label >= classes,
 * float targets of another width or with ce, a model without a loss yet:
 * ffnn_model_set_loss), FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_model_evaluate(const ffnn_model *m, const ffnn_dataset *data,
                                         size_t batch_size, double *mean_loss,
                                         uint64_t *confusion);

/* ffnn_model_evaluate with counts of O(classes) memory instead of the
 * [classes, classes] confusion matrix (for models with many outputs: 20,000
 * classes would need a 3.2 GB matrix): per true class, total [classes] samples
 * and correct [classes] of them predicted right (both zeroed first). Errors as
 * ffnn_model_evaluate. */
FFNN_API ffnn_status ffnn_model_evaluate_per_class(const ffnn_model *m, const ffnn_dataset *data,
                                                   size_t batch_size, double *mean_loss,
                                                   uint64_t *correct, uint64_t *total);

/* ------------------------------------------------------------------ inference */

/* The loss a model is trained with, which says how its outputs are read
 * (softmax probabilities for ce, sigmoid for bce, the raw outputs for mse).
 * ffnn_model_load sets it from the file, ffnn_trainer_create from its config;
 * a model made by ffnn_model_create has none until ffnn_model_set_loss.
 * ffnn_model_set_loss errors: FFNN_ERR_INVALID_ARGUMENT (a loss the last layer
 * does not fit, as ffnn_trainer_create checks). ffnn_model_loss: FFNN_OK and
 * *loss, or FFNN_ERR_INVALID_ARGUMENT when m has no loss yet. */
FFNN_API ffnn_status ffnn_model_set_loss(ffnn_model *m, ffnn_loss loss);
FFNN_API ffnn_status ffnn_model_loss(const ffnn_model *m, ffnn_loss *loss);

/* A predictor: the inference object of a model, with backend contexts and a
 * workspace of its own (docs/INFERENCE.md). On the CPU: `threads` lanes (0: all
 * cores, omp_get_max_threads()), each a one-thread context of the OpenMP backend
 * (src/backend/omp: the register-tiled matmuls the trainer uses), on a pool of
 * threads of the predictor's own whose lanes take pieces of a batch's rows in
 * turn (8 a lane; a batch under about 2^19 multiply-adds a lane runs on the
 * calling thread alone); its workers spin briefly, then sleep (GOMP_SPINCOUNT
 * plays no part).
 * The dense layers' weights are packed once at create into the matmul's layout
 * (a copy of their size per predictor; the model is not written); batches
 * smaller than the matmul's tile run row by row with the same bits. On cuda
 * (FFNN_DEVICE_CUDA, or FFNN_DEVICE_AUTO when a GPU is visible): the CUDA
 * backend's kernels on a device copy of the parameters made at create.
 * max_batch: rows per forward pass; a call with more rows runs in chunks of
 * max_batch (the workspace is 2 x max_batch x the widest layer floats, plus on
 * cuda the input and output of a chunk). Outputs are the caller's.
 * Thread safety: a model may be shared by any number of predictors in any
 * threads while nothing writes it (no trainer inside an epoch on it, no
 * ffnn_model_set_* / _parameters writes, not freed before its predictors); one
 * predictor is used by one thread at a time (its workspace is its own; use one
 * predictor per thread). On cuda the parameters are copied at create: later
 * changes to the model are not seen. Numerics: fp32; the matmuls sum in the omp
 * backend's order (fma, blocked), within 1e-5 (1 + |y|) of ffnn_model_forward
 * (tests/test_predictor.c); a row's outputs are the same bits whatever the
 * thread count and the rest of its batch.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL, max_batch 0, threads < 0, a model
 * being trained inside an epoch), FFNN_ERR_UNSUPPORTED (cuda asked for in a
 * build or on a machine without it; a thread that cannot be started),
 * FFNN_ERR_NO_MEMORY, FFNN_ERR_CUDA. *out (free with ffnn_predictor_free)
 * untouched on error. */
typedef struct ffnn_predictor ffnn_predictor;
FFNN_API ffnn_status ffnn_predictor_create(const ffnn_model *m, ffnn_device device, int threads,
                                           size_t max_batch, ffnn_predictor **out);
FFNN_API void ffnn_predictor_free(ffnn_predictor *p);

/* The model p reads (not owned by p), and its CPU threads (0 on cuda). */
FFNN_API const ffnn_model *ffnn_predictor_model(const ffnn_predictor *p);
FFNN_API int ffnn_predictor_threads(const ffnn_predictor *p);

/* The network alone, as ffnn_model_forward: x [batch, in] -> y [batch, out]
 * (float32, host memory, the caller's; the last layer's activation applied, no
 * softmax, no standardisation). Errors: FFNN_ERR_INVALID_ARGUMENT (NULL with
 * batch > 0), the backend's (FFNN_ERR_NO_MEMORY, FFNN_ERR_CUDA). */
FFNN_API ffnn_status ffnn_predictor_forward(ffnn_predictor *p, const float *x, size_t batch,
                                            float *y);

/* ffnn_model_predict on p, with the model's own loss (ffnn_model_loss):
 * x [batch, in] in the data's units (the model's standardisation applied) ->
 * prob [batch, out] (softmax / sigmoid probabilities, or the regression outputs
 * in the targets' units), cls [batch] (may be NULL) the predicted classes.
 * Errors: those of ffnn_predictor_forward; FFNN_ERR_INVALID_ARGUMENT for a
 * model without a loss. */
FFNN_API ffnn_status ffnn_predictor_predict(ffnn_predictor *p, const float *x, size_t batch,
                                            float *prob, int *cls);

/* Write m as an ONNX model (https://onnx.ai, opset 17 of the default domain,
 * IR version 8) to path, atomically (as ffnn_model_save). The graph takes "x"
 * float32 [batch, in] in the data's units and gives "y" float32 [batch, out]
 * as ffnn_predictor_predict's prob: the stored standardisation first (Sub,
 * Div), each dense layer as Gemm (transB = 1), each local1d layer as [Pad,]
 * Gather of its windows, Mul by W [out, R], ReduceSum, Add bias; an embedding
 * layer as Slices of its columns, per table a Gather of rows (an unknown code:
 * an appended zero row) and Flatten, then Concat; each
 * activation as its ONNX op (Relu, Sigmoid, Tanh, LeakyRelu, Elu, Softplus,
 * HardSwish) or, where opset 17 has none, its definition (gelu with Erf,
 * gelu_tanh with Tanh, silu x Sigmoid(x), mish x Tanh(Softplus(x))); then the
 * model's loss head: Softmax (ce), Sigmoid (bce), or for mse the targets'
 * standardisation undone. metadata_props: ffnn_version, arch, loss and, when
 * the model has class names, class_names (a JSON array). Written with protobuf-c
 * over the onnx project's onnx.proto; outputs equal the predictor's within 1e-5
 * in onnxruntime (tests/test_onnx.c). An ensemble model: each member's graph
 * (its standardisation, layers and head) on "x", then Mean of their outputs.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL,
 * a model without a loss, a model inside a training epoch), FFNN_ERR_UNSUPPORTED
 * (a build without protobuf-c: the message says so), FFNN_ERR_IO,
 * FFNN_ERR_NO_MEMORY. Thread safety: reads m only. */
FFNN_API ffnn_status ffnn_model_export_onnx(const ffnn_model *m, const char *path);

/* ------------------------------------------------------------------ training */

/* The training configuration: start from ffnn_train_config_default(), then set
 * fields directly or by name (ffnn_train_config_set). Every option is described
 * by one row of the library's option table (ffnn_train_option_at below: name,
 * type, offset, range, default, checkpoint key, resume rule), which drives the
 * defaults, the checks of ffnn_trainer_create, the checkpoint files and the
 * bindings' mirrors.
 * Versioning: within one FFNN_VERSION_MAJOR the fields below keep their names,
 * types and offsets and sizeof stays the same (ffnn_struct_size("ffnn_train_config")
 * gives the library's); options that only tune how kernels are launched live in
 * reserved[] and are reached by name, so a new one changes neither the size nor
 * the fields. A new public field comes with a new major version. */
typedef struct ffnn_train_config {
    int epochs;             /* passes over the training set (default 10)          */
    size_t batch_size;      /* samples per step (default 64); the last batch of an epoch
                               may be short (see drop_last); larger than the training
                               set: the whole set as one batch (the trainer keeps
                               min(batch_size, count), ffnn_trainer_batch_size)      */
    float learning_rate;    /* step size lr of the optimizer (default 0.01)        */
    uint64_t seed;          /* RNG seed for shuffling (default 1)                  */
    int shuffle;            /* 1: fresh permutation per epoch (default); 0: file order */
    int drop_last;          /* 1: an epoch has floor(count / batch_size) steps, the
                               count % batch_size samples left over by its permutation
                               are not trained on; 0 (default, PyTorch DataLoader's
                               default): ceil(count / batch_size) steps, the last
                               one short                                          */
    ffnn_loss loss;         /* default FFNN_LOSS_SOFTMAX_CE                        */
    ffnn_device device;     /* default FFNN_DEVICE_AUTO                            */
    ffnn_strategy strategy; /* cuda training strategy (default FFNN_STRATEGY_AUTO)   */
    ffnn_precision precision; /* cuda matmul arithmetic (default FFNN_PRECISION_FP32);
                               tf32: cublas, fused, graph or auto; bf16: cublas
                               or auto                                            */
    int steps_per_launch;   /* graph, persistent, cublas: steps queued per launch
                               (0 = the default: 16 for graph, the whole epoch for
                               persistent, 8 for cublas; graph and cublas capture
                               a launch's steps in one CUDA graph, cublas with 1
                               launches op by op);
                               ffnn_trainer_run_epoch_until's on_step runs once per
                               launch, after its last step                        */
    int threads;            /* cpu: the OpenMP backend's threads: 0 (default) = all cores
                               (omp_get_max_threads(), which OMP_NUM_THREADS sets);
                               N >= 1 = N threads. Its matmuls sum in another order than
                               the reference (results agree to ~1e-6 relative); its
                               results do not depend on N. Its matmul kernels are the
                               best set this CPU runs (avx512 > avx2 > baseline; each
                               gives its own last bits); the environment variable
                               FFNN_OMP_ISA=avx512|avx2|baseline forces one, and
                               ffnn_trainer_create refuses a set the CPU cannot run
                               (FFNN_ERR_UNSUPPORTED) or an unknown name
                               (FFNN_ERR_INVALID_ARGUMENT). The single-threaded reference
                               is strategy FFNN_STRATEGY_REFERENCE (then threads must be
                               0 or 1). Ignored on cuda. In [0, 1024].              */
    size_t eval_batch_size; /* samples per forward pass in ffnn_trainer_evaluate (default 1024) */
    /* The optimizer, as PyTorch's torch.optim.SGD / Adam (single-tensor path):
     *   sgd       p -= lr g
     *   momentum  buf = g (step 1), else momentum buf + g   (dampening 0)
     *             p -= lr buf, or with nesterov p -= lr (g + momentum buf)
     *   adam      m = beta1 m + (1-beta1) g,  v = beta2 v + (1-beta2) g^2,
     *             p -= lr/(1-beta1^t) * m / (sqrt(v)/sqrt(1-beta2^t) + epsilon)
     *             (t = 1, 2, ...: steps taken by this trainer)
     * Fields of the optimizers not chosen are still range-checked. */
    ffnn_optimizer optimizer; /* default FFNN_OPT_SGD                                */
    float momentum;         /* in [0, 1) (default 0.9; --optimizer momentum)       */
    int nesterov;           /* 1: Nesterov momentum (momentum only; default 0)     */
    float beta1, beta2;     /* adam: each in [0, 1) (default 0.9, 0.999)           */
    float epsilon;          /* adam: in (0, 1] (default 1e-8)                      */
    /* Weight decay, as PyTorch's weight_decay argument of the optimizer:
     *   sgd, momentum, adam  g += weight_decay p before the update (L2 penalty)
     *   adamw                p *= 1 - lr weight_decay, then Adam on g (decoupled)
     * decay_bias 0 exempts the biases (PyTorch decays every parameter of a group:
     * its equivalent is two parameter groups, biases with weight_decay 0). */
    float weight_decay;     /* in [0, 1e6] (default 0; the CLI's default for adamw
                               is 0.01, torch.optim.AdamW's)                      */
    int decay_bias;         /* 1: biases decayed too (default); 0: weights only    */
    /* The learning-rate schedule (ffnn_lr_schedule above; the rate of each epoch
     * is ffnn_epoch_stats.learning_rate). Settings of other schedules are
     * still range-checked. */
    ffnn_lr_schedule lr_schedule; /* default FFNN_LR_CONSTANT                        */
    int lr_step_size;       /* step: epochs per decay, >= 1 (default 1)            */
    float lr_gamma;         /* step, multistep, exponential: factor in (0, 1]
                               (default 0.1)                                       */
    int lr_milestones[FFNN_LR_MILESTONES_MAX]; /* multistep: increasing epochs >= 1 */
    int lr_milestone_count; /* multistep: milestones used, >= 1                    */
    int lr_t_max;           /* cosine: T_max in epochs, >= 1 (0: epochs)           */
    float lr_min;           /* cosine: eta_min; plateau: min_lr; in [0, lr)
                               (default 0)                                         */
    float lr_end_factor;    /* linear: the factor reached, in [0, 1] (default 0)   */
    int lr_total_iters;     /* linear: epochs to reach it, >= 1 (0: epochs)        */
    int lr_patience;        /* plateau: epochs without improvement tolerated
                               (default 10)                                        */
    float lr_factor;        /* plateau: the reduction, in (0, 1) (default 0.1)     */
    float lr_threshold;     /* plateau: relative improvement that counts, in [0, 1)
                               (default 1e-4)                                      */
    /* Gradient clipping, after the backward pass (and any reduction of the
     * gradients between devices), before the optimizer step: by value first
     * (torch.nn.utils.clip_grad_value_), then by the global L2 norm over all
     * parameters (torch.nn.utils.clip_grad_norm_: g *= min(1, max / (norm +
     * 1e-6)); ffnn_trainer_step_grad_norms has the norms before clipping). */
    float clip_grad_norm;   /* max norm, > 0; 0: off (default)                     */
    float clip_grad_value;  /* max |g|, > 0; 0: off (default)                      */
    /* Exponential moving average of the parameters, updated after every optimizer
     * step: ema = decay ema + (1 - decay) p (starting from the initial parameters;
     * torch: ema.mul_(decay).add_(p, alpha=1 - decay)). When on, evaluation,
     * ffnn_trainer_sync_model and so saved models use the EMA weights. */
    float ema_decay;        /* in [0, 1); 0: off (default)                         */
    int warmup_steps;       /* linear warm-up: step k < warmup_steps (0-based, over
                               the run) runs at (k + 1) / warmup_steps of the
                               schedule's rate (default 0: none)                   */
    int early_stopping;     /* early stopping's patience P, in epochs, in [0, 1000000]
                               (default 0: off): the trainer tracks the best epoch
                               and its weights, and reports the stop once P epochs
                               after it have not improved on it
                               (ffnn_trainer_early_stopping)                       */
    /* Private: room for the options reached only by name (ffnn_train_config_set,
     * _get), so that adding one leaves sizeof(ffnn_train_config) as it is. Today
     * two cuda launch shapes, for experiments (0 = the default; ignored on cpu;
     * neither changes any arithmetic or its order, so results are bit-identical):
     *   cuda_block_1d  threads per block of the 1-D element-wise kernels (gather,
     *                  activations, optimizer update): 0 (256) or a multiple of 32
     *                  in [32, 1024]. The loss and bias-gradient reductions keep theirs.
     *   cuda_block_2d  edge of the square thread block of the naive matmul
     *                  (strategy naive): 0 (16), 8, 16 or 32.
     * Zero (ffnn_train_config_default) is every such option's default. Do not read
     * or write it directly: its layout is the library's. */
    int reserved[16];
} ffnn_train_config;

/* The defaults listed above. */
FFNN_API ffnn_train_config ffnn_train_config_default(void);


/* The accepted range of a numeric option of ffnn_train_config (the limit column
 * of the option table, ffnn_train_option.limit): what ffnn_trainer_create and
 * ffnn_train_config_set check and the command line's options are parsed against.
 * Bounds are inclusive unless *_open is set. Some options have a further rule
 * (batch_size <= the training set; cuda_block_1d a multiple of 32, cuda_block_2d
 * 8, 16 or 32; nesterov only with momentum): those are checked at creation. */
typedef struct ffnn_config_limit {
    const char *field;   /* the ffnn_train_config field, e.g. "epochs"           */
    double min, max;     /* the range                                            */
    int min_open;        /* 1: min itself is refused (learning_rate, epsilon)     */
    int max_open;        /* 1: max itself is refused (momentum, beta1, beta2)     */
} ffnn_config_limit;

/* The limit of one field by name ("epochs", "batch_size", "learning_rate",
 * "threads", "eval_batch_size", "steps_per_launch", "momentum", "beta1", "beta2",
 * "epsilon", "early_stopping", "cuda_block_1d", "cuda_block_2d", ... : every
 * numeric option of ffnn_train_option_at; "lr_milestone" for each milestone), or
 * NULL for an unknown name.
 * Owned by the library (static); do not free. */
FFNN_API const ffnn_config_limit *ffnn_train_config_limit(const char *field);

/* The type of a training option (ffnn_train_option.type): how its bytes in
 * ffnn_train_config read and how its text (ffnn_train_config_set) is written. */
typedef enum ffnn_option_type {
    FFNN_OPTION_INT = 0,     /* int; text: a decimal integer                        */
    FFNN_OPTION_SIZE = 1,    /* size_t; text: a decimal integer                     */
    FFNN_OPTION_U64 = 2,     /* uint64_t; text: a decimal integer                   */
    FFNN_OPTION_FLOAT = 3,   /* float; text: a finite decimal number (strtod)       */
    FFNN_OPTION_BOOL = 4,    /* int 0 or 1; text: "true"/"false" or "1"/"0"         */
    FFNN_OPTION_ENUM = 5,    /* an enum of this header (int-sized); text: its name
                                (ffnn_*_from_name: "ce", "adam", ...)                */
    FFNN_OPTION_INT_LIST = 6 /* int [size / sizeof(int)] with an int count at
                                count_offset; text: increasing integers joined by
                                ',' ("" for none)                                   */
} ffnn_option_type;

/* When a checkpoint records an option (ffnn_train_option.checkpoint). */
typedef enum ffnn_option_checkpoint {
    FFNN_CK_NONE = 0,     /* not recorded: a resumed run may change it              */
    FFNN_CK_ALWAYS = 1,   /* always recorded                                        */
    FFNN_CK_OPTIONAL = 2, /* recorded when not its default; absent: the default     */
    FFNN_CK_MOMENTUM = 3, /* recorded with optimizer momentum only                  */
    FFNN_CK_ADAM = 4      /* recorded with optimizer adam or adamw only             */
} ffnn_option_checkpoint;

/* One training option: a row of the library's option table. */
typedef struct ffnn_train_option {
    const char *name;          /* the field's name ("batch_size"); the name
                                  ffnn_train_config_set takes                      */
    ffnn_option_type type;
    size_t offset;             /* bytes from the start of ffnn_train_config        */
    size_t size;               /* bytes it occupies (INT_LIST: the whole array)    */
    const char *count_name;    /* INT_LIST: its count field ("lr_milestone_count"),
                                  else NULL                                       */
    size_t count_offset;       /* INT_LIST: the count's offset, else 0             */
    int hidden;                /* 1: inside ffnn_train_config.reserved (reached by
                                  name only: a launch knob)                        */
    double default_value;      /* ffnn_train_config_default's (ENUM: the enum's
                                  value; INT_LIST: the count, 0)                   */
    ffnn_config_limit limit;   /* the accepted range (INT_LIST: of each element;
                                  BOOL [0, 1]; ENUM the enum's values)              */
    const char *checkpoint_key;/* the checkpoint's metadata key, NULL: none         */
    ffnn_option_checkpoint checkpoint;
    int resume_match;          /* 1: ffnn_trainer_resume refuses a run whose value
                                  differs from the checkpoint's (when recorded)     */
    const char *cli;           /* "--batch": ffnn train's option; "--lr-schedule
                                  SPEC": part of another option's value; "none:
                                  why" when the command line has none              */
    const char *help;          /* one line                                         */
} ffnn_train_option;

/* The number of training options, and option i (0 <= i < count; NULL outside),
 * or by name (NULL for an unknown one). Owned by the library (static, constant);
 * do not free. Thread safety: any thread, any time. */
FFNN_API size_t ffnn_train_option_count(void);
FFNN_API const ffnn_train_option *ffnn_train_option_at(size_t i);
FFNN_API const ffnn_train_option *ffnn_train_option_find(const char *name);

/* Set option name of *cfg from its text value (ffnn_option_type says the
 * syntax), range-checked against the option's limit; a float must also stay
 * itself as float32 (1e-50, which would become 0, is refused). Every option,
 * public fields and reserved ones alike (e.g. ffnn_train_config_set(&cfg,
 * "cuda_block_1d", "128")). Checks only the value itself: the rules between
 * options (nesterov needs momentum, lr_min below learning_rate, cuda_block_1d a
 * multiple of 32 ...) are ffnn_trainer_create's. On failure *cfg is unchanged.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL argument; an unknown name, the
 * message naming it; a value that does not parse or is out of range: the
 * message names the option, what it expects and the range, e.g. "ffnn_train_
 * config_set: batch_size: expected an integer in [1, 16777216], found '0'"; for
 * an enum the library's message of ffnn_*_from_name with the accepted names).
 * Thread safety: writes *cfg only. */
FFNN_API ffnn_status ffnn_train_config_set(ffnn_train_config *cfg, const char *name,
                                           const char *value);

/* Option name of *cfg as text into buf [size], NUL-terminated, as
 * ffnn_train_config_set reads it back (floats in the shortest decimal that
 * reads back the same; enums by name; bools "true"/"false"). Errors:
 * FFNN_ERR_INVALID_ARGUMENT (NULL argument, unknown name, buf too small: size
 * 64 is always enough but for INT_LIST, which needs up to 8 bytes per element).
 * Thread safety: reads *cfg only. */
FFNN_API ffnn_status ffnn_train_config_get(const ffnn_train_config *cfg, const char *name,
                                           char *buf, size_t size);

typedef struct ffnn_trainer ffnn_trainer;

/* Prepare training of m on train: validates the configuration against the model
 * and data (input width = features; classes fit the output width, or, for float
 * targets, one target per output and loss mse or sigmoid_bce; loss/last-layer
 * compatibility: softmax_ce and sigmoid_bce need an identity last layer since
 * they apply softmax/sigmoid themselves), picks the backend, uploads the
 * parameters and the whole data set (uint8 or float, as it is) to the device once.
 * Before allocating, the memory of its buffers and the data (parameters,
 * gradients, optimizer state, a batch of activations, the data set) is estimated
 * and refused when the device (cudaMemGetInfo) or, for the cpu backends, the
 * host does not have it: FFNN_ERR_NO_MEMORY with the estimate and what is free.
 * The trainer keeps pointers to m and train: both must outlive it. Before
 * anything is allocated the task checks of ffnn_dataset_check_task (all but the
 * many-classes rule) run on train, and sample weights (ffnn_dataset_set_sample_
 * weights) are refused on cuda and with data parallelism.
 * Errors: FFNN_ERR_INVALID_ARGUMENT, FFNN_ERR_UNSUPPORTED (no CUDA in the build,
 * no GPU; weights where they do not train), FFNN_ERR_CUDA, FFNN_ERR_NO_MEMORY. */
FFNN_API ffnn_status ffnn_trainer_create(ffnn_model *m, const ffnn_dataset *train,
                                         const ffnn_train_config *cfg, ffnn_trainer **out);
FFNN_API void ffnn_trainer_free(ffnn_trainer *t);

/* The device actually used (never FFNN_DEVICE_AUTO). */
FFNN_API ffnn_device ffnn_trainer_device(const ffnn_trainer *t);
/* The strategy the trainer runs: on cuda cfg.strategy with auto resolved (tune: the
 * measured pick, ffnn_trainer_strategy_note); on the cpu
 * FFNN_STRATEGY_REFERENCE for the reference, FFNN_STRATEGY_TILED (the plain ops) for
 * the OpenMP backend. */
FFNN_API ffnn_strategy ffnn_trainer_strategy(const ffnn_trainer *t);
/* What chose the strategy, as text: with FFNN_STRATEGY_TUNE on cuda the
 * measurement, each candidate's mean wall time per step (synchronised, after
 * warm-up steps; microseconds) and the pick, e.g. "tune: persistent 14.9 us/step,
 * graph 33.1, fused 38.0, cublas 80.2, cublaslt 83.0 -> persistent"; "" when
 * nothing was measured (any other strategy, the cpu, data parallelism). Owned by
 * the trainer, valid until ffnn_trainer_free; never NULL for a trainer. */
FFNN_API const char *ffnn_trainer_strategy_note(const ffnn_trainer *t);
/* CPU threads of the trainer's backend: 1 for the cpu reference, N for the OpenMP
 * backend (cfg.threads resolved: 0 becomes the core count), 0 on cuda. */
FFNN_API int ffnn_trainer_threads(const ffnn_trainer *t);
/* Steps in one epoch: ceil(count / batch_size), floor with drop_last. */
FFNN_API size_t ffnn_trainer_steps_per_epoch(const ffnn_trainer *t);
/* The batch size the trainer runs: cfg.batch_size, or the training set's sample
 * count when cfg.batch_size is larger. */
FFNN_API size_t ffnn_trainer_batch_size(const ffnn_trainer *t);

/* Called during an epoch after each step (on the host); may be NULL. */
typedef void (*ffnn_progress_fn)(void *user, size_t step, size_t steps_per_epoch);

typedef struct ffnn_epoch_stats {
    int epoch;              /* 1-based                                     */
    double train_loss;      /* mean of the per-step mean losses            */
    double seconds;         /* wall time of the epoch's training (synchronised) */
    double images_per_second;
    double val_loss;        /* mean loss over the validation set after the epoch
                               (ffnn_trainer_set_validation; as ffnn_trainer_evaluate),
                               NaN without one or when the epoch is unfinished */
    double val_accuracy;    /* its accuracy (NaN likewise)                 */
    double learning_rate;   /* the schedule's rate of the epoch's last step        */
} ffnn_epoch_stats;

/* A validation set: after each finished epoch, ffnn_trainer_run_epoch(_until)
 * evaluates the trainer on val (as ffnn_trainer_evaluate, on the device) and
 * reports it in ffnn_epoch_stats.val_loss / val_accuracy (not counted in
 * seconds). val must outlive the trainer (or be replaced first); NULL removes
 * it. It is checked as ffnn_trainer_evaluate checks its data. Data parallelism
 * (ffnn_trainer_create_parallel): each rank evaluates its own, and rank 0's
 * val_loss / val_accuracy are broadcast to every rank after each finished epoch
 * (the plateau schedule and early stopping then agree on every rank). Errors:
 * FFNN_ERR_INVALID_ARGUMENT. */
FFNN_API ffnn_status ffnn_trainer_set_validation(ffnn_trainer *t, const ffnn_dataset *val);

/* One epoch: a permutation of the training set (or file order), one optimizer
 * step per mini-batch on the gradient averaged over the batch (mean_b dL_b/dW;
 * sgd: W <- W - lr * mean_b dL_b/dW), the last partial batch included unless
 * drop_last. Per-step losses are read back once, at the end.
 * An unfinished epoch (left by ffnn_trainer_run_epoch_until, ffnn_trainer_step
 * or ffnn_trainer_resume) is finished instead of starting a new one; stats then
 * cover the whole epoch's loss and this call's time and images.
 * Errors: FFNN_ERR_NUMERIC when a step's loss is NaN/Inf (message names the
 * epoch and step); backend errors. */
FFNN_API ffnn_status ffnn_trainer_run_epoch(ffnn_trainer *t, ffnn_progress_fn progress,
                                            void *user, ffnn_epoch_stats *stats);

/* Called after each step of ffnn_trainer_run_epoch_until (on the host, with the
 * step queued, maybe not finished on the device): epoch 1-based, step in
 * [1, steps_per_epoch] (steps of the epoch done). It may call
 * ffnn_trainer_save_checkpoint(t, ...). Return 0 to go on, non-zero to stop
 * after this step. */
typedef int (*ffnn_step_fn)(void *user, ffnn_trainer *t, int epoch, size_t step,
                            size_t steps_per_epoch);

/* Like ffnn_trainer_run_epoch, but on_step (may be NULL) may stop the epoch
 * after any step: *finished (may be NULL) is then 0 and the next call (or
 * ffnn_trainer_run_epoch) continues the same epoch from the next step, with the
 * same permutation. Either way the losses of the steps run are read back and
 * checked once, at the end, and stats->train_loss is the mean of the epoch's
 * per-step losses so far (seconds and images_per_second: this call's). */
FFNN_API ffnn_status ffnn_trainer_run_epoch_until(ffnn_trainer *t, ffnn_step_fn on_step, void *user,
                                                  ffnn_epoch_stats *stats, int *finished);

/* Where the trainer stands: *epoch the epoch in progress or last finished
 * (1-based; 0 before the first), *step the steps of it done (equal to
 * ffnn_trainer_steps_per_epoch when it is finished). Either may be NULL. */
FFNN_API void ffnn_trainer_position(const ffnn_trainer *t, int *epoch, size_t *step);

/* The per-step mean losses of the last finished epoch (by ffnn_trainer_run_epoch,
 * ffnn_trainer_run_epoch_until or ffnn_trainer_step; after a resume, including
 * the steps before the checkpoint):
 * *losses [*count] (owned by the trainer, valid until the next epoch; *count is 0
 * before the first epoch). Step k's loss is the mean of its batch's per-sample
 * losses (with sample weights the weighted mean sum w l / sum w), computed
 * before that step's update. */
FFNN_API ffnn_status ffnn_trainer_step_losses(const ffnn_trainer *t, const double **losses,
                                              size_t *count);

/* With clip_grad_norm > 0: the global gradient norm of each step of the last
 * finished epoch, before clipping (as ffnn_trainer_step_losses: *norms [*count],
 * owned by the trainer, valid until the next epoch); *count is 0 without
 * clipping by norm. */
FFNN_API ffnn_status ffnn_trainer_step_grad_norms(const ffnn_trainer *t, const float **norms,
                                                  size_t *count);

/* One step on the next batch of the current epoch (starting a new epoch, with a
 * new permutation, when the previous one is done); *loss receives the batch's
 * mean loss (read back from the device). For parity tests and fine control. */
FFNN_API ffnn_status ffnn_trainer_step(ffnn_trainer *t, double *loss);

/* Mean loss and accuracy (fraction of argmax == label; for one output, of
 * (output > threshold) == label with threshold 0 for sigmoid_bce logits and 0.5
 * for mse) of the current parameters over data. With float targets a sample
 * counts as right when every output is on its target's side: (output >
 * threshold) == (target > 0.5) for each output - the rule above for 0/1 targets
 * of one output. When a float target is neither 0 nor 1 (regression) *accuracy is
 * NaN: ffnn_trainer_evaluate_metrics gives MSE, RMSE, MAE and R^2 instead. Float
 * targets of data must be one per output (and the loss not ce). */
FFNN_API ffnn_status ffnn_trainer_evaluate(ffnn_trainer *t, const ffnn_dataset *data,
                                           double *loss, double *accuracy);

/* Copy the device parameters back into the model. Not needed to read the model
 * (its readers do it, see "A trained model and its trainer"); explicit control. */
FFNN_API ffnn_status ffnn_trainer_sync_model(ffnn_trainer *t);

/* Every metric of the trainer's current parameters over data (in the data's own
 * units: the model's standardisation applied; regression metrics meaningful,
 * unlike ffnn_trainer_evaluate's accuracy), on the host with the CPU reference
 * (ffnn_model_evaluate_metrics with the trainer's loss and eval_batch_size);
 * confusion as there (may be NULL). The model is synced first. */
FFNN_API ffnn_status ffnn_trainer_evaluate_metrics(ffnn_trainer *t, const ffnn_dataset *data,
                                                   ffnn_metrics *metrics, uint64_t *confusion);

/* ---- Early stopping (cfg.early_stopping = P > 0) ----
 *
 * Once per finished epoch (by ffnn_trainer_run_epoch(_until), or the last step of
 * one by ffnn_trainer_step) the trainer takes the epoch's metric: its validation
 * loss (ffnn_epoch_stats.val_loss, ffnn_trainer_set_validation), or without a
 * validation set (and for an epoch ffnn_trainer_step finishes, which evaluates
 * none) its mean training loss - the plateau schedule's metric. An epoch whose
 * metric is finite and lower than the best so far (or the first finite one)
 * becomes the best epoch: the trainer keeps its metric and a host copy of its
 * weights (the model's weights: the EMA weights when ema_decay > 0), parameter_count
 * floats. A checkpoint holds this state (docs/FORMATS.md), so a resumed run
 * stops and restores as the run that never stopped. Data parallelism: every rank
 * sees rank 0's validation loss, so every rank decides the same. */

/* The state: *best_epoch the best epoch so far (1-based; 0 before one, or with
 * early stopping off), *best_loss its metric (NaN without one), *stop is 1 when
 * patience has run out: the last finished epoch is P or more epochs after the
 * best (the caller stops; the trainer would train on). Each may be NULL.
 * Errors: FFNN_ERR_INVALID_ARGUMENT (NULL trainer). */
FFNN_API ffnn_status ffnn_trainer_early_stopping(const ffnn_trainer *t, int *best_epoch,
                                                 double *best_loss, int *stop);

/* Put the best epoch's weights into the trainer's model (its host parameters,
 * which ffnn_model_parameters, _save, _evaluate ... read). The trainer itself is
 * unchanged: its device parameters, optimizer state, ffnn_trainer_evaluate and
 * checkpoints stay those of its last step, and its next step (or
 * ffnn_trainer_sync_model) makes those the model's again. Local (one rank of a
 * data-parallel run may call it alone). Errors: FFNN_ERR_INVALID_ARGUMENT (NULL
 * trainer, early stopping off, or no best epoch yet). */
FFNN_API ffnn_status ffnn_trainer_restore_best(ffnn_trainer *t);

/* ------------------------------------------------------------------ sweeps */

/* A sweep: many models trained at once in one process, each with a config of its
 * own (a hyperparameter grid, seeds, an ensemble) and a training set (train[i]) and
 * optional validation set (val[i]; val or an entry may be NULL) of its own, which
 * may be shared (one set for all) or differ (the folds of a k-fold split)
 * (docs/SWEEP.md); models[count], configs[count], train[count], val[count]. Each model gets a trainer of its own
 * (ffnn_trainer_create with its config), so each trains exactly as it would alone:
 * on the cpu every trainer is a one-thread OpenMP backend (whose kernels give the
 * same bits for any thread count: the same parameters as ffnn_train or `ffnn train`
 * with that config, bit for bit, whatever cfg.threads says) and `threads` lanes (0:
 * the cores online) run the models' epochs side by side, each lane taking the next
 * model still training; on cuda each trainer has a backend context (streams, device
 * buffers) of its own and the lanes are host threads queueing their models' steps at
 * the same time, so the GPU runs several models' kernels concurrently (the same
 * kernels as a lone run, so the same bits as ffnn_train on cuda with that config;
 * the models share the process, its CUDA context and start-up, not one matmul over
 * the model axis); a model on the persistent strategy makes it one lane: that
 * strategy's kernel holds every SM).
 * Strategy batched (every config; cuda): no trainers; the models' parameters in
 * one device arena and each op one kernel launch for all of them (the model index
 * in the grid: HFTA, Wang et al., MLSys 2022), each model with its own seed (data
 * order), learning rate and epochs; every model the same dense net (activations
 * identity, relu, sigmoid, tanh; no dropout), one training set with labels and
 * one validation set, loss ce, plain sgd with a constant rate, no weight decay,
 * clipping, EMA, warm-up or early stopping, one precision (fp32, tf32 or bf16 on
 * the tensor cores), one batch size (anything else:
 * FFNN_ERR_UNSUPPORTED naming the model and the setting). Each model within the
 * strategies' tolerance of its lone run (tests/test_sweep_cuda.c), and the same
 * bits whichever other models train beside it; ffnn_sweep_trainer is NULL, lanes 1.
 * Early stopping is per model (its own cfg.early_stopping, on val): a model whose
 * patience runs out stops, and its model gets its best epoch's weights.
 * Ownership: the models stay the caller's and must outlive the sweep, each a
 * different object (the sweep's trainers write them, as ffnn_trainer_create's
 * trainer does: see "A trained model and its trainer"); the data sets are read
 * and must outlive it. Thread safety: one thread at a time per sweep.
 * Errors (ffnn_sweep_create): FFNN_ERR_INVALID_ARGUMENT (count 0, a NULL or
 * repeated model, a NULL training set, cpu and cuda configs mixed, device auto that chose cuda: name
 * the device, threads < 0), and those of ffnn_trainer_create for model i (the
 * message names i); nothing is kept on failure. */
typedef struct ffnn_sweep ffnn_sweep;
FFNN_API ffnn_status ffnn_sweep_create(ffnn_model *const *models,
                                       const ffnn_train_config *configs, size_t count,
                                       const ffnn_dataset *const *train,
                                       const ffnn_dataset *const *val, int threads,
                                       ffnn_sweep **out);
/* ffnn_sweep_create over gpus GPUs of this process (cuda configs; gpus 0: all on
 * the calling thread's device, as ffnn_sweep_create): model i on GPU i % gpus (its
 * trainer created there; the lanes serve every GPU, each running a model's epoch
 * on that model's device), or with strategy batched one engine per GPU holding
 * models g, g + gpus ... (engine g run by a lane of its own, at the same time as
 * the others). Each model trains as it would alone on its GPU. Errors: those of
 * ffnn_sweep_create, FFNN_ERR_INVALID_ARGUMENT (gpus < 0 or > FFNN_SWEEP_MAX_GPUS,
 * or gpus > 0 with configs not on cuda), FFNN_ERR_UNSUPPORTED (more GPUs than are
 * visible: the message says how many are). */
#define FFNN_SWEEP_MAX_GPUS 64
FFNN_API ffnn_status ffnn_sweep_create_gpus(ffnn_model *const *models,
                                            const ffnn_train_config *configs, size_t count,
                                            const ffnn_dataset *const *train,
                                            const ffnn_dataset *const *val, int threads,
                                            int gpus, ffnn_sweep **out);
FFNN_API void ffnn_sweep_free(ffnn_sweep *s);

/* One epoch of every model still training (ffnn_trainer_run_epoch each; models
 * done are skipped); *training (may be NULL) gets the number still training after
 * it (0: the sweep is over). A model is done after its cfg.epochs epochs or when
 * its early stopping's patience ran out. Errors: the first failed model's error
 * (FFNN_ERR_NUMERIC for a NaN loss ...), its index and epoch named; the other
 * models' epochs ran. */
FFNN_API ffnn_status ffnn_sweep_run_epoch(ffnn_sweep *s, size_t *training);

/* What model i has done so far. best_epoch / best_loss: early stopping's
 * (ffnn_trainer_early_stopping), else 0 and the last epoch's val_loss. */
typedef struct ffnn_sweep_state {
    int epochs_run;          /* epochs finished                                   */
    int training;            /* 1: more epochs to run; 0: done                    */
    int best_epoch;          /* 1-based; 0 without early stopping                 */
    double best_loss;        /* its validation loss (NaN without val)             */
    ffnn_epoch_stats last;   /* the last finished epoch's stats                   */
} ffnn_sweep_state;
FFNN_API ffnn_status ffnn_sweep_model_state(const ffnn_sweep *s, size_t i,
                                            ffnn_sweep_state *state);
/* Stop model i now, before its cfg.epochs: later ffnn_sweep_run_epoch calls skip
 * it, its state says training 0, and it ends as a lone run of epochs_run epochs
 * ends (ffnn_train with cfg.epochs = epochs_run: with early stopping its best
 * epoch's weights, ffnn_trainer_restore_best). The building block of successive
 * halving (docs/SWEEP.md; `ffnn sweep --halving`): rank the models still training
 * after a rung's epochs, stop all but the best. A model already done: nothing
 * happens, FFNN_OK. Thread safety: as the sweep's (one thread at a time, not
 * during ffnn_sweep_run_epoch). Errors: FFNN_ERR_INVALID_ARGUMENT (NULL sweep, i
 * out of range), those of ffnn_trainer_restore_best (the message names i; the
 * model is stopped either way). */
FFNN_API ffnn_status ffnn_sweep_stop_model(ffnn_sweep *s, size_t i);
/* Model i's trainer (for ffnn_trainer_evaluate_metrics, checkpoints ...), owned
 * by the sweep; NULL for an index out of range and with strategy batched. */
FFNN_API ffnn_trainer *ffnn_sweep_trainer(ffnn_sweep *s, size_t i);
FFNN_API size_t ffnn_sweep_count(const ffnn_sweep *s);
/* Models that train at the same time (1 on cuda). */
FFNN_API int ffnn_sweep_lanes(const ffnn_sweep *s);

/* The whole run in one call, printing nothing: train m on train for cfg->epochs
 * epochs (the loop of `ffnn train`): train and val (may be NULL) are standardised
 * with m's statistics first (ffnn_dataset_standardize: raw rows in, as
 * ffnn_model_evaluate takes them); a trainer is created (ffnn_trainer_create),
 * given val (ffnn_trainer_set_validation), runs the epochs, stops when early
 * stopping's patience runs out (cfg->early_stopping > 0; needs val) and then puts
 * the best epoch's weights into m (ffnn_trainer_restore_best); it is freed before
 * the call returns, and m keeps the weights. last (may be NULL) receives the
 * stats of the last epoch run. For progress, a validation curve or checkpoints,
 * drive ffnn_trainer_run_epoch yourself (docs/C_API.md). Errors: those of the
 * calls above (the first failure is returned, m then holds the weights of the
 * last finished step); FFNN_ERR_INVALID_ARGUMENT (NULL m, train or cfg; early
 * stopping without val). Thread safety: as ffnn_trainer_create (m is written;
 * train and val only read). */
FFNN_API ffnn_status ffnn_train(ffnn_model *m, const ffnn_dataset *train, const ffnn_dataset *val,
                                const ffnn_train_config *cfg, ffnn_epoch_stats *last);

/* ------------------------------------------------------------------ checkpoints */

/* A checkpoint is a safetensors file (docs/FORMATS.md, "Checkpoints") holding
 * everything needed to continue a run exactly: the parameters (named as in a
 * model file), the optimizer state (optimizer.layers.<i>.weight.momentum_buffer,
 * .exp_avg, .exp_avg_sq - PyTorch's names), the current epoch's per-step losses
 * so far (train.step_losses, F64) and __metadata__ with format
 * "ffnn-checkpoint", arch, loss, the training configuration (optimizer and its
 * hyperparameters, learning_rate, batch_size, seed, shuffle, epochs), the
 * training set's sample count and CRC-32, epoch, step, optimizer_steps and the
 * shuffle generator's state at the start of the epoch; the state of the plateau
 * schedule and, with early_stopping > 0, of early stopping (the best epoch, its
 * metric and weights: early_stopping.best.layers.<i>.weight ...). Resuming at step
 * k of an epoch and running on gives the per-step losses and parameters of the
 * run that never stopped, bit for bit (same device and kernels), and early
 * stopping the same stop and the same best epoch's weights. */

/* What a checkpoint records besides the tensors. */
typedef struct ffnn_checkpoint_info {
    ffnn_train_config cfg;   /* loss, batch_size, learning_rate, seed, shuffle,
                                epochs, optimizer, momentum, nesterov, beta1,
                                beta2, epsilon, the optional settings and
                                early_stopping (0: the file holds no early
                                stopping state) from the file; device,
                                kernels, eval_batch_size: the defaults   */
    size_t train_count;      /* samples of the training set              */
    uint32_t train_crc32;    /* zlib CRC-32 of its features, then targets */
    int epoch;               /* the epoch in progress or last finished (1-based;
                                0: saved before the first)               */
    size_t step;             /* steps of that epoch done                 */
    size_t steps_per_epoch;
    uint64_t optimizer_steps;/* optimizer steps taken (Adam's t)         */
    char ffnn_version[64];   /* of the writer ("" if absent)             */
} ffnn_checkpoint_info;

/* Before a model of architecture arch is created and trained on train with
 * cfg: FFNN_OK when the host has the memory this takes (the model's
 * parameters, and when the training runs on the cpu the trainer's buffers and
 * the data: parameters, gradients, optimizer state, a batch of activations;
 * the device's own check runs in ffnn_trainer_create), else FFNN_ERR_NO_MEMORY
 * with the estimate and the memory available (MemAvailable, the cgroup limit,
 * rlimits). Errors also: FFNN_ERR_PARSE (arch). Allocates nothing sized from
 * arch. */
FFNN_API ffnn_status ffnn_train_check_memory(const char *arch, const ffnn_dataset *train,
                                             const ffnn_train_config *cfg);

/* Save the trainer's state to path, atomically (as ffnn_model_save: a
 * temporary file in the same directory, fsync, rename, fsync the directory;
 * on any failure path is left as it was). May be called between steps, e.g.
 * from an ffnn_step_fn. First reads back the losses of the steps not read
 * back yet (one download). Saved from an ffnn_step_fn after an epoch's last step,
 * it holds the state before that epoch's end (its validation, the plateau
 * schedule's and early stopping's update of it), which a run resumed from it
 * then never makes: save the end of an epoch after ffnn_trainer_run_epoch(_until)
 * returns (ffnn train does). Errors: FFNN_ERR_NUMERIC (any loss of the run so
 * far NaN/Inf - the message names the epoch and step - or a NaN/Inf parameter,
 * optimizer state, EMA or best-epoch value; nothing written), FFNN_ERR_IO
 * (path, step, byte offset, strerror), FFNN_ERR_NO_MEMORY, backend errors. */
FFNN_API ffnn_status ffnn_trainer_save_checkpoint(ffnn_trainer *t, const char *path);

/* Continue from the checkpoint at path: t must have been created (on any
 * device) with a model of the checkpoint's architecture and the configuration
 * and training set the checkpoint records (loss, optimizer and
 * hyperparameters, learning_rate, batch_size, seed, shuffle; sample count and
 * CRC-32 of the data; epochs, early_stopping - both say only when to stop - and
 * the device may differ). Sets the device parameters (and the model's), the
 * optimizer state, the step counters, the plateau schedule's state, early
 * stopping's state (when t's early_stopping > 0: the file's best epoch, its
 * metric and weights, or, from a file without them, none yet - the tracking
 * starts at the next finished epoch; when 0 the file's are ignored) and the
 * epoch's permutation; the next ffnn_trainer_run_epoch finishes the saved
 * epoch (or starts the next one when it was finished). The file is checked as
 * a model file is (docs/FORMATS.md) before anything changes. Errors:
 * FFNN_ERR_IO, FFNN_ERR_FORMAT (file, offset or key, expected, found),
 * FFNN_ERR_INVALID_ARGUMENT (a setting that differs: the message names it and
 * both values), FFNN_ERR_NO_MEMORY, backend errors. */
FFNN_API ffnn_status ffnn_trainer_resume(ffnn_trainer *t, const char *path);

/* Read a checkpoint's model (*model, new; may be NULL to skip) and what it
 * records (*info, may be NULL), with the same checks as ffnn_trainer_resume's
 * reading. Use it to build the model and configuration to resume with. */
FFNN_API ffnn_status ffnn_checkpoint_load(const char *path, ffnn_model **model,
                                          ffnn_checkpoint_info *info);


/* ---- Data-parallel training (docs/ARCHITECTURE.md, "Data parallelism") ----
 *
 * Synchronous data parallelism over R ranks: every rank holds the whole model
 * and the whole training set, draws the same permutation, and computes the
 * gradients of its shard of every global batch (ffnn_trainer_create_parallel:
 * a batch of n rows gives the first n % R ranks n / R + 1 rows and the others
 * n / R, in rank order, so the shards tile the batch as one process visits
 * it; the last, short batch of an epoch is split the same way, and a rank may
 * then get no row). Between the backward pass and the optimizer update the
 * gradients are summed over the ranks (in buckets of layers, each started as
 * soon as its layers' backward is done), each rank's weighted by its share of
 * the batch, so every rank applies the same update: the one of the global
 * batch's mean loss, as a single process computes it up to the order of
 * summation (per-step losses within 1e-6 relative of the single-process run on
 * the cpu backends; tests/test_parallel.sh). Collective: every rank calls the
 * trainer's functions in the same order. */
typedef struct ffnn_comm ffnn_comm;

/* 1 when this build has MPI (multi-process runs) / NCCL (multi-GPU runs): each is in
 * a module loaded at run time (docs/BUILD.md "The CUDA and MPI modules"), MPI in
 * libffnn-mpi.so, NCCL in the CUDA module; 1 when that module loads (this call
 * loads it) and has it. */
FFNN_API int ffnn_has_mpi(void);
FFNN_API int ffnn_has_nccl(void);

/* The communicator of the ranks of an MPI launch (mpirun -np R ...; MPI is
 * initialised here with MPI_THREAD_FUNNELED if the caller has not, and
 * finalised by ffnn_comm_free). device FFNN_DEVICE_CPU: gradients summed by
 * MPI_Iallreduce over host memory (the cpu backends); FFNN_DEVICE_CUDA: by
 * NCCL on the GPU numbered by the rank's place among the ranks of its node
 * (modulo the visible GPUs), NCCL bootstrapped by broadcasting its unique id
 * over MPI; FFNN_DEVICE_AUTO: cuda when the build has NCCL and a GPU is
 * visible. Collective. Errors: FFNN_ERR_UNSUPPORTED (no MPI or, for cuda, no
 * NCCL in the build: the message says what to install), FFNN_ERR_IO (an MPI
 * call failed: file, line, call, MPI's text), FFNN_ERR_CUDA (NCCL). */
FFNN_API ffnn_status ffnn_comm_create_mpi(ffnn_device device, ffnn_comm **out);

/* One process driving gpus GPUs (0 .. gpus-1): comms[gpus], one rank per GPU
 * (ncclCommInitAll). Rank i's trainer must be created and run by a thread of
 * its own (ffnn_trainer_create_parallel makes GPU i that thread's device).
 * Errors: FFNN_ERR_UNSUPPORTED (no NCCL in the build, fewer GPUs visible),
 * FFNN_ERR_CUDA, FFNN_ERR_INVALID_ARGUMENT (gpus < 1). */
FFNN_API ffnn_status ffnn_comm_create_gpus(int gpus, ffnn_comm **comms);

/* Rank (0-based) and world size of c (0 and 1 for NULL); its CUDA device (-1:
 * host memory); "mpi", "nccl" ("none" for NULL). */
FFNN_API int ffnn_comm_rank(const ffnn_comm *c);
FFNN_API int ffnn_comm_size(const ffnn_comm *c);
FFNN_API int ffnn_comm_device(const ffnn_comm *c);
FFNN_API const char *ffnn_comm_kind(const ffnn_comm *c);
/* Stop every rank (MPI_Abort; for an in-process GPU group ncclCommAbort, and
 * the caller then ends the process): for a rank that cannot go on, so that the
 * others do not wait for it forever. Does not return under MPI. */
FFNN_API void ffnn_comm_abort(ffnn_comm *c, int code);
/* Time the gradient all-reduce of every step from now on (on != 0) or stop.
 * ffnn_comm_timing: the steps timed, and summed over them, the span from the
 * start of a step's first bucket to the end of its last (ms) and the part the
 * update waited for after the backward pass, i.e. not overlapped (ms). nccl:
 * CUDA events with one synchronisation per step (a timing run; steps captured
 * in CUDA graphs, e.g. --strategy graph, are not timed: use tiled, fused or
 * cublas with --steps-per-launch 1); mpi: the host clock. */
FFNN_API void ffnn_comm_set_timing(ffnn_comm *c, int on);
FFNN_API void ffnn_comm_timing(const ffnn_comm *c, uint64_t *steps, double *span_ms,
                               double *exposed_ms);
/* Free c (after the trainer that uses it). NULL is ignored. */
FFNN_API void ffnn_comm_free(ffnn_comm *c);

/* Blocking collectives over host memory, for work spread over the ranks without
 * an all-reduce of gradients (ffnn sweep under mpirun: each rank trains its own
 * models, the results are gathered). Every rank of c calls them in the same order
 * with the same n / size and root. ffnn_comm_reduce: v[n] (host doubles) becomes
 * op over the ranks' v on every rank (op: FFNN_COMM_SUM, _MIN or _MAX; a sum adds
 * in an order that is the same on every rank). ffnn_comm_broadcast: root's
 * bytes[size] copied to every rank's bytes. A NULL c is a group of one: nothing
 * to do, FFNN_OK. Errors: FFNN_ERR_INVALID_ARGUMENT (op, root out of range),
 * FFNN_ERR_IO (MPI), FFNN_ERR_CUDA (NCCL). */
typedef enum ffnn_comm_op { FFNN_COMM_SUM = 0, FFNN_COMM_MIN = 1, FFNN_COMM_MAX = 2 } ffnn_comm_op;
FFNN_API ffnn_status ffnn_comm_reduce(ffnn_comm *c, double *v, size_t n, ffnn_comm_op op);
FFNN_API ffnn_status ffnn_comm_broadcast(ffnn_comm *c, void *bytes, size_t size, int root);

/* ffnn_trainer_create for one rank of comm (NULL: a plain trainer). The comm's
 * memory must be the backend's (mpi: cpu; nccl: cuda); the persistent strategy
 * (whole epochs in one kernel) has no point for the all-reduce and is refused
 * (auto picks graph instead); fused SGD inside the backward kernels is off.
 * With a comm, ffnn_trainer_save_checkpoint is collective: every rank calls it,
 * rank 0 alone writes, every rank returns its status, and the ranks' parameters
 * are checked to agree (a CRC-32 each) before anything is written;
 * ffnn_trainer_resume is called by every rank with the same file (a shared file
 * system). A checkpoint holds no rank count: the state is the same for any, so
 * a run may resume on another number of ranks (the same training up to the
 * order of summation; bit for bit only with the same count and devices).
 * ffnn_trainer_evaluate, _sync_model and the accessors are local (rank 0 may
 * call them alone); the steps, epochs, read-backs and checkpoints are not.
 * comm must outlive the trainer. Errors: those of ffnn_trainer_create,
 * FFNN_ERR_UNSUPPORTED (a comm of the other memory, persistent). */
FFNN_API ffnn_status ffnn_trainer_create_parallel(ffnn_model *m, const ffnn_dataset *train,
                                                  const ffnn_train_config *cfg, ffnn_comm *comm,
                                                  ffnn_trainer **out);
/* The trainer's communicator (NULL for a plain trainer). */
FFNN_API ffnn_comm *ffnn_trainer_comm(const ffnn_trainer *t);

#ifdef __cplusplus
}
#endif
#endif /* FFNN_H */
