/* list.c - the ordered stage list the engine builds pipelines from
 * (gateway/stage.h). The names and their order are in list.def; this file
 * only turns them into sy_stages[]. A test that needs one more stage defines
 * its own sy_stages[] the same way, with one more line: the linker then
 * never takes this file. */
#include "gateway/stage.h"

#define SY_STAGE(n) extern const struct sy_stage sy_stage_##n;
#include "stages/list.def"
#undef SY_STAGE

const struct sy_stage *const sy_stages[] = {
#define SY_STAGE(n) &sy_stage_##n,
#include "stages/list.def"
#undef SY_STAGE
};
const size_t sy_nstages = sizeof sy_stages / sizeof sy_stages[0];
