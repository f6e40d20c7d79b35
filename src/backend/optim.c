/* The host's part of every backend's optimizer update (optim.h). */
#include "backend/optim.h"

#include <math.h>
#include <string.h>

void wt_adamw_consts_of(const wt_adamw_params *hp, wt_adamw_consts *c) {
  const double lr = hp->lr, wd = hp->weight_decay;
  const double b1 = hp->beta1, b2 = hp->beta2;
  double bc1 = 1.0, bc2 = 1.0;
  if (hp->correct_bias) {
    bc1 = 1.0 - pow(b1, (double)hp->t);
    bc2 = 1.0 - pow(b2, (double)hp->t);
  }
  const float omb1 = (float)(1.0 - b1), omb2 = (float)(1.0 - b2);
  memset(c, 0, sizeof *c);
  if (hp->adam_mode == 0) {
    float f[8] = {(float)(1.0 - lr * wd), hp->beta1, omb1, hp->beta2, omb2, (float)(-(lr / bc1)), (float)sqrt(bc2),
                  hp->eps};
    memcpy(c->f, f, sizeof f);
  } else {
    /* Weight decay 0 skips the decay term, so p stays exact even if it is not finite. */
    c->kind = 1;
    float f[8] = {hp->beta1, omb1, hp->beta2, omb2, -(float)(lr * sqrt(bc2) / bc1), hp->eps, (float)(-lr * wd), 0.0f};
    memcpy(c->f, f, sizeof f);
    c->decay = wd != 0.0;
  }
}
