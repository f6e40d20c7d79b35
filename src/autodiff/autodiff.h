/* Reverse-mode automatic differentiation over the IR, in two passes: mark the values that
 * need a gradient (depend on a parameter and lead to the loss, float only), then walk the
 * nodes in reverse and let each op's gradient rule (src/ops) emit the nodes of its input
 * gradients, summing fan-out. Only gradients toward `params` are built: nothing through
 * integer or shape subgraphs, nothing toward values no parameter influences. */
#ifndef WT_AUTODIFF_AUTODIFF_H
#define WT_AUTODIFF_AUTODIFF_H

#include "base/status.h"
#include "ir/ir.h"

/* Extends g with the gradient of scalar value `loss` with respect to each params[i] (value
 * indices: graph inputs or initializers). grads[i] receives the value holding the gradient,
 * named "<param>_grad", or -1 when the loss does not depend on params[i].
 * g must have had wt_graph_infer_shapes run on it. */
WT_NODISCARD int wt_autodiff(wt_graph *g, int loss, int n_params, const int *params, int *grads);

#endif
