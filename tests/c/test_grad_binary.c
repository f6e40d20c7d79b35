/* Finite-difference checks of the binary elementwise gradient rules, with broadcasting. */
#include "check.h"
#include "gradcheck.h"

int main(void) {
  int failed = 0;
  gc_arg same[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 2, .dims = {3, 4}}};
  gc_arg bias[2] = {{.rank = 2, .dims = {3, 4}}, {.rank = 1, .dims = {4}}};
  gc_arg col[2] = {{.rank = 3, .dims = {2, 3, 1}}, {.rank = 2, .dims = {1, 4}}};
  const char *ops[] = {"Add", "Sub", "Mul"};
  for (int i = 0; i < 3; i++) {
    char label[64];
    snprintf(label, sizeof label, "%s same shape", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, same, NULL);
    snprintf(label, sizeof label, "%s bias broadcast", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, bias, NULL);
    snprintf(label, sizeof label, "%s both broadcast", ops[i]);
    failed += gradcheck(label, ops[i], NULL, 2, col, NULL);
  }
  gc_arg three[3] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {3}}, {.rank = 0}};
  failed += gradcheck("Sum of three, broadcast", "Sum", NULL, 3, three, NULL);
  /* a constant operand gets no gradient, the other one does */
  gc_arg with_const[2] = {{.rank = 2, .dims = {2, 3}}, {.rank = 1, .dims = {3}, .constant = 1}};
  failed += gradcheck("Mul by a constant", "Mul", NULL, 2, with_const, NULL);
  CHECK(failed == 0);
  CHECK_DONE();
}
