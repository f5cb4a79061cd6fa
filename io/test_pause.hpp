#pragma once
// Test seam for the interruption tests (tests/app/test_image_interrupt.cpp): with
// GPUCLEAN_TEST_PAUSE_AT=PHASE the process stops at that phase, says so on stderr and sleeps
// (up to a minute, until a stop signal, or until the file GPUCLEAN_TEST_RESUME exists) so that
// the test can signal it, or start another run, exactly there. Phases: "read" (every check
// done, nothing read), "cycle-N" (after major cycle N), "staged" (outputs and MODEL_DATA
// journals staged, nothing decided), "decided" (commit record written), "model" (MODEL_DATA being
// written: the column added, the values not yet), "rename" (after the first output's rename).

namespace gpuclean::io {

void test_pause(const char* phase);

}  // namespace gpuclean::io
