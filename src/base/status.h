/* Status codes and the last-error message.
 * Every fallible function returns an int status (WT_OK == 0) and, on failure, leaves a
 * human-readable message that names the thing (op, node, tensor, file) and what was expected. */
#ifndef WT_BASE_STATUS_H
#define WT_BASE_STATUS_H

#include <stdarg.h>

/* The codes (enum wt_status) are the public header's. */
#include "webtrain.h"

/* Sets the last error message (printf-style) and returns `code`. */
int wt_errorf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int wt_verrorf(int code, const char *fmt, va_list ap);
/* Prepends "<prefix>: " to the current message (adds context while unwinding). */
int wt_error_context(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *wt_error_message(void);
void wt_error_clear(void);

/* On a function whose int result is a status or an index: ignoring it is a compile error
 * (-Werror), so a failure can be neither dropped nor mistaken for the other kind of result. */
#define WT_NODISCARD __attribute__((warn_unused_result))

#define WT_TRY(expr)                   \
  do {                                 \
    int wt_try_rc_ = (expr);           \
    if (wt_try_rc_ != WT_OK) return wt_try_rc_; \
  } while (0)

#endif
