#!/bin/bash
# One prepared run on a GPU machine for docs/benchmarks/gpu.md: build llama-cpp-python 0.3.36
# with CUDA from its source, make random-weight translators of real shapes, time them, and run
# the fixture translator's five benchmarks of docs/benchmarks/translator.md on the GPU.
#
#   bash tools/gpu_bench.sh STAGE OUT
#
# STAGE holds what a machine without a network needs (see docs/benchmarks/gpu.md, "Staging"):
# llama_cpp_python-0.3.36*.tar.gz, the wheels of the Python packages the machine lacks, and
# corpora/ (the benchmark's sentences). Results go to OUT: run.log, gpu-costs.json and one
# bench-gpu-NAME.json per benchmark (8 files at most: what the device tool brings back).
# Resumable: a second run on the same machine reuses the build, the models and every result
# already made (kept under $WORK), so a run cut at its time limit goes on where it stopped.
#
# Knobs (environment): CUDA_ARCH (90: H100/H200; "off" for a CPU rehearsal), TRANSLATORS,
# QTYPES, LIMIT (sentences per benchmark), THREADS, BENCH_TIMEOUT (s per benchmark).
set -uo pipefail
STAGE=$(realpath "$1")
OUT=$(realpath "$2")
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
WORK=${WORK:-/tmp/gpu_bench}
CUDA_ARCH=${CUDA_ARCH:-90}
TRANSLATORS=${TRANSLATORS:-gemma3-270m,gemma3-1b,qwen3-0.6b,qwen3-1.7b,gemma2-2b,qwen3-4b}
QTYPES=${QTYPES:-q8_0,q4_k_m}
LIMIT=${LIMIT:-50}
THREADS=${THREADS:-4}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-120}
SITE=$WORK/site
RESULTS=$WORK/results
mkdir -p "$WORK" "$RESULTS" "$OUT"
LOG=$OUT/run.log
exec > >(tee -a "$LOG") 2>&1
say() { echo "[gpu_bench $(date +%T)] $*"; }
publish() { cp "$RESULTS"/*.json "$OUT"/ 2>/dev/null; true; }

say "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1 | head -3
command -v nvcc >/dev/null && nvcc --version | tail -2
"$PY" -V; nproc; free -g | head -2

if [ ! -f "$SITE/llama_cpp/__init__.py" ]; then
    say "building llama-cpp-python (CUDA_ARCH=$CUDA_ARCH)"
    SRC=$WORK/llama-src
    if [ ! -d "$SRC" ]; then
        mkdir -p "$SRC" && tar xzf "$STAGE"/llama_cpp_python-0.3.36*.tar.gz -C "$SRC" --strip-components 1
    fi
    ARGS="-DLLAVA_BUILD=OFF -DGGML_CUDA_NCCL=OFF"
    if [ "$CUDA_ARCH" != off ]; then
        export PATH=/usr/local/cuda/bin:$PATH
        ARGS="$ARGS -DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH"
    fi
    # A fixed source and build folder: a build cut by the time limit resumes (ninja) next run.
    CMAKE_ARGS="$ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$PY" -m pip install -q --no-index \
        --no-deps --no-build-isolation --no-cache-dir --target "$SITE" \
        --config-settings=build-dir="$WORK/llama-build" "$SRC" >"$WORK/build.log" 2>&1
    rc=$?
    tail -5 "$WORK/build.log"
    if [ $rc -ne 0 ]; then say "build failed ($rc)"; tail -60 "$WORK/build.log"; exit 1; fi
    say "built"
fi
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "$STAGE"/*.whl \
    >/dev/null 2>&1 || say "some wheels did not install (already there?)"
export PYTHONPATH=$SITE:$REPO PYTHONUNBUFFERED=1
GPU_LAYERS=-1
"$PY" -c "import llama_cpp; print('gpu offload:', llama_cpp.llama_supports_gpu_offload())"
[ "$CUDA_ARCH" = off ] && GPU_LAYERS=0

say "models"
IFS=, read -ra NAMES <<<"$TRANSLATORS"
PIDS=()
for n in "${NAMES[@]}"; do  # one process each: numpy and the quantizer run side by side
    "$PY" -m subtitler_research.bench.mt_cost --translators "$n" --qtypes "$QTYPES" \
        --cache "$WORK/models" --build-only >"$WORK/models-$n.log" 2>&1 &
    PIDS+=($!)
done
wait "${PIDS[@]}"  # not a bare wait: that would also wait for the log's tee
grep -h "gguf$" "$WORK"/models-*.log; ls -la "$WORK/models" | tail -n +2

say "smoke: the app's LlamaLM on the fixture"
SMOKE="import subtitler.mt.llama_backend as b
lm = b.LlamaLM(b.LlamaSettings('$REPO/fixtures/translator/model.gguf', n_ctx=512, n_gpu_layers=$GPU_LAYERS))
print('LlamaLM logits', lm.evaluate([5, 6, 7], [0, 1, 2]).shape)"
if ! "$PY" -X faulthandler -c "$SMOKE" 2>"$WORK/smoke.err"; then
    # Seen on an H200 (docs/benchmarks/gpu.md): LlamaLM segfaulted where llama-cpp-python's Llama
    # ran. Where the native code died, for the next run to mend; then the costs the plain way.
    say "LlamaLM failed; native backtrace:"
    grep -v "^llama_\|^load\|^print_info\|^\.\|^gguf" "$WORK/smoke.err" | tail -20
    command -v cuda-gdb >/dev/null && timeout 120 cuda-gdb -batch -ex run -ex bt \
        --args "$PY" -c "$SMOKE" 2>&1 | grep -v "^\[New Thread\|^\[Thread\|^llama_\|^load\|^print_info" | tail -40
    if [ ! -s "$RESULTS/plain-costs.json" ]; then
        say "costs through llama-cpp-python's Llama (tools/gpu_plain_cost.py)"
        "$PY" "$REPO/tools/gpu_plain_cost.py" "$RESULTS/plain-costs.json" \
            "$REPO/fixtures/translator/model.gguf" "$WORK"/models/*.gguf --gpu-layers $GPU_LAYERS \
            2>/dev/null
        publish
    fi
    say "no fixture benchmarks without LlamaLM"
    exit 1
fi

if [ ! -s "$RESULTS/gpu-costs.json" ]; then
    say "costs"
    "$PY" -m subtitler_research.bench.mt_cost --model "fixture=$REPO/fixtures/translator/model.gguf" \
        --translators "$TRANSLATORS" --qtypes "$QTYPES" --cache "$WORK/models" \
        --gpu-layers $GPU_LAYERS --threads "$THREADS" --repeat 5 --json "$RESULTS/gpu-costs.part.json" \
        2> >(grep -v "^llama_\|^load\|^print_info\|^\.\|^gguf\|^ggml_\|^graph_\|^sched_\|^set_abort" >&2)
    mv "$RESULTS/gpu-costs.part.json" "$RESULTS/gpu-costs.json"
    publish
fi

say "fixture benchmarks (limit $LIMIT, every method interleaved)"
C=$STAGE/corpora
while read -r name src ref tgt; do
    [ -s "$RESULTS/bench-gpu-$name.json" ] && continue
    timeout "$BENCH_TIMEOUT" "$PY" -m subtitler_research.bench --model "$REPO/fixtures/translator/model.gguf" \
        --source "$C/$src" --reference "$C/$ref" --src-lang en --tgt-lang "$tgt" --step 3 \
        --betas 0,0.1,0.2,0.3,0.4,0.5 --ks 3,5 --limit "$LIMIT" --threads "$THREADS" \
        --gpu-layers $GPU_LAYERS --no-progress --json "$RESULTS/bench-gpu-$name.json" \
        2>"$WORK/bench-$name.err" | grep -v "^$" | head -20
    [ -s "$RESULTS/bench-gpu-$name.json" ] || { say "$name: no result"; tail -5 "$WORK/bench-$name.err"; }
    publish
done <<'EOF'
m30k_2016_en-de task1_test_2016_flickr.en task1_test_2016_flickr.de de
nt2019_en-de newstest2019.en-de.en newstest2019.en-de.de de
nt2020_en-de newstest2020.en-de.en newstest2020.en-de.de de
nt2020_en-zh newstest2020.en-zh.en newstest2020.en-zh.zh zh
nt2020_en-ja newstest2020.en-ja.en newstest2020.en-ja.ja ja
EOF
publish
say "done"
