# Loom: `make demo` and `make test` are all a newcomer needs (they install dependencies).
#   make deps                 Debian packages (apt-get) + pinned test-only Python packages (.venv)
#   make build                configure and build (build/)
#   make test                 the whole suite through ctest; exit code is the verdict
#   make test SANITIZE=1      the unit tests under AddressSanitizer + UBSan (build-sanitize/)
#   make demo                 the main job on the bundled default
#   make bench                the benchmarks (kernels against OpenBLAS and oneDNN, whole models)
# CI=true makes warnings errors.

SANITIZE ?= 0
JOBS ?= $(shell nproc)
ifeq ($(SANITIZE),1)
  BUILD_DIR ?= build-sanitize
  CMAKE_FLAGS += -DLOOM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  CTEST_FLAGS += -L unit
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

.PHONY: deps configure build test demo bench clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

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

clean:
	rm -rf build build-sanitize
