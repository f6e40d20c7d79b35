/* Internal session entry points for the training runtime. */
#ifndef WT_RUNTIME_SESSION_H
#define WT_RUNTIME_SESSION_H

#include "ir/ir.h"
#include "webtrain.h"

/* A session over g, which it takes ownership of (freed even on error). */
int wt_session_create_from_graph(wt_graph *g, wt_session **out);
const wt_graph *wt_session_graph(const wt_session *s);

#endif
