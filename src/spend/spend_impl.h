/* spend_impl.h - what src/spend shares beyond spend.h.
 *
 * sy_spend_on_reset: called by the spend writer thread (on that thread)
 * after sy_budget_reset_due changed rows, so caches holding spend can be
 * invalidated. Set once before sy_spend_start; NULL means no hook.
 */
#ifndef SY_SPEND_IMPL_H
#define SY_SPEND_IMPL_H

#include "spend/spend.h"

#endif
