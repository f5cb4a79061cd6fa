#!/usr/bin/env bash
# Runs the GPU checks and benchmarks on a machine with a GPU, from a build made elsewhere
# (see docs/development.md, "Running on a GPU machine"): scripts/gpu-check.sh MODE, one of those usage() lists
# (default: tests); each mode's branch below says what it runs and which variables change it.
# Results go to $OUT (default out/gpu-check).
# GPUCLEAN_BUILD names the folder with gpuclean and tests/ (default: build).
set -uo pipefail
usage() {
  cat <<'EOF'
Usage: scripts/gpu-check.sh MODE (default: tests)
  tests               every test binary, timed (GPU_CHECK_JOBS at once, the slowest as GPU_CHECK_SHARDS shards)
  sanitize            compute-sanitizer memcheck, racecheck and synccheck on the GPU tests small enough for them
  bench-select        bench select over 2^20..2^28, every distribution, CSV to $OUT
  bench-select-2p32   top-k on 2^32 floats (16 GiB) with the memory-sparing backends
  bench-clean         bench clean (GPU Clark and the CPU path, 2048^2 to 16384^2) and bench batch (64, 256)
  setup-profile       where a 16384^2 run's set-up goes, bench batch 64, ncu on the randomized top-k
  batch               the batch and --compare-select tests, memcheck of a --compare-select run
  compare-select      --compare-select on the WSClean pair and a 4096^2 field, then bench batch (64, 256)
  multiscale          multiscale and --local-rms tests, their sanitizer runs and benches up to 16384^2
  select              the selection's GPU tests (timed), sanitizers on its small cases, bench select 2^24, 2^28
  python              builds the Python package for this machine's python3 and runs its tests and benchmark
  multiscale-figures  scripts/multiscale-figures.sh on the GPU: Clark and multiscale panels, recovery table
  cubes               joined-plane tests (GPU = CPU, CLI), sanitizers on the joined minor cycle, bench of 16 channels
  minor               the minor-cycle engine: its tests and sanitizers, bench clean 4096^2, bench batch 64, joined
  bench-overview      one run of the headline benches: clean 4096^2 and 16384^2, batch 64, joined, select; ncu
  batch-sweep         bench batch 64 x 2048^2 over streams x I/O threads
  minor-profile       ncu's warp-state samples per source line of the minor cycle's team kernels
  multi-gpu           several GPUs: test_cube_gpus, bench batch on 1, 2, 4, 8 GPUs, a cube on one GPU and on all
  gpu-probe           the host's GPUs: links, peer access and bandwidth, NCCL present, gridder run-to-run identity
  wsclean-survey      WSClean's own deconvolution against the gpuclean hook with oxkat-like survey settings
  imaging             gpuclean image's GPU tests with WSClean's pack (.devwsc: MSs, wsclean), memcheck of the VisStore
  image-gpus          gpuclean image -max-gpus: its GPU tests, case A dirty, joined and unjoined on 1, 2, 4 GPUs
  pipelines           the pipelines' WSClean lines on the GPU against WSClean 3.1, the option table, sub-images; oxkat at 4096^2
EOF
}
mode=${1:-tests}
case $mode in help | -h | --help) usage; exit 0 ;; esac
usage | grep -E "^  $mode " >/dev/null || { echo "gpu-check.sh: no mode '$mode'" >&2; usage >&2; exit 2; }
cd "$(dirname "$0")/.."
out=${OUT:-out/gpu-check}
mkdir -p "$out"
bin=${GPUCLEAN_BUILD:-build}
export GPUCLEAN_BINARY=$PWD/$bin/gpuclean GPUCLEAN_SOURCE_DIR=$PWD GPUCLEAN_SHARED_DIR=$PWD/.devdata
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
# The system's python3 (torch, json): .devwsc/env.sh's PYTHONHOME points at WSClean's own Python.
syspy() { env -u PYTHONHOME -u PYTHONPATH python3 "$@"; }
sanitized() {  # tool, timeout, test binary, gtest filter, log name: one compute-sanitizer run and its summary
  timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 9 "$bin/tests/$3" --gtest_brief=1 \
    --gtest_filter="$4" >"$out/$5.log" 2>&1
  echo "$5: exit $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$5.log" | tail -1)"
}
case "$mode" in
  tests)
    # The peak-memory checks read the device's free memory, so jobs beside them can make them fail:
    # with 8 jobs GpuVsCpu.ClarkOnA4096SimulatedField read a peak of 0 (3 jobs passed).
    one() {  # a test binary and its shard (index, count): its log and its time; exit status 1 on a failure
      local t=$1 i=$2 n=$3 start=$(date +%s) rc=0 name
      name=$(basename "$t")$([ "$n" -gt 1 ] && echo ".$i")
      # No mpirun on the GPU machine: the MPI test runs in CI.
      GTEST_SHARD_INDEX=$i GTEST_TOTAL_SHARDS=$n "$t" --gtest_brief=1 --gtest_filter='-*Mpirun*' >"$out/$name.log" 2>&1 || rc=1
      { echo "== $name: $(( $(date +%s) - start )) s"
        grep -E "PASSED|FAILED|SKIPPED|Failure" "$out/$name.log" | grep -v "GetParam" | tail -4; } >"$out/$name.summary"
      return $rc
    }
    export -f one; export out
    # The CPU tests that make MeasurementSets with python3-casacore and run WSClean at run time
    # (the GPUCLEAN_HAVE_MS ones, and the prediction's) need both; the GPU machine has neither, so
    # there they are left out, named in the summary (CI runs them). A name with "gpu" always runs.
    ms_tools=1
    { command -v wsclean && "${GPUCLEAN_PYTHON:-/usr/bin/python3}" -c 'import casacore.tables'; } >/dev/null 2>&1 || ms_tools=0
    # The slowest binaries run as GPU_CHECK_SHARDS gtest shards (default 1), so that jobs overlap.
    for t in $(find "$bin/tests" -maxdepth 1 -type f -name 'test_*' -executable | sort); do
      n=1
      name=$(basename "$t")
      if [ "$ms_tools" = 0 ] && [[ $name =~ ^test_(ms_reader|weighting|image_run|image_cli|image_flags|.*predict.*)$ ]] &&
         [[ $name != *gpu* ]]; then
        echo "== $name: left out (needs wsclean and python3-casacore at run time, not on this machine)" >"$out/$name.summary"
        continue
      fi
      case $name in test_clean_gpu|test_clean|test_randomized_paths|test_select_gpu) n=${GPU_CHECK_SHARDS:-1} ;; esac
      for ((i = 0; i < n; i++)); do echo "$t $i $n"; done
    done | xargs -P "${GPU_CHECK_JOBS:-1}" -L 1 bash -c 'one "$0" "$1" "$2"'
    status=$?
    cat "$out"/*.summary
    exit $((status != 0)) ;;
  imaging)
    # Needs scripts/wsclean-pack.sh's archive with WSC_PACK_BINARIES (gpuclean and the tests below), sourced:
    # GPUCLEAN_BUILD=.devwsc/root (gpuclean and tests/ there); GPUCLEAN_PYTHON=$WSC_PYTHON makes the MSs.
    status=0
    for t in test_vis_store_gpu test_gridder_gpu test_vis_store_ms test_image_clean_gpu test_image_clean_cli \
      $IMAGING_EXTRA_TESTS; do
      [ -x "$bin/tests/$t" ] || { echo "== $t: missing"; status=1; continue; }
      start=$(date +%s)
      "$bin/tests/$t" --gtest_brief=1 >"$out/$t.log" 2>&1 || status=1
      echo "== $t: $(( $(date +%s) - start )) s"
      grep -E "PASSED|FAILED|SKIPPED|Failure|residual RMS|model flux|: psf|RMS" "$out/$t.log" | head -12
    done
    sanitized memcheck 300 test_vis_store_gpu 'VisStoreGpu.*' memcheck_vis_store
    exit $status ;;
  pipelines)
    # Issues 44 and 45, with scripts/wsclean-pack.sh's archive sourced (GPUCLEAN_BUILD=.devwsc/root,
    # GPUCLEAN_PYTHON=$WSC_PYTHON; WSC_PACK_BINARIES: gpuclean, tests/test_pipeline_lines, tests/test_wsclean_table,
    # tests/test_clean, tests/test_image_clean_gpu, tests/test_realdata_vs_wsclean, tests/test_image_interrupt, tests/test_image_pol_vs_wsclean; carry
    # .devdata/realdata for the real MSs). The pipelines' lines, the real MSs and the interruptions run -device gpu.
    status=0
    export GPUCLEAN_TEST_IMAGE_DEVICE=gpu
    for t in "test_clean --gtest_filter=*ParallelDecon*:*Divide*:*LocalRms*:*OuterLoop*:*MultiscalePatch*:*Beam*" \
      "test_image_clean_gpu" "test_wsclean_table" "test_pipeline_lines" "test_realdata_vs_wsclean" \
      "test_image_interrupt" "test_image_pol_vs_wsclean"; do
      name=${t%% *}
      start=$(date +%s)
      timeout "${PIPELINES_TIMEOUT:-300}" "$bin/tests/$name" ${t#"$name"} --gtest_brief=1 >"$out/$name.log" 2>&1 || status=1
      echo "== $name: $(( $(date +%s) - start )) s"
      grep -E "PASSED|FAILED|SKIPPED|Failure|residual RMS|MODEL_DATA max" "$out/$name.log" | head -24
    done
    [ "${PIPELINES_SKIP_LARGE:-0}" = 1 ] && exit $status
    # oxkat's flag line at 4096^2 x 8 channels (1.1asec, a 64-antenna 2 h track): -parallel-deconvolution 2560
    # (2 x 2 sub-images) and without it, wall times; WSClean 3.1 on the same line and cores.
    work=${PIPELINES_WORK:-/tmp/pipelines}  # the images stay off $out (3 GB)
    mkdir -p "$work"
    ms=$work/oxkat.ms
    "$GPUCLEAN_PYTHON" data/simulate_ms.py --out "$ms" --sky survey --sources 300 --radius 1500 --antennas 64 \
      --hours 2 --integration 300 --channels 8 --noise 0.03 --overwrite >/dev/null
    line="-log-time -mem 90 -parallel-reordering 8 -save-source-list -data-column DATA -field 0 -size 4096 4096
      -scale 1.1asec -use-wgridder -no-update-model-required -weight briggs -0.3 -niter 80000 -gain 0.15
      -mgain 0.9 -channels-out 8 -fit-spectral-pol 4 -join-channels -circular-beam -threshold 1e-06"
    for pd in "-parallel-deconvolution 2560" ""; do
      start=$(date +%s.%N)
      timeout 120 "$bin/gpuclean" image $line $pd -name "$work/ox${pd:+pd}" "$ms" >"$out/ox${pd:+pd}.log" 2>&1
      echo "gpuclean image oxkat flag ${pd:-(whole image)}: rc $?, $(syspy -c "print(round($(date +%s.%N)-$start,1))") s"
      grep -E "sub-images|major cycle\(s\)|memory" "$out/ox${pd:+pd}.log" | cut -c1-200
    done
    start=$(date +%s.%N)
    timeout "${PIPELINES_WSCLEAN_TIMEOUT:-150}" wsclean -no-small-inversion $line -parallel-deconvolution 2560 -name "$work/oxw" "$ms" >"$out/oxw.log" 2>&1
    echo "wsclean 3.1 oxkat flag -parallel-deconvolution 2560: rc $?, $(syspy -c "print(round($(date +%s.%N)-$start,1))") s"
    "$WSC_PYTHON" - "$work" <<'PY'
import sys, numpy as np
import gpuclean.fits as f
for n in ("oxpd", "ox", "oxw"):
    try:
        r = np.asarray(f.read(f"{sys.argv[1]}/{n}-MFS-residual.fits").data, float)
        m = np.asarray(f.read(f"{sys.argv[1]}/{n}-MFS-model.fits").data, float)
        print(f"{n}: MFS residual RMS {np.sqrt(np.nanmean(r**2))*1e3:.4f} mJy, model flux {np.nansum(m):.4f} Jy")
    except Exception as e:
        print(n, "missing:", e)
PY
    exit $status ;;
  image-gpus)
    # gpuclean image over several GPUs (issue 37): test_vis_store_multi and test_image_gpus, then
    # scripts/image_gpus_bench.py: scripts/imaging_bench.py's case A (IMAGE_GPUS_CASE) dirty + PSF, and the loop of
    # its --clean table joined and unjoined, with -max-gpus 1, the most, the rest of IMAGE_GPUS_COUNTS (1 2 4; those
    # the host has), and 1 again (run to run); one table with every image's difference from the first 1-GPU run.
    # Needs the pack with WSC_PACK_BINARIES="gpuclean tests/test_vis_store_multi tests/test_image_gpus" (unpacked
    # here when .devwsc/env.sh was not sourced; GPUCLEAN_BUILD=.devwsc/root). IMAGE_GPUS_TIMEOUT (330 s) bounds the
    # whole mode, each test at most IMAGE_GPUS_TEST_TIMEOUT (120 s); the MS and images go to IMAGE_GPUS_DIR.
    # IMAGE_GPUS_DEVICE=cpu (with IMAGE_GPUS_CASE=T) is a smoke run of the script on a machine without a GPU.
    began=$SECONDS budget=${IMAGE_GPUS_TIMEOUT:-330}
    if [ -z "${WSC_PYTHON:-}" ]; then
      tar -xJf .devwsc/wsclean.tar.xz && source .devwsc/env.sh || { echo "image-gpus: no .devwsc pack" >&2; exit 1; }
    fi
    export GPUCLEAN_PYTHON=${GPUCLEAN_PYTHON:-$WSC_PYTHON}
    ngpus=$(nvidia-smi -L | grep -c '^GPU')
    echo "$ngpus GPUs, $(nproc) cores; gpuclean $GPUCLEAN_BINARY"; nvidia-smi topo -m | head -$((ngpus + 1))
    status=0
    for t in test_vis_store_multi test_image_gpus; do
      [ -x "$bin/tests/$t" ] || { echo "== $t: missing (not in WSC_PACK_BINARIES?)"; status=1; continue; }
      start=$SECONDS
      timeout "${IMAGE_GPUS_TEST_TIMEOUT:-120}" "$bin/tests/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
      rc=$?; [ $rc = 0 ] || status=1
      echo "== $t: exit $rc$([ $rc = 124 ] && echo ' (timed out)'), $((SECONDS - start)) s"
      grep -E "PASSED|FAILED|SKIPPED|Failure|against one GPU|against itself" "$out/$t.log" | head -20
    done
    counts=""; for g in ${IMAGE_GPUS_COUNTS:-1 2 4}; do [ "$g" -le "$ngpus" ] && counts+="${counts:+,}$g"; done
    left=$((budget - (SECONDS - began)))
    if [ "$left" -lt 40 ]; then echo "== image-gpus: $left s left of $budget: the measurement is skipped"; exit 1; fi
    echo "== gpuclean image -max-gpus $counts, case ${IMAGE_GPUS_CASE:-A} ($left s left)"
    "$WSC_PYTHON" scripts/image_gpus_bench.py --work "${IMAGE_GPUS_DIR:-/dev/shm/gpuclean-image-gpus}" --out "$out" \
      --case "${IMAGE_GPUS_CASE:-A}" --gpus "$counts" --threads "$(nproc)" --total-timeout "$((left - 5))" \
      --device "${IMAGE_GPUS_DEVICE:-gpu}" --gpuclean "$GPUCLEAN_BINARY" || status=1
    exit $status ;;
  minor)
    # MINOR_BIG=1 adds bench clean 16384^2; MINOR_TESTS=0, MINOR_SANITIZE=0, MINOR_BATCH=0, MINOR_CUBE=0 leave
    # those parts out.
    status=0
    if [ "${MINOR_TESTS:-1}" = 1 ]; then
      echo "== test_clean_gpu MinorEngine.*"
      "$bin/tests/test_clean_gpu" --gtest_filter='MinorEngine.*' >"$out/test_minor_engine.log" 2>&1 || status=1
      grep -E "^\[ +(OK|FAILED) |Failure|PASSED" "$out/test_minor_engine.log" | head -30
    fi
    if [ "${MINOR_SANITIZE:-1}" = 1 ]; then
      echo "== compute-sanitizer racecheck and memcheck"
      sanitized racecheck 100 test_clean_gpu 'MinorEngine.SmallScene*' racecheck_minor
      sanitized memcheck 100 test_clean_gpu \
        'MinorEngine.SmallScene*:MinorEngine.TiesBreakByPixelOrder:MinorEngine.BudgetCuts*' memcheck_minor
    fi
    echo "== bench clean 4096^2: GPU Clark and the CPU path"
    timeout 200 "$bin/gpuclean" bench clean --sizes 4096 --niters 100000 --paths gpu-clark,cpu-clark --cli-size 4096 \
      >"$out/bench_clean_rows.txt" 2>"$out/bench_clean_rows.err"
    echo "bench exit $?"; cut -c1-300 "$out/bench_clean_rows.txt"; grep "us a step" "$out/bench_clean_rows.err"
    if [ "${MINOR_BIG:-0}" = 1 ]; then
      timeout 200 "$bin/gpuclean" bench clean --sizes 16384 --niters 100000 --paths gpu-clark --cli-size 0 \
        >"$out/bench_clean_16384.txt" 2>"$out/bench_clean_16384.err"
      echo "bench 16384 exit $?"; cut -c1-300 "$out/bench_clean_16384.txt" | tail -2
    fi
    if [ "${MINOR_BATCH:-1}" = 1 ]; then
      echo "== bench batch 64 x 2048^2"
      timeout ${MINOR_BATCH_TIMEOUT:-150} "$bin/gpuclean" bench batch --size 2048 --counts 64 --distinct 8 \
        --dir /tmp/bench-batch >"$out/bench_batch.txt" 2>&1
      echo "bench batch exit $?"; tail -12 "$out/bench_batch.txt"
    fi
    [ "${MINOR_CUBE:-1}" = 1 ] || exit $status
    echo "== bench clean --channels 16 (2048^2 joined, GPU and CPU)"
    timeout 120 "$bin/gpuclean" bench clean --channels 16 --sizes 2048 --niters 100000 --independent-channels 0 \
      --cpu-planes 4 >"$out/bench_cube.txt" 2>"$out/bench_cube.err"
    echo "bench exit $?"; cut -c1-300 "$out/bench_cube.txt"
    exit $status ;;
  sanitize)
    sanitized memcheck 150 test_clean '*gpu*' memcheck_clean_analytic
    sanitized memcheck 150 test_clean_gpu 'MinorEngine.*:GpuVsCpu.*Sample*:GpuVsCpu.*Wsclean*' memcheck_clean_gpu
    [ -x "$bin/tests/test_gpu_per_run_costs" ] && sanitized memcheck 120 test_gpu_per_run_costs '*' memcheck_per_run_costs
    sanitized memcheck 120 test_select_gpu '*_n1:*_n33:*_n1000:SampleSecondLevel.*:RobustStatisticsEdges.*' memcheck_select
    sanitized memcheck 150 test_randomized_paths 'RandomizedPaths.TiesFarIntoTheInputAreFound:RandomizedPaths.KAtAndBeyondTheValidCount:RandomizedPaths.UnalignedInputIsExact:RandomizedPaths.SortedOutputIsOrdered:RandomizedPaths.DeviceCheckFailureFallsBackExactly' memcheck_randomized
    sanitized racecheck 100 test_randomized_paths 'RandomizedPaths.KAtAndBeyondTheValidCount:RandomizedPaths.TiesFarIntoTheInputAreFound' racecheck_randomized
    sanitized synccheck 100 test_randomized_paths 'RandomizedPaths.KAtAndBeyondTheValidCount:RandomizedPaths.TiesFarIntoTheInputAreFound' synccheck_randomized
    sanitized racecheck 100 test_clean_gpu 'MinorEngine.SmallScene*' racecheck_engine
    sanitized racecheck 100 test_clean '*PointSource*gpu*:*TwoSources*clark_gpu*' racecheck_clean_analytic
    sanitized racecheck 100 test_select_gpu 'SampleSecondLevel.*' racecheck_select
    exit 0 ;;
  bench-select)
    $bin/gpuclean bench select --sizes 20,22,24,26,28 --repeats 5 --format csv --output "$out/bench_select.csv" \
      >"$out/bench_select.txt" 2>"$out/bench_select.err"
    echo "bench exit $?"; tail -2 "$out/bench_select.err"
    grep -E "^28 " "$out/bench_select.txt" | grep -E "top-k  +(1|1024|65536) |median|percentiles" ;;
  bench-select-2p32)
    $bin/gpuclean bench select --sizes 32 --distributions uniform,noise_plus_point_sources --ks 1,1024,65536 \
      --backends sort,randomized,sample,bucket,cutting-plane --repeats 3 --no-order-statistics --no-cpu-check \
      2>&1 | tee "$out/bench32.txt" | tail -32 ;;
  bench-clean)
    "$bin/gpuclean" bench clean --sizes 2048,4096,16384 --niters 100000 --paths gpu-clark,cpu-clark \
      --cpu-max-size 4096 --cli-size 4096 --format csv --output "$out/bench_clean.csv" >"$out/bench_clean.txt" \
      2>"$out/bench_clean.err"
    echo "bench clean exit $?"; cut -c1-260 "$out/bench_clean.txt"
    echo "== bench batch"
    timeout 240 "$bin/gpuclean" bench batch --size 2048 --counts 64,256 --distinct 8 --dir /tmp/bench-batch \
      >"$out/bench_batch.txt" 2>&1
    echo "bench batch exit $?"; tail -9 "$out/bench_batch.txt" ;;
  batch)
    status=0
    for t in test_batch_units test_batch_cli test_clean_gpu test_cli; do
      echo "== $t"
      # No mpirun on the GPU machine: the MPI test runs in CI.
      "$bin/tests/$t" --gtest_brief=1 --gtest_filter='-*Mpirun*' >"$out/$t.log" 2>&1 || status=1
      grep -E "PASSED|FAILED|SKIPPED" "$out/$t.log" | grep -v GetParam | tail -4
    done
    echo "== test_clean, GPU variants"
    "$bin/tests/test_clean" --gtest_brief=1 --gtest_filter='*gpu*' >"$out/test_clean_gpu_variants.log" 2>&1 || status=1
    grep -E "PASSED|FAILED" "$out/test_clean_gpu_variants.log" | tail -3
    echo "== compute-sanitizer memcheck: --compare-select and --quicklook on the sample"
    timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/gpuclean" data/sample/dirty.fits \
      data/sample/psf.fits -o /tmp/mc.fits --compare-select --quicklook /tmp/mc.png --overwrite -q \
      >"$out/memcheck_compare.log" 2>&1
    echo "memcheck exit $?"; grep -E "ERROR SUMMARY" "$out/memcheck_compare.log" | tail -1
    exit $status ;;
  compare-select)
    w=.devdata/data/wsclean-256
    echo "== --compare-select on the WSClean 3.1 pair"
    "$bin/gpuclean" $w/meerkat-cdfs-256-dirty.fits $w/meerkat-cdfs-256-psf.fits -o "$out/wsclean-image.fits" \
      --compare-select --compare-select-cpu --quicklook "$out/wsclean-image.png" --overwrite 2>&1 | tail -16
    echo "== 4096^2 field: --compare-select"
    "$bin/gpuclean" simulate --size 4096 --sources 3000 --seed 2027 --out /tmp/s4096 --overwrite >/dev/null 2>&1
    "$bin/gpuclean" /tmp/s4096/dirty.fits /tmp/s4096/psf.fits -o "$out/s4096-image.fits" --compare-select \
      --niter 100000 --threshold 2e-5 --auto-threshold 0 --overwrite 2>&1 | tail -14
    rm -f "$out/s4096-image.fits"
    echo "== bench batch"
    "$bin/gpuclean" bench batch --size 2048 --counts 64,256 --distinct 8 --dir /tmp/bench-batch 2>&1 | tee "$out/bench_batch.txt" ;;
  multiscale)
    # The benches: bench clean --paths gpu-multiscale,cpu-multiscale (MS_SIZES, default 2048,4096; 4096^2 with
    # --local-rms) and 16384^2 (GPU Clark, GPU multiscale, with and without --local-rms).
    status=0
    echo "== test_clean: scales and multiscale analytic cases"
    "$bin/tests/test_clean" --gtest_brief=1 --gtest_filter='*Scale*:*Multiscale*' >"$out/test_multiscale.log" 2>&1 || status=1
    grep -E "PASSED|FAILED|Failure" "$out/test_multiscale.log" | head -8
    echo "== GPU = CPU, multiscale"
    "$bin/tests/test_clean_gpu" --gtest_filter='GpuVsCpu.Multiscale*' >"$out/test_multiscale_gpu_vs_cpu.log" 2>&1 || status=1
    grep -E "^  multiscale|OK|FAILED|Failure" "$out/test_multiscale_gpu_vs_cpu.log" | cut -c1-400 | head -12
    echo "== compute-sanitizer memcheck, racecheck: the GPU multiscale analytic cases"
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tests/test_clean" --gtest_brief=1 \
      --gtest_filter='*Multiscale*gpu' >"$out/memcheck_multiscale.log" 2>&1
    echo "memcheck exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_multiscale.log" | tail -1)"
    timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/tests/test_clean" --gtest_brief=1 \
      --gtest_filter='*Multiscale*PointSource*gpu' >"$out/racecheck_multiscale.log" 2>&1
    echo "racecheck exit $? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_multiscale.log" | tail -1)"
    echo "== --local-rms: the map, the two-noise field, GPU = CPU; compute-sanitizer on its GPU cases"
    "$bin/tests/test_clean" --gtest_brief=1 --gtest_filter='*LocalRms*' >"$out/test_local_rms.log" 2>&1 || status=1
    grep -E "^  |PASSED|FAILED|Failure" "$out/test_local_rms.log" | cut -c1-300 | head -12
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tests/test_clean" --gtest_brief=1 \
      --gtest_filter='LocalRmsGpu.*:*LocalRmsField*gpu' >"$out/memcheck_local_rms.log" 2>&1
    echo "memcheck exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_local_rms.log" | tail -1)"
    timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/tests/test_clean" --gtest_brief=1 \
      --gtest_filter='LocalRmsGpu.MapAndWeights*:*LocalRmsField.Thresholds*gpu' >"$out/racecheck_local_rms.log" 2>&1
    echo "racecheck exit $? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_local_rms.log" | tail -1)"
    echo "== bench clean: --local-rms at 4096^2, GPU and CPU"
    timeout ${MS_BENCH_TIMEOUT:-300} "$bin/gpuclean" bench clean --sizes 4096 --niters 10000 --local-rms \
      --paths gpu-multiscale,cpu-multiscale,gpu-clark,cpu-clark --gaussians 300 --cli-size 0 \
      >"$out/bench_local_rms.txt" 2>"$out/bench_local_rms.err"
    echo "bench exit $?"; cut -c1-300 "$out/bench_local_rms.txt" | tail -5
    echo "== bench clean: multiscale, GPU and CPU"
    timeout ${MS_BENCH_TIMEOUT:-300} "$bin/gpuclean" bench clean --sizes ${MS_SIZES:-2048,4096} --niters 10000 \
      --paths gpu-multiscale,cpu-multiscale,gpu-clark,cpu-clark --gaussians 300 --cli-size 0 --format csv \
      --output "$out/bench_multiscale.csv" >"$out/bench_multiscale.txt" 2>"$out/bench_multiscale.err"
    echo "bench exit $?"; cut -c1-280 "$out/bench_multiscale.txt" | tail -12
    echo "== bench clean: 16384^2"
    timeout 200 "$bin/gpuclean" bench clean --sizes 16384 --niters ${BIG_NITERS:-100000} --paths gpu-clark \
      --cli-size 0 >"$out/bench_16384.txt" 2>"$out/bench_16384.err"
    echo "bench exit $?"; cut -c1-280 "$out/bench_16384.txt" | tail -3
    timeout 200 "$bin/gpuclean" bench clean --sizes 16384 --niters 10000 --paths gpu-multiscale --gaussians 300 \
      --cli-size 0 >"$out/bench_16384_ms.txt" 2>"$out/bench_16384_ms.err"
    echo "bench exit $?"; cut -c1-280 "$out/bench_16384_ms.txt" | tail -2; tail -3 "$out/bench_16384_ms.err"
    timeout 200 "$bin/gpuclean" bench clean --sizes 16384 --niters 10000 --paths gpu-multiscale --gaussians 300 \
      --local-rms --cli-size 0 >"$out/bench_16384_ms_lrms.txt" 2>"$out/bench_16384_ms_lrms.err"
    echo "bench exit $?"; cut -c1-300 "$out/bench_16384_ms_lrms.txt" | tail -2; tail -3 "$out/bench_16384_ms_lrms.err"
    exit $status ;;
  minor-profile)
    for what in "teams ^teams_kernel 4096 --paths gpu-clark" "joined joined_teams 2048 --channels 16 --independent-channels 0"; do
      set -- $what
      name=$1 kernel=$2 size=$3; shift 3
      echo "== $name: ncu WarpStateStats and SourceCounters, bench clean --sizes $size $*"
      ncu --clock-control none --section WarpStateStats --section SourceCounters -k "regex:$kernel" \
        --launch-count 4 -f -o "$out/$name" "$bin/gpuclean" bench clean --sizes "$size" --niters 100000 "$@" \
        >"$out/$name.log" 2>&1
      echo "ncu exit $?"; grep -E "==PROF==|==ERROR==" "$out/$name.log" | tail -3
      ncu -i "$out/$name.ncu-rep" --page raw --csv 2>&1 | python3 scripts/ncu_source_top.py reasons
      ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass 2>&1 | tee "$out/$name.source.csv" |
        python3 scripts/ncu_source_top.py lines 40
      head -c 600 "$out/$name.source.csv"; echo
    done ;;
  cubes)
    # Joined-plane GPU = CPU tests (multiscale, log fit, streamed = resident), the joined analytic tests on CPU and
    # GPU, the cube CLI tests, memcheck and racecheck of the joined minor cycle, bench clean --channels 16 (2048^2,
    # joined, GPU and CPU) and 64 independent channels; CUBE_SANITIZE=0 or CUBE_BENCH=0 leave those parts out.
    status=0
    echo "== GPU = CPU, joined planes"
    "$bin/tests/test_clean_gpu" --gtest_filter='JoinedGpuVsCpu.*' >"$out/test_joined_gpu.log" 2>&1 || status=1
    grep -E "^  joined|^  widest|OK|FAILED|Failure" "$out/test_joined_gpu.log" | cut -c1-300 | head -24
    echo "== test_clean *Joined* (multiscale on the GPU too), SpectralFit*, test_cli CubeCli.* (GPU where the device is auto)"
    "$bin/tests/test_clean" --gtest_brief=1 --gtest_filter='*Joined*:SpectralFit*' >"$out/test_joined.log" 2>&1 || status=1
    grep -E "PASSED|FAILED|Failure" "$out/test_joined.log" | head -6
    "$bin/tests/test_cli" --gtest_brief=1 --gtest_filter='CubeCli.*' >"$out/test_cube_cli.log" 2>&1 || status=1
    grep -E "PASSED|FAILED|Failure" "$out/test_cube_cli.log" | head -6
    if [ "${CUBE_SANITIZE:-1}" = 1 ]; then
    echo "== compute-sanitizer memcheck and racecheck: the joined minor cycle"
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tests/test_clean_gpu" --gtest_brief=1 \
      --gtest_filter='JoinedGpuVsCpu.EightChannelsFittedWithTwoTerms' >"$out/memcheck_joined.log" 2>&1
    echo "memcheck exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_joined.log" | tail -1)"
    # The 256^2 joined cases run past 200 s under racecheck; a 128^2 joined multiscale run takes 110 s.
    timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/tests/test_clean" --gtest_brief=1 \
      --gtest_filter='*JoinedMultiscale.TakesExtendedFluxWhereClarkDoesNot/gpu' >"$out/racecheck_joined.log" 2>&1
    echo "racecheck exit $? $(grep -E 'RACECHECK SUMMARY' "$out/racecheck_joined.log" | tail -1)"
    timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tests/test_clean_gpu" --gtest_brief=1 \
      --gtest_filter='JoinedGpuVsCpu.StreamedPlanesAreTheResidentRun:JoinedGpuVsCpu.EightChannelsFittedWithALogarithmicPolynomial' \
      >"$out/memcheck_streamed.log" 2>&1
    echo "memcheck (streamed, log fit) exit $? $(grep -E 'ERROR SUMMARY' "$out/memcheck_streamed.log" | tail -1)"
    fi
    [ "${CUBE_BENCH:-1}" = 1 ] || exit $status
    echo "== bench clean --channels 16: 2048^2 joined (GPU, CPU) and 64 independent channels"
    timeout ${CUBE_BENCH_TIMEOUT:-400} "$bin/gpuclean" bench clean --channels 16 --sizes ${CUBE_SIZES:-2048} \
      --niters ${CUBE_NITERS:-100000} --independent-channels 64 --cpu-planes 4 >"$out/bench_cube.txt" \
      2>"$out/bench_cube.err"
    echo "bench exit $?"; cut -c1-300 "$out/bench_cube.txt"; tail -4 "$out/bench_cube.err"
    exit $status ;;
  select)
    status=0
    echo "== test_select_gpu"
    start=$(date +%s)
    "$bin/tests/test_select_gpu" --gtest_brief=1 >"$out/test_select_gpu.log" 2>&1 || status=1
    echo "test_select_gpu: $(( $(date +%s) - start )) s"; grep -E "PASSED|FAILED|Failure" "$out/test_select_gpu.log" | head -20
    for t in test_bitonic_sort test_randomized_paths; do
      [ -x "$bin/tests/$t" ] || continue
      echo "== $t"; start=$(date +%s)
      "$bin/tests/$t" --gtest_brief=1 >"$out/$t.log" 2>&1 || status=1
      echo "$t: $(( $(date +%s) - start )) s"; grep -E "PASSED|FAILED|Failure" "$out/$t.log" | head -10
    done
    echo "== compute-sanitizer on the small selection cases"
    timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/tests/test_select_gpu" --gtest_brief=1 \
      --gtest_filter='SampleSecondLevel.*:*_n1000:*_n33:*_n1' >"$out/memcheck_select.log" 2>&1
    echo "memcheck exit $?"; grep -E "ERROR SUMMARY|FAILED" "$out/memcheck_select.log" | tail -3
    timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/tests/test_select_gpu" --gtest_brief=1 \
      --gtest_filter='SampleSecondLevel.*:*uniform_n1000:*narrow_n1000' >"$out/racecheck_select.log" 2>&1
    echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY|FAILED" "$out/racecheck_select.log" | tail -3
    echo "== bench select 2^24, 2^28 (auto table)"
    timeout 200 "$bin/gpuclean" bench select --sizes 24,28 --repeats 5 --auto-table --format csv \
      --output "$out/bench_select.csv" >"$out/bench_select.txt" 2>"$out/bench_select.err"
    echo "bench exit $?"; tail -3 "$out/bench_select.err"; tail -60 "$out/bench_select.txt"
    exit $status ;;
  python)
    # A module built elsewhere is for that machine's Python, so the extension is compiled here
    # (python/CMakeLists.txt, standalone) from the static libraries and python/prebuilt-config.cmake
    # of $bin, which device-pack.sh carries. The module finds .devlib through its RPATH: Python
    # itself runs without it on LD_LIBRARY_PATH (its older libexpat, libffi, ... would shadow the
    # system's under Python's own modules); only the gpuclean binary the tests run gets it.
    export GPUCLEAN_CLI_LIBRARY_PATH=$LD_LIBRARY_PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
    # The image's CXX (/opt/gcc's wrapper) links libstdc++ into the module statically, so that a
    # second libstdc++ (the system's, which libgd's codecs load) shares the process: the module
    # crashed at import there ('free(): invalid pointer'). The system compiler links it shared.
    [ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++
    py=$(command -v python3)
    echo "== build the extension for $($py --version) with $(${CXX:-c++} --version | head -1); its default" \
      "C++11 ABI: $(printf '#include <string>\n_GLIBCXX_USE_CXX11_ABI\n' | ${CXX:-c++} -E -x c++ - | tail -1)"
    { cmake -S python -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCLEAN_PREBUILT_DIR="$bin" \
        -DGPUCLEAN_LIBRARY_DIR="$PWD/.devlib" -DPython_EXECUTABLE="$py" -Dpybind11_DIR="$($py -m pybind11 --cmakedir)" \
        -DCUDAToolkit_ROOT=/usr/local/cuda && cmake --build build-py; } >"$out/python_build.log" 2>&1 \
      || { tail -30 "$out/python_build.log"; exit 1; }
    export PYTHONPATH=$PWD/build-py/python
    echo "== pytest python/tests"
    status=0
    $py -m pytest -v -rs -p no:cacheprovider python/tests >"$out/pytest.log" 2>&1 || status=1
    grep -E "^(FAILED|ERROR|SKIPPED)" "$out/pytest.log" | head -20; tail -1 "$out/pytest.log"
    echo "== python -m gpuclean.bench"
    [ -n "${SKIP_PY_BENCH:-}" ] || timeout 400 $py -m gpuclean.bench 2>&1 | tee "$out/bench_python.txt" || status=1
    exit $status ;;
  multiscale-figures)
    # FIG_SIZE (default 2048) and FIG_DEVICE (gpu) change the run. The FITS images stay in /tmp; what comes back is small: two PNGs, the table, the summaries, the log.
    fig=/tmp/ms-figures
    # The GPU machine's NumPy is under its python3 on PATH, not /usr/bin/python3.
    FIG_DIR=$fig DEVICE=${FIG_DEVICE:-gpu} GPUCLEAN_BUILD=$bin SIZE=${FIG_SIZE:-2048} PYTHON=${PYTHON:-python3} timeout 500 \
      bash scripts/multiscale-figures.sh \
      2>&1 | tee "$out/figures.log"
    status=${PIPESTATUS[0]}
    for f in panels.png residuals.png recovery.txt clark.json multiscale.json; do
      [ -f "$fig/$f" ] && cp "$fig/$f" "$out/"
    done
    ls -l "$out"
    exit $status ;;
  bench-overview)
    # The headline figures in one run (bench clean 4096^2 and 16384^2, bench batch 64, joined 16 channels, bench
    # select at 2^24 and 2^28), then ncu per-kernel profiles of the selection's misses; OVERVIEW_NCU=0 leaves them out.
    echo "== bench clean 4096^2: GPU Clark and the CPU path"
    timeout 150 "$bin/gpuclean" bench clean --sizes 4096 --niters 100000 --paths gpu-clark,cpu-clark --cli-size 4096 \
      >"$out/bench_clean_4096.txt" 2>"$out/bench_clean_4096.err"
    echo "bench exit $?"; cut -c1-330 "$out/bench_clean_4096.txt" | tail -5; grep "us a step" "$out/bench_clean_4096.err"
    echo "== bench clean 16384^2, GPU Clark"
    timeout 150 "$bin/gpuclean" bench clean --sizes 16384 --niters 100000 --paths gpu-clark --cli-size 0 \
      >"$out/bench_clean_16384.txt" 2>"$out/bench_clean_16384.err"
    echo "bench exit $?"; cut -c1-330 "$out/bench_clean_16384.txt" | tail -1; grep "us a step" "$out/bench_clean_16384.err"
    echo "== bench batch 64 x 2048^2 (and the clean stage in memory on 4, 6 and 8 workers, the batch with 4, 6 and 8 streams and 4 or 6 I/O threads)"
    timeout 250 "$bin/gpuclean" bench batch --size 2048 --counts 64 --distinct 8 --dir /tmp/bench-batch \
      --streams 4,6,8 --io 4,6 >"$out/bench_batch.txt" 2>&1
    echo "bench batch exit $?"; grep -E "^clean stage|^ +64 |^bound" "$out/bench_batch.txt"
    echo "== bench clean --channels 16 (2048^2 joined, GPU and CPU)"
    timeout 120 "$bin/gpuclean" bench clean --channels 16 --sizes 2048 --niters 100000 --independent-channels 0 \
      --cpu-planes 4 >"$out/bench_cube.txt" 2>"$out/bench_cube.err"
    echo "bench exit $?"; cut -c1-330 "$out/bench_cube.txt" | tail -4
    echo "== bench select 2^24, 2^28 (randomized, sample, CUB sort)"
    timeout 200 "$bin/gpuclean" bench select --sizes 24,28 --backends randomized,sample --ks 1,65536 --repeats 5 \
      --no-cpu-check --format csv --output "$out/bench_select.csv" >"$out/bench_select.txt" 2>"$out/bench_select.err"
    echo "bench select exit $?"
    [ "${OVERVIEW_NCU:-1}" = 1 ] || exit 0
    echo "== ncu per kernel: randomized top-k misses; sample's 101 percentiles at 2^28"
    for c in "24 uniform 65536 randomized --no-order-statistics" "28 all_equal 65536 randomized --no-order-statistics" \
             "28 many_inf 1 randomized --no-order-statistics" "28 huge_outlier 65536 randomized --no-order-statistics" \
             "28 normal 1 sample"; do
      set -- $c
      timeout 150 ncu --clock-control none --print-summary per-kernel --section SpeedOfLight --section LaunchStats \
        "$bin/gpuclean" bench select --sizes "$1" --distributions "$2" --backends "$4" --ks "$3" ${5:-} --no-robust \
        --repeats 1 --no-cpu-check >"$out/ncu_$1_$2_$4.txt" 2>&1
      echo "ncu $c: exit $?"
    done
    exit 0 ;;
  batch-sweep)
    # Where the clean stage's time goes (its per-observation line), then bench batch 64 x 2048^2 with each streams
    # x I/O threads pair of SWEEP_STREAMS (default 2,4,8,16) and SWEEP_IO (2,4,6): what keeps the GPU busy.
    timeout ${SWEEP_TIMEOUT:-500} "$bin/gpuclean" bench batch --size 2048 --counts 64 --distinct 8 \
      --dir /tmp/bench-batch --streams "${SWEEP_STREAMS:-2,4,8,16}" --io "${SWEEP_IO:-2,4,6}" \
      >"$out/bench_batch_sweep.txt" 2>&1
    echo "bench batch exit $?"; grep -E "^clean stage|^ +64 |^bound" "$out/bench_batch_sweep.txt"
    exit 0 ;;
  gpu-probe)
    # What the several-GPU design rests on (docs/design/multi-gpu-plan.md's open questions): how the GPUs are
    # linked, whether each pair has peer access and at what rate a peer copy runs, whether NCCL is installed
    # (gpuclean does not use it), and whether `gpuclean image` gives bit-identical files run to run on one GPU.
    # Needs .devwsc (its Python makes the MS; GPUCLEAN_BUILD=.devwsc/root).
    export NCCL_NVLS_ENABLE=0
    nvidia-smi -L; nvidia-smi topo -m; echo "cores $(nproc)"; free -g | head -2
    echo "NCCL: $(ldconfig -p | grep -c libnccl) in ldconfig; $(ls /usr/local/cuda/lib64 2>/dev/null | grep -c nccl) in /usr/local/cuda/lib64"
    syspy - <<'PY' 2>&1 | tee "$out/peer.txt"
import torch
n = torch.cuda.device_count()
print("peer access:", [[int(torch.cuda.can_device_access_peer(i, j)) if i != j else "-" for j in range(n)] for i in range(n)])
for i in range(n):
    for j in range(n):
        if i == j: continue
        a = torch.empty(64 << 20, dtype=torch.float32, device=f"cuda:{i}"); b = torch.empty_like(a, device=f"cuda:{j}")
        for _ in range(3): b.copy_(a)
        torch.cuda.synchronize(i); torch.cuda.synchronize(j)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.device(i):
            s.record(); [b.copy_(a) for _ in range(10)]; e.record(); e.synchronize()
        print(f"copy {i}->{j}: {10 * a.numel() * 4 / s.elapsed_time(e) / 1e6:.1f} GB/s (256 MiB x 10)")
PY
    work=/tmp/gpu-probe; rm -rf "$work"; mkdir -p "$work"
    "${GPUCLEAN_PYTHON:-python3}" data/simulate_ms.py --out "$work/sim.ms" --sky survey --sources 300 --gaussians 30 \
      --channels 4 --hours 4 --integration 120 --radius 1500 >"$out/probe_simulate.log" 2>&1 || echo "simulate failed: $(tail -1 "$out/probe_simulate.log")"
    for clean in "" "-niter 3000 -mgain 0.8 -auto-threshold 3"; do
      for r in 1 2; do
        "$bin/gpuclean" image -size 2048 2048 -scale 1.6asec -channels-out 4 -weight briggs 0 $clean \
          -name "$work/run$r" "$work/sim.ms" >"$out/probe_image_$r.log" 2>&1 || echo "image run $r failed"
      done
      same=0 differ=0
      for f in "$work"/run1*.fits; do
        [ -e "$f" ] || continue
        # The data units only: a header may carry the time of the run.
        if syspy -c "import sys
def data(p):
    b = open(p, 'rb').read(); i = 0
    while b[i:i + 8] != b'END     ': i += 80
    return b[(i // 2880 + 1) * 2880:]
sys.exit(data(sys.argv[1]) != data(sys.argv[2]))" "$f" "${f/run1/run2}"; then same=$((same + 1))
        else differ=$((differ + 1)); echo "  differs: $(basename "$f")"; fi
      done
      echo "gpuclean image ${clean:-(dirty and PSF)} twice on one GPU: $same files identical, $differ differ"
      rm -f "$work"/run*.fits
    done
    exit 0 ;;
  multi-gpu)
    # test_cube_gpus, bench batch 64 and 256 x 2048^2 on 1, 2, 4, 8 GPUs (those the host has), and a 64-channel
    # 2048^2 cube (CUBE_SIZE, CUBE_CHANNELS) cleaned plane by plane on 1, 2 and all GPUs. Files go to MULTI_GPU_DIR
    # (default /dev/shm/gpuclean-multi, so that the disk is out of the way; the bench's "disk obs/s" column is
    # that folder's rate with no CLEAN).
    export NCCL_NVLS_ENABLE=0
    dir=${MULTI_GPU_DIR:-/dev/shm/gpuclean-multi}
    rm -rf "$dir"; mkdir -p "$dir"
    nvidia-smi -L; echo "cores $(nproc); files in $dir ($(df -h --output=fstype,avail "$dir" | tail -1))"
    "$bin/tests/test_cube_gpus" --gtest_brief=1 >"$out/test_cube_gpus.log" 2>&1
    echo "test_cube_gpus exit $?"; grep -E "PASSED|FAILED|SKIPPED|Skipped|Failure" "$out/test_cube_gpus.log" | tail -6
    echo "== bench batch 64 and 256 x 2048^2 on 1, 2, 4, 8 GPUs"
    timeout ${MULTI_GPU_BATCH_TIMEOUT:-400} "$bin/gpuclean" bench batch --size 2048 --counts ${MULTI_GPU_COUNTS:-64,256} \
      --distinct 8 --dir "$dir/bench-batch" --gpus 1,2,4,8 >"$out/bench_batch_gpus.txt" 2>&1
    echo "bench batch exit $?"; grep -E "^ +(64|256) |^bound" "$out/bench_batch_gpus.txt"
    rm -rf "$dir/bench-batch"
    size=${CUBE_SIZE:-2048} channels=${CUBE_CHANNELS:-64}
    echo "== ${channels} channels of ${size}^2, every plane its own CLEAN: 1, 2 and all GPUs"
    "$bin/gpuclean" simulate --size "$size" --channels "$channels" --bandwidth 4e8 --name obs --out "$dir/cube" \
      >"$out/cube_simulate.log" 2>&1 || echo "simulate failed: $(tail -1 "$out/cube_simulate.log")"
    for g in 1 2 0; do
      "$bin/gpuclean" "$dir/cube/obs" --wsclean-channels -o "$dir/cube/out-$g" --max-gpus "$g" --overwrite \
        --json "$out/cube_gpus_$g.json" -q
      echo "--max-gpus $g: exit $?"
      syspy -c "import json,sys; j=json.load(open(sys.argv[1])); s=j['seconds']; print('  gpus', j.get('gpus'), ' '.join('%s %.2f s' % kv for kv in sorted(s.items())), 'components', sum(r['iterations'] for r in j['runs']))" \
        "$out/cube_gpus_$g.json"
    done
    exit 0 ;;
  wsclean-survey)
    # scripts/wsclean_bench.py --preset survey: 4096^2, 8 channels joined, multiscale, on a simulated 300-source
    # MeerKAT field (WSClean 3.1: without -local-rms); needs .devwsc (scripts/wsclean-pack.sh of a CUDA build).
    # SURVEY_OPTIONS, SURVEY_NMITER, SURVEY_TIMEOUT, SURVEY_TOTAL, SURVEY_SIZE change it.
    # WSClean and its Python come from the pack: the GPU machine has neither (scripts/wsclean-pack.sh).
    [ -f .devwsc/wsclean.tar.xz ] || { echo "wsclean-survey: no .devwsc/wsclean.tar.xz; run scripts/wsclean-pack.sh" \
      "on the build machine and carry .devwsc" >&2; exit 1; }
    tar -xJf .devwsc/wsclean.tar.xz && source .devwsc/env.sh || exit 1
    # The pack's WSClean 3.1 crashes in its own multiscale clean with -local-rms (heap corruption at the end
    # of the first minor loop): the default leaves -local-rms out of both runs. With -auto-mask, the hook's
    # run gives multiscale as GPUCLEAN_OPTIONS=--multiscale (wsclean_bench.py does it for WSClean < 3.3).
    # SURVEY_OPTIONS= (empty) runs the preset's full oxkat-like options, for a pack of a later WSClean.
    options=${SURVEY_OPTIONS-"-channels-out 8 -join-channels -fit-spectral-pol 4 -multiscale -auto-mask 5 -auto-threshold 3 -mgain 0.8 -niter 1000000 -weight briggs 0"}
    # 9 minutes in all (--total-timeout 530 after the unpacking), each WSClean run at most SURVEY_TIMEOUT s.
    # Both runs stop after -nmiter 2 major cycles. On the 16-core H100 host (WSClean 3.1, w-stacking) each
    # 4096^2 channel's inversion or prediction took ~3.1 s: 50 s before the first cycle, 50 s after each.
    # WSClean's own deconvolution stages took 46-55 and 56-67 s, its whole run 273-319 s; the hook's stages
    # 11 and 8 s, its run ~190 s; the simulation 16-21 s. The hook runs first, so that where the time runs
    # out it is WSClean's own run that stops, after its two deconvolution stages (~230 s into it).
    work=/tmp/wsclean-survey
    rm -rf "$work"
    $WSC_PYTHON scripts/wsclean_bench.py --work "$work" --preset survey --size "${SURVEY_SIZE:-4096}" \
      --threads "$(nproc)" --nmiter "${SURVEY_NMITER:-2}" --timeout "${SURVEY_TIMEOUT:-330}" --total-timeout "${SURVEY_TOTAL:-530}" \
      ${options:+--wsclean-options "$options"} 2>&1 | tee "$out/wsclean-survey.txt"
    status=${PIPESTATUS[0]}
    cp "$work"/*.log "$work"/*-sources.csv "$work"/sim-truth.csv "$out/" 2>/dev/null
    exit $status ;;
  setup-profile)
    echo "== bench clean 16384^2: where the set-up goes (then with glibc's huge-page tunable)"
    "$bin/gpuclean" bench clean --sizes 16384 --niters 100000 --paths gpu-clark --cli-size 0 2>/dev/null | tail -2
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$bin/gpuclean" bench clean --sizes 16384 --niters 100000 --paths gpu-clark \
      --cli-size 0 2>/dev/null | tail -1
    echo "== bench batch, 64 x 2048^2"
    timeout 200 "$bin/gpuclean" bench batch --size 2048 --counts 64 --distinct 8 --dir /tmp/bench-batch 2>&1 | tail -6
    echo "== ncu: randomized top-k at 2^24 (k 20050) and 2^28 (k 65536), the median and robust statistics at 2^28"
    for c in "24 noise_plus_point_sources 20050 --no-order-statistics" "28 few_distinct 65536 --no-order-statistics" \
             "28 normal 1"; do
      set -- $c
      timeout 150 ncu --clock-control none --print-summary per-kernel --section SpeedOfLight --section LaunchStats \
        "$bin/gpuclean" bench select --sizes "$1" --distributions "$2" --backends randomized --ks "$3" ${4:-} --repeats 1 \
        --no-cpu-check >"$out/ncu_$1_$2.txt" 2>&1
      echo "ncu $c: exit $?"
      grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|Grid Size|Block Size" "$out/ncu_$1_$2.txt" | head -60
    done
    exit 0 ;;
esac
