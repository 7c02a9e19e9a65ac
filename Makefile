# Loom: `make demo` and `make test` are all a newcomer needs (they install dependencies).
#   make deps                 Debian packages (apt-get) + pinned test-only Python packages (.venv)
#   make build                configure and build (build/)
#   make test                 the whole suite through ctest; exit code is the verdict
#   make test SANITIZE=1      the unit tests under AddressSanitizer + UBSan (build-sanitize/)
#   make test SANITIZE=thread the runtime's concurrency tests under ThreadSanitizer (build-tsan/)
#   make fuzz                 the libFuzzer harnesses, FUZZ_SECONDS (default 600) each
#   make python               the Python package (pip install ./python into .venv; a wheel
#                             built by scikit-build-core, its build in $(BUILD_DIR)/wheel)
#   make demo                 the main job on the bundled default
#   make bench                the benchmarks (kernels against OpenBLAS and oneDNN, whole models)
# CI=true makes warnings errors.

SANITIZE ?= 0
JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
  BUILD_DIR ?= build-sanitize
  CMAKE_FLAGS += -DLOOM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  CTEST_FLAGS += -L unit
else ifeq ($(SANITIZE),thread)
  # The thread pool, the backend services and executors sharing a model (their own tests and
  # the parallel stress of generated kernels), with the pool on every core.
  BUILD_DIR ?= build-tsan
  CMAKE_FLAGS += -DLOOM_SANITIZE=thread
  BUILD_TARGETS = test_runtime test_runtime_graph_c_api test_target
  CTEST_FLAGS += -R '^(ThreadPool|BackendServices|GraphExecutor|ParallelStress)\.|^runtime_graph_c_api$$|^parallel_stress'
  export LOOM_NUM_THREADS ?= $(JOBS)
else
  BUILD_DIR ?= build
  # Label `slow` (dense sweeps) runs only when asked: cd build && ctest -L slow
  CTEST_FLAGS += -LE slow
endif
ifeq ($(CI),true)
  CMAKE_FLAGS += -DLOOM_WERROR=ON
else
  CMAKE_FLAGS += -DLOOM_WERROR=OFF
endif

# allocator_may_return_null: a failed allocation returns null as it does without ASan, so
# the tests of huge allocations (a fuzzed model asking for exabytes) see the clear error.
export ASAN_OPTIONS ?= detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS ?= print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS ?= suppressions=$(CURDIR)/scripts/lsan-suppressions.txt
# (allocator_may_return_null: as for ASan above.)
export TSAN_OPTIONS ?= halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1
FUZZ_SECONDS ?= 600

.PHONY: deps configure build test python demo bench fuzz clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) $(if $(BUILD_TARGETS),--target $(BUILD_TARGETS))

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# `make test` tests the package from the build (PYTHONPATH=$(BUILD_DIR)/python); this installs
# it as users do, with the build requirements make deps put in .venv (no download).
python: deps
	@.venv/bin/pip install --quiet --disable-pip-version-check --no-build-isolation \
	  --config-settings=build-dir=$(BUILD_DIR)/wheel ./python

# A classifier trained on scikit-learn's digits and ResNet-18, through the `loom` tool
# (python/demo/run_demo.py). The C++ tour of the compiler internals stays built:
# $(BUILD_DIR)/tools/demo/loom-demo.
demo: build
	@.venv/bin/python3 python/demo/run_demo.py --loom $(BUILD_DIR)/tools/loom/loom \
	  --workdir $(BUILD_DIR)/demo

bench: build
	@$(BUILD_DIR)/bench/loom-bench-gemm
	@$(BUILD_DIR)/bench/loom-bench-conv2d
	@$(BUILD_DIR)/bench/loom-bench-graph
	@.venv/bin/python3 bench/models/run_models.py --loom $(BUILD_DIR)/tools/loom/loom \
	  --workdir $(BUILD_DIR)/bench-models
	@.venv/bin/python3 bench/vta/resnet18.py --loom $(BUILD_DIR)/tools/loom/loom \
	  --workdir $(BUILD_DIR)/bench-vta

# Both libFuzzer harnesses at once (one per core), FUZZ_SECONDS each; new inputs and findings
# under $(BUILD_DIR)/fuzz/. The last lines of each are the executions run and the coverage.
fuzz: build
	@tests/fuzz/run_fuzzer.sh $(BUILD_DIR)/fuzz-build/tests/fuzz/model_fuzz $(FUZZ_SECONDS) \
	  $(BUILD_DIR)/fuzz/model tests/fuzz/corpus/model tests/fuzz/findings/model & \
	tests/fuzz/run_fuzzer.sh $(BUILD_DIR)/fuzz-build/tests/fuzz/artifact_fuzz $(FUZZ_SECONDS) \
	  $(BUILD_DIR)/fuzz/artifact $(BUILD_DIR)/tests/graph_fixture tests/fuzz/findings/artifact; \
	artifact=$$?; wait $$!; model=$$?; test $$artifact -eq 0 -a $$model -eq 0

clean:
	rm -rf build build-sanitize build-tsan
