/* Optimizer kernels: replays the recorded gradients of the PyTorch golden cases through
 * AdamW (modes 0 and 1, linear schedule) and SGD and compares every step's parameters; plus
 * unit tests of the clip coefficient, the linear LR factor and SIMD-vs-scalar identity. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "backend/cpu/optim.h"

#define CASES_DIR WT_SOURCE_DIR "/tests/golden/cases"
#define MAX_PARAMS 64

/* Hyperparameters of each case (case.json "optimizer" / "lr_schedule"). */
typedef struct golden_case {
  const char *name;
  int adamw;       /* 0: SGD */
  int adam_mode;
  float lr, beta1, beta2, eps, weight_decay;
  int64_t warmup, total; /* linear schedule when total > 0 */
  int num_steps;
} golden_case;

static const golden_case CASES[] = {
    {"mlp_ce_adamw", 1, 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0, 5},
    {"mlp_adamw_ort_defaults", 1, 1, 1e-3f, 0.9f, 0.999f, 1e-6f, 0.0f, 0, 0, 5},
    {"multilabel_bce", 1, 0, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, 2, 6, 6},
    {"regression_mse_adamw", 1, 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0, 5},
    {"two_output_custom_loss", 1, 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0, 5},
    {"tiny_transformer_frozen_adamw", 1, 0, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0, 5},
    {"cnn_bn_ce_sgd", 0, 0, 0.05f, 0, 0, 0, 0, 0, 0, 5},
    {"regression_l1_sgd", 0, 0, 0.05f, 0, 0, 0, 0, 0, 0, 5},
};

/* Whole file; *size in bytes. NULL when missing. */
static char *read_all(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *size = n;
  }
  return buf;
}

typedef struct case_ctx {
  const golden_case *c;
  char dir[512];
  char *json; /* case.json text: every file name we build must be named there */
} case_ctx;

/* Reads <dir>/<prefix><param>.bin as n floats (n < 0: any length, returned in *out_n). */
static float *load_f32(const case_ctx *cx, const char *prefix, const char *param, int64_t n,
                       int64_t *out_n) {
  char file[400], path[1024], quoted[410];
  snprintf(file, sizeof file, "%s%s.bin", prefix, param);
  snprintf(path, sizeof path, "%s/%s", cx->dir, file);
  snprintf(quoted, sizeof quoted, "\"%s\"", file);
  if (!strstr(cx->json, quoted)) {
    fprintf(stderr, "%s: %s is not named in case.json\n", cx->c->name, file);
    wt_check_failures++;
    return NULL;
  }
  long size = 0;
  char *buf = read_all(path, &size);
  if (!buf || size % 4 != 0 || (n >= 0 && size != n * 4)) {
    fprintf(stderr, "%s: cannot read %s (or wrong size %ld)\n", cx->c->name, path, size);
    wt_check_failures++;
    free(buf);
    return NULL;
  }
  if (out_n) *out_n = size / 4;
  return (float *)buf; /* malloc'd: suitably aligned for float */
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Trainable parameters: init__<name>.bin files that also have step0__grad__<name>.bin. */
static int list_params(const case_ctx *cx, char **names) {
  DIR *d = opendir(cx->dir);
  if (!d) return -1;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && count < MAX_PARAMS) {
    const char *s = e->d_name;
    size_t len = strlen(s);
    if (strncmp(s, "init__", 6) != 0 || len < 11 || strcmp(s + len - 4, ".bin") != 0) continue;
    char name[256], grad[1024];
    snprintf(name, sizeof name, "%.*s", (int)(len - 10), s + 6);
    snprintf(grad, sizeof grad, "%s/step0__grad__%s.bin", cx->dir, name);
    FILE *f = fopen(grad, "rb");
    if (!f) continue; /* frozen parameter or buffer */
    fclose(f);
    names[count++] = strdup(name);
  }
  closedir(d);
  qsort(names, (size_t)count, sizeof *names, cmp_str);
  return count;
}

typedef struct err_stats {
  double max_abs, max_rel, worst_ratio; /* worst_ratio: |a-e| / (atol + rtol|e|) */
  int64_t bad;
} err_stats;

static void compare(err_stats *st, const float *a, const float *e, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)e[i]);
    double tol = 1e-5 + 1e-4 * fabs((double)e[i]);
    if (d > st->max_abs) st->max_abs = d;
    if (e[i] != 0 && d / fabs((double)e[i]) > st->max_rel) st->max_rel = d / fabs((double)e[i]);
    if (d / tol > st->worst_ratio) st->worst_ratio = d / tol;
    if (!(d <= tol)) st->bad++;
  }
}

/* Replays one case: steps (grads from step<k>__grad__, expect step<k>__param__) or, with
 * accum set, the single grad-accumulation update of mlp_ce_adamw (accum__grad__/param__). */
static void run_case(const golden_case *c, int accum) {
  case_ctx cx = {.c = c};
  snprintf(cx.dir, sizeof cx.dir, "%s/%s", CASES_DIR, c->name);
  char jpath[600];
  long jsize;
  snprintf(jpath, sizeof jpath, "%s/case.json", cx.dir);
  cx.json = read_all(jpath, &jsize);
  if (!cx.json) {
    fprintf(stderr, "%s: missing case.json\n", c->name);
    wt_check_failures++;
    return;
  }
  /* Cheap cross-check of the hard-coded table against case.json. */
  if (c->adamw) {
    char key[64];
    snprintf(key, sizeof key, "\"adam_mode\": %d", c->adam_mode);
    CHECK(strstr(cx.json, key) != NULL);
    CHECK(strstr(cx.json, "\"type\": \"AdamW\"") != NULL);
  } else {
    CHECK(strstr(cx.json, "\"type\": \"SGD\"") != NULL);
  }

  char *names[MAX_PARAMS];
  int np = list_params(&cx, names);
  CHECK(np > 0);
  float *p[MAX_PARAMS] = {0}, *m[MAX_PARAMS] = {0}, *v[MAX_PARAMS] = {0};
  int64_t n[MAX_PARAMS] = {0};
  for (int j = 0; j < np; j++) {
    p[j] = load_f32(&cx, "init__", names[j], -1, &n[j]);
    m[j] = calloc((size_t)n[j] + 1, sizeof(float));
    v[j] = calloc((size_t)n[j] + 1, sizeof(float));
  }
  err_stats st = {0};
  int steps = accum ? 1 : c->num_steps;
  for (int k = 0; k < steps; k++) {
    float lr = c->lr;
    if (c->total > 0) lr = (float)((double)c->lr * wt_linear_lr_factor(k, c->warmup, c->total));
    for (int j = 0; j < np; j++) {
      if (!p[j]) continue;
      char gpre[64], ppre[64];
      snprintf(gpre, sizeof gpre, accum ? "accum__grad__" : "step%d__grad__", k);
      snprintf(ppre, sizeof ppre, accum ? "accum__param__" : "step%d__param__", k);
      float *g = load_f32(&cx, gpre, names[j], n[j], NULL);
      float *e = load_f32(&cx, ppre, names[j], n[j], NULL);
      if (g && e) {
        if (c->adamw) {
          wt_adamw_params hp = {.lr = lr, .beta1 = c->beta1, .beta2 = c->beta2, .eps = c->eps,
                                .weight_decay = c->weight_decay, .adam_mode = c->adam_mode,
                                .correct_bias = 1, .t = k + 1};
          wt_adamw_update_f32(p[j], g, m[j], v[j], n[j], &hp);
        } else {
          wt_sgd_update_f32(p[j], g, n[j], lr);
        }
        err_stats one = {0};
        compare(&one, p[j], e, n[j]);
        if (one.bad)
          fprintf(stderr, "%s%s step %d %s: %lld of %lld outside tolerance (max abs %.3g)\n",
                  c->name, accum ? " (accum)" : "", k, names[j], (long long)one.bad,
                  (long long)n[j], one.max_abs);
        compare(&st, p[j], e, n[j]);
      }
      free(g);
      free(e);
    }
  }
  printf("%-32s %-7s steps %d params %2d: max abs %.3e  max rel %.3e  worst err/tol %.4f\n",
         c->name, accum ? "(accum)" : "", steps, np, st.max_abs, st.max_rel, st.worst_ratio);
  CHECK(st.bad == 0);
  for (int j = 0; j < np; j++) {
    free(p[j]);
    free(m[j]);
    free(v[j]);
    free(names[j]);
  }
  free(cx.json);
}

/* Plain scalar reference of both AdamW modes, written independently of the kernel but with
 * the same float32 operation order (documented in optim.c). */
static void ref_adamw(float *p, const float *g, float *m, float *v, int64_t n,
                      const wt_adamw_params *hp) {
  double bc1 = 1, bc2 = 1;
  if (hp->correct_bias) {
    bc1 = 1 - pow(hp->beta1, (double)hp->t);
    bc2 = 1 - pow(hp->beta2, (double)hp->t);
  }
  float omb1 = (float)(1 - (double)hp->beta1), omb2 = (float)(1 - (double)hp->beta2);
  for (int64_t i = 0; i < n; i++) {
    if (hp->adam_mode == 0) p[i] *= (float)(1 - (double)hp->lr * hp->weight_decay);
    m[i] = m[i] * hp->beta1 + omb1 * g[i];
    v[i] = v[i] * hp->beta2 + (omb2 * g[i]) * g[i];
    if (hp->adam_mode == 0) {
      float d = sqrtf(v[i]) / (float)sqrt(bc2) + hp->eps;
      p[i] = p[i] + ((float)(-((double)hp->lr / bc1)) * m[i]) / d;
    } else {
      float d = sqrtf(v[i]) + hp->eps;
      p[i] = p[i] + (-(float)((double)hp->lr * sqrt(bc2) / bc1) * m[i]) / d;
      if (hp->weight_decay != 0)
        p[i] = p[i] + (float)(-(double)hp->lr * hp->weight_decay) * p[i];
    }
  }
}

static uint32_t rng_state = 12345u;
static float frand(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static void test_simd_vs_scalar(void) {
  static const int64_t lens[] = {1, 3, 5, 7, 13, 31, 33, 1001};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li];
    size_t bytes = (size_t)n * sizeof(float);
    float *p = malloc(bytes), *g = malloc(bytes), *m = malloc(bytes), *v = malloc(bytes);
    float *p2 = malloc(bytes), *m2 = malloc(bytes), *v2 = malloc(bytes);
    for (int mode = 0; mode < 2; mode++) {
      for (int cb = 0; cb < 2; cb++) {
        for (int64_t i = 0; i < n; i++) {
          p[i] = p2[i] = frand();
          m[i] = m2[i] = 0.1f * frand();
          v[i] = v2[i] = 0.01f * fabsf(frand());
        }
        for (int64_t t = 1; t <= 3; t++) {
          for (int64_t i = 0; i < n; i++) g[i] = (i % 7 == 3) ? 0.0f : frand() * 1e-3f;
          wt_adamw_params hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                                .weight_decay = 0.05f, .adam_mode = mode, .correct_bias = cb,
                                .t = t};
          wt_adamw_update_f32(p, g, m, v, n, &hp);
          ref_adamw(p2, g, m2, v2, n, &hp);
        }
        CHECK(memcmp(p, p2, bytes) == 0);
        CHECK(memcmp(m, m2, bytes) == 0);
        CHECK(memcmp(v, v2, bytes) == 0);
      }
    }
    /* SGD and scale against plain loops. */
    for (int64_t i = 0; i < n; i++) {
      p[i] = p2[i] = frand();
      g[i] = frand();
    }
    wt_sgd_update_f32(p, g, n, 0.05f);
    for (int64_t i = 0; i < n; i++) p2[i] = p2[i] - 0.05f * g[i];
    CHECK(memcmp(p, p2, bytes) == 0);
    wt_scale_f32(p, n, 0.37f);
    for (int64_t i = 0; i < n; i++) p2[i] = p2[i] * 0.37f;
    CHECK(memcmp(p, p2, bytes) == 0);
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    CHECK(wt_sum_squares_f32(g, n) == ss);
    free(p), free(g), free(m), free(v), free(p2), free(m2), free(v2);
  }
}

static void test_adamw_small(void) {
  /* Hand-checkable: first step of mode 0 with bias correction moves each element by about
   * lr * sign(g) (plus decay); lr 0 leaves p unchanged but advances m and v. */
  float p[5] = {1, -2, 0.5f, 3, 0}, g[5] = {0.5f, -0.25f, 1, 2, -1}, m[5] = {0}, v[5] = {0};
  wt_adamw_params hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .weight_decay = 0.0f, .adam_mode = 0, .correct_bias = 1, .t = 1};
  wt_adamw_update_f32(p, g, m, v, 5, &hp);
  CHECK_NEAR(p[0], 1 - 1e-2, 1e-6);
  CHECK_NEAR(p[1], -2 + 1e-2, 1e-6);
  CHECK_NEAR(p[4], 1e-2, 1e-6);
  CHECK_NEAR(m[3], 0.2, 1e-7);
  CHECK_NEAR(v[3], 4 * (float)(1 - (double)0.999f), 1e-10);
  float q[3] = {1, 2, 3}, gq[3] = {1, 1, 1}, mq[3] = {0}, vq[3] = {0};
  wt_adamw_params h0 = {.lr = 0, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .weight_decay = 0.01f, .adam_mode = 0, .correct_bias = 1, .t = 1};
  wt_adamw_update_f32(q, gq, mq, vq, 3, &h0);
  CHECK(q[0] == 1 && q[1] == 2 && q[2] == 3);
  CHECK(mq[0] > 0 && vq[0] > 0);
  h0.adam_mode = 1;
  wt_adamw_update_f32(q, gq, mq, vq, 3, &h0);
  CHECK(q[0] == 1 && q[1] == 2 && q[2] == 3);
  /* Mode 1 weight decay uses the uncorrected lr after the update: with g = 0, m = v = 0
   * the Adam term is 0 and p becomes p - lr*wd*p. */
  float r[1] = {2}, gr[1] = {0}, mr[1] = {0}, vr[1] = {0};
  wt_adamw_params h1 = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f,
                        .weight_decay = 0.5f, .adam_mode = 1, .correct_bias = 1, .t = 1};
  wt_adamw_update_f32(r, gr, mr, vr, 1, &h1);
  CHECK_NEAR(r[0], 2 - 0.1 * 0.5 * 2, 1e-6);
  /* Mode 0 decays first: p * (1 - lr*wd). */
  r[0] = 2;
  h1.adam_mode = 0;
  wt_adamw_update_f32(r, gr, mr, vr, 1, &h1);
  CHECK_NEAR(r[0], 2 * (1 - 0.1 * 0.5), 1e-6);
  /* No bias correction: first step moves by lr * (1-b1) g / (sqrt(1-b2) |g| + eps). */
  float s[1] = {0}, gs[1] = {1}, ms[1] = {0}, vs[1] = {0};
  wt_adamw_params h2 = {.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                        .weight_decay = 0, .adam_mode = 0, .correct_bias = 0, .t = 1};
  wt_adamw_update_f32(s, gs, ms, vs, 1, &h2);
  /* (1-b1), (1-b2) of the float32 betas */
  CHECK_NEAR(s[0], -1e-3 * (1 - (double)0.9f) / (sqrt(1 - (double)0.999f) + 1e-8), 1e-9);
}

static void test_clip_and_schedule(void) {
  CHECK(wt_clip_coef(0.5, 1.0f) == 1.0f);
  CHECK(wt_clip_coef(0.0, 1.0f) == 1.0f);
  CHECK_NEAR(wt_clip_coef(4.0, 1.0f), 1.0 / (4.0 + 1e-6), 1e-7);
  CHECK_NEAR(wt_clip_coef(10.0, 2.5f), 2.5 / (10.0 + 1e-6), 1e-7);
  CHECK(wt_clip_coef(1.0, 1.0f) < 1.0f); /* exactly at max_norm: 1/(1+1e-6) */
  CHECK(isnan(wt_clip_coef(NAN, 1.0f)));
  /* Norm across two tensors, then scale. */
  float a[3] = {3, 0, 0}, b[2] = {0, 4};
  double norm = sqrt(wt_sum_squares_f32(a, 3) + wt_sum_squares_f32(b, 2));
  CHECK(norm == 5.0);
  float c = wt_clip_coef(norm, 1.0f);
  wt_scale_f32(a, 3, c);
  wt_scale_f32(b, 2, c);
  CHECK_NEAR(sqrt(wt_sum_squares_f32(a, 3) + wt_sum_squares_f32(b, 2)), 1.0, 1e-6);

  static const double want[] = {0, 0.005, 0.01, 0.0075, 0.005, 0.0025, 0, 0};
  for (int s = 0; s < 8; s++) {
    double lr = 0.01 * wt_linear_lr_factor(s, 2, 6);
    CHECK_NEAR(lr, want[s], 1e-15);
  }
  CHECK(wt_linear_lr_factor(0, 0, 4) == 1.0);  /* no warmup */
  CHECK(wt_linear_lr_factor(3, 0, 4) == 0.25);
  CHECK(wt_linear_lr_factor(5, 3, 3) == 0.0);  /* total == warmup: no division by zero */
  CHECK(wt_linear_lr_factor(1, 4, 8) == 0.25);
}

int main(void) {
  test_clip_and_schedule();
  test_adamw_small();
  test_simd_vs_scalar();
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) run_case(&CASES[i], 0);
  run_case(&CASES[0], 1); /* mlp_ce_adamw gradient accumulation */
  CHECK_DONE();
}
