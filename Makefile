# perfatlas: `make run` measures this machine, `make test` runs the test suite.
# Both install what is missing on a fresh Debian 12 machine first.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DB     ?= perfatlas.db
OUT    ?= perfatlas-out

# Debian packages the build, the measurements and the tests need. likwid (the peer of
# bench/likwid_compare.py) has no arm64 package in Debian 12: x86-64 only (docs/arm64.md).
LIKWID := $(if $(filter x86_64,$(shell uname -m)),likwid)
DEBIAN_PACKAGES := build-essential cmake ninja-build pkg-config python3-venv python3-dev \
                   libhwloc-dev hwloc libnuma-dev numactl libsqlite3-dev \
                   chromium $(LIKWID) \
                   openmpi-bin libopenmpi-dev mpich libmpich-dev iproute2 hpcc \
                   libsuitesparse-dev libmumps-dev libmetis-dev libopenblas-openmp-dev libpapi-dev \
                   libscalapack-openmpi-dev clang-format qemu-user \
                   clang libclang-rt-14-dev libunwind8

.PHONY: all deps install run test test-mpich test-arm64 test-arm64-inside docs bench lint format clean \
        fuzz fuzz-build fuzz-replay
all: install

# NO_APT=1: install no Debian package, build against what the machine already has: a cluster's
# login node without root, with MPI, hwloc, a BLAS and CMake from its modules (docs/install.md).
NO_APT ?=

# The Debian packages of the list $(1) that are not installed yet, installed for $(2) with apt-get
# (with sudo unless root; sudo only where it needs no password or has a terminal to ask on).
# Where they cannot be (no apt-get, not root and no usable sudo), one sentence names them and the
# way without root, and make stops with status 2.
install_missing = missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    SUDO=; why=; \
	    if ! command -v apt-get >/dev/null 2>&1; then why="this machine has no apt-get"; \
	    elif [ $$(id -u) -ne 0 ]; then \
	        if command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then SUDO=sudo; \
	        else why="this user is not root and cannot use sudo"; fi; \
	    fi; \
	    if [ -n "$$why" ]; then \
	        echo "make: $(2) need Debian packages that are missing and cannot be installed here" \
	             "($$why):" $$missing"; have them installed, or build against what this machine" \
	             "or its modules provide with 'make install NO_APT=1' (docs/install.md)" >&2; \
	        exit 2; \
	    fi; \
	    echo "make: installing the Debian packages $(2) need, missing here:" $$missing; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

deps:
ifeq ($(NO_APT),)
	@$(call install_missing,$(DEBIAN_PACKAGES),the build and the tests)
else
	@echo "make: NO_APT=1: no Debian package installed; CMake finds MPI, hwloc and the rest on PATH and CMAKE_PREFIX_PATH"
endif

$(VENV)/.deps: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "scikit-build-core>=0.10" numpy matplotlib jinja2 rich "pyelftools>=0.29" pytest jsonschema "hypothesis>=6.100"
	touch $@

# The CPUs the native code is built for (docs/portability.md): this machine's (native, the
# default), or a level every node of a cluster has, e.g. `make install PERFATLAS_ARCH=x86-64-v3`
# (any GCC -march= value); or exact flags: `make install PERFATLAS_ARCH_FLAGS="-march=... -m..."`.
# Always passed, so that a build folder configured for another choice is not reused silently.
PERFATLAS_ARCH_FLAGS ?=
PERFATLAS_ARCH       ?= $(if $(PERFATLAS_ARCH_FLAGS),,native)
ARCH_DEFINES := -C cmake.define.PERFATLAS_ARCH=$(PERFATLAS_ARCH) \
                -C "cmake.define.PERFATLAS_ARCH_FLAGS=$(PERFATLAS_ARCH_FLAGS)"

# The build's log goes to BUILD_LOG; where the build fails, make says why in one sentence: the
# build's own ("perfatlas: no MPI was found: ...", CMakeLists.txt), else the compiler's first error.
# A site's own settings reach CMake through CMAKE_ARGS (docs/install.md).
BUILD_LOG ?= build/install.log
install: deps $(VENV)/.deps
	@mkdir -p $(dir $(BUILD_LOG))
	@echo "make: building the native code and the Python package (pip install .; log: $(BUILD_LOG))"
	@$(PY) -m pip install --no-build-isolation $(ARCH_DEFINES) . > $(BUILD_LOG) 2>&1 || { \
	    said=$$(sed -n '/^ *perfatlas: /,/^ *$$/p' $(BUILD_LOG) | tr -s ' \n' ' ' | sed 's/^ //; s/ $$//'); \
	    [ -n "$$said" ] || said=$$(grep -m1 -E 'error:|Error' $(BUILD_LOG)); \
	    echo "make: the build failed: $${said:-see the log} ($(BUILD_LOG))" >&2; exit 2; }

run: install
	$(VENV)/bin/perfatlas --db $(DB) run quick --out $(OUT)

test: install docs lint
	$(PY) -m pytest -q tests
	$(MAKE) --no-print-directory test-mpich

# Open MPI is the default MPI; the MPI benchmarks must also work with MPICH: build every
# executable against MPICH and run the MPI tests through its hydra launcher.
MPICH_BUILD := build/mpich
test-mpich: install
	cmake -S . -B $(MPICH_BUILD) -G Ninja -DMPI_C_COMPILER=/usr/bin/mpicc.mpich > /dev/null
	cmake --build $(MPICH_BUILD) > /dev/null
	PERFATLAS_MPIRUN=/usr/bin/mpiexec.mpich PERFATLAS_BIN_DIR=$(CURDIR)/$(MPICH_BUILD)/bin \
	    $(PY) -m pytest -q tests/test_comm.py tests/test_comm_launch.py tests/test_ipm.py tests/test_ipm_hostile.py tests/test_profile.py \
	        tests/test_ipm_calls.py tests/test_spmv.py tests/test_spmv_kernels.py tests/test_smi.py \
	        tests/test_build_parts.py tests/test_profile_mpi_family.py tests/test_ipm_sites.py tests/test_ipm_placement.py \
	        tests/test_app_sweep.py tests/test_app_hydro.py tests/test_profile_atlas.py tests/test_profile_one_sided.py

# Arm (aarch64), docs/arm64.md: an arm64 Debian 12 tree whose programs run through qemu-user
# emulation (ARM64_ROOT_TOOL, a script that makes the tree and runs commands in it with this
# checkout bound at its own path). The native code is cross-compiled here, at native speed, by
# Debian's aarch64-linux-gnu GCC with the tree as its sysroot (cross/aarch64-linux-gnu.cmake),
# into a wheel; that wheel and the aarch64 wheels of the Python packages are unpacked into the
# tree's .venv-arm64 by this machine's pip. Only ARM64_TESTS run emulated. Correctness only
# (emulation is 5-30x slower); not part of `make test`, whose time it would double.
ARM64_ROOT_TOOL ?= ../shared/tools/arm64-root
# This host's cross compilers (not in DEBIAN_PACKAGES: only test-arm64 needs them).
ARM64_CROSS_PACKAGES := gcc-aarch64-linux-gnu gfortran-aarch64-linux-gnu
# The tree's packages: the libraries the native code links (their headers for the cross
# compiler), the programs the tests run (hwloc's lstopo, numactl, mpirun, gcc) and Python.
ARM64_PACKAGES  := build-essential python3-venv hwloc libhwloc-dev libnuma-dev numactl \
                   openmpi-bin libopenmpi-dev libsuitesparse-dev libmumps-dev \
                   libopenblas-openmp-dev libpapi-dev libscalapack-openmpi-dev
ARM64_VENV   := .venv-arm64
ARM64_BUILD  := build/arm64-cross
ARM64_PYTHON := 3.11
ARM64_SITE   := $(ARM64_VENV)/lib/python$(ARM64_PYTHON)/site-packages
# The wheels the tree's Python 3.11 on glibc 2.36 can load: manylinux_2_17 to manylinux_2_36,
# and ours (linux_aarch64).
ARM64_WHEELS := --only-binary=:all: --implementation cp --python-version $(ARM64_PYTHON) \
                --platform linux_aarch64 --platform manylinux2014_aarch64 \
                $(foreach glibc,$(shell seq 17 36),--platform manylinux_2_$(glibc)_aarch64)
# A cross-compiler has no "native" CPU: the build is for the portable baseline (the SVE loops
# are compiled for SVE on their own and chosen at run time, docs/arm64.md).
ARM64_ARCH ?= armv8-a
# The shared Matrix Market test matrices (tests/shared_matrices.py) lie outside the checkout,
# which alone is bound into the tree: copied into the build folder for the tests there.
ARM64_MATRICES ?= ../shared/data/matrices
# The arm64 subset (docs/arm64.md says what each file covers and what is left to x86-64 runs):
# the native programs (all but three) and the Python side. ARM64_TESTS=tests ARM64_DESELECT=
# runs the whole suite. One test at a time: two MPI jobs at once on 2 emulated cores outlast
# their timeouts.
ARM64_TESTS ?= tests/test_arm64.py tests/test_native_topology.py tests/test_native_mem.py \
               tests/test_numa_counters.py tests/test_numa_matrix.py tests/test_noise.py \
               tests/test_example.py tests/test_comm.py tests/test_ipm.py tests/test_ipm_calls.py \
               tests/test_ipm_hostile.py tests/test_parbench.py tests/test_spsolve.py \
               tests/test_spmv.py tests/test_spmv_kernels.py tests/test_madbench.py \
               tests/test_app_sweep.py tests/test_smi.py::test_an_unknown_mode_is_one_sentence_and_status_2 \
               tests/test_smi.py::test_every_operation_is_exact_the_mutex_excludes_and_bad_calls_say_so \
               tests/test_app_hydro.py::test_sod_converges_to_the_exact_solution \
               tests/test_app_hydro.py::test_no_process_count_changes_the_state \
               tests/test_isa.py tests/test_stats.py tests/test_levels.py \
               tests/test_peakflops.py tests/test_core_to_core.py tests/test_loaded_latency.py \
               tests/test_calibrated_topology.py
# Left out under emulation, where each takes 10-60 s: what the Python side does alike on every
# architecture (storing, report sections, the topology-matching of core-to-core, madbench's and
# sweep's parameter checks in Python and C), and pa-ipm-fortran-more and pa-ipm-calls (over a
# minute per launch, past the profiler tests' 60 s timeout; pa-ipm-exact, -threads, -polls,
# -fortran-shapes and -fortran-f08 cover the profiler's C and Fortran wrappers).
ARM64_DESELECT ?= $(addprefix --deselect tests/,\
    test_ipm_calls.py::test_every_call_of_every_family_is_recorded_exactly \
    test_ipm_calls.py::test_sends_and_one_sided_transfers_fill_the_matrix \
    test_ipm.py::test_more_fortran_shapes_are_recorded_exactly \
    test_ipm.py::test_fortran_programs_check_themselves_without_the_profiler[pa-ipm-fortran-more] \
    test_madbench.py::test_profile_shows_the_four_phases \
    test_madbench.py::test_measure_stores_every_phase \
    test_madbench.py::test_the_files_are_removed_unless_kept \
    test_madbench.py::test_shared_io_and_throttling_give_the_same_results \
    test_madbench.py::test_bad_input_is_one_sentence_and_status_2 \
    test_madbench.py::test_measure_rejects_what_cannot_be_decomposed_in_one_sentence \
    test_app_sweep.py::test_measure_stores_a_sweep_run_under_mpirun \
    test_app_sweep.py::test_grind_time_and_parallel_efficiency_follow_their_definitions \
    test_app_sweep.py::test_a_centred_problem_is_symmetric \
    test_app_sweep.py::test_bad_input_is_one_sentence_and_status_2 \
    test_noise.py::test_the_noise_section_shows_slowdown_detours_spectrum_and_the_bsp_model \
    test_core_to_core.py::test_groups_recovered_from_a_matrix_generated_from_the_topology \
    test_calibrated_topology.py::test_hwloc_reads_back_the_stored_medians_in_its_units \
    test_peakflops.py::test_section_and_summary_table \
    test_spmv.py::test_measure_stores_results_and_fills_the_bandwidth_from_a_stored_triad \
    test_comm.py::test_pingpong_report_section)
# The tree's Python packages (aarch64 wheels), stamped in the venv like the tree's packages.
ARM64_PYPI := numpy matplotlib jinja2 rich pytest jsonschema hypothesis>=6.100
test-arm64: $(VENV)/.deps
	@[ -x "$(ARM64_ROOT_TOOL)" ] || { echo "test-arm64: $(ARM64_ROOT_TOOL) is missing (the script \
	that makes an arm64 Debian 12 tree run through qemu-user); name it with \
	make test-arm64 ARM64_ROOT_TOOL=/path/to/arm64-root" >&2; exit 2; }
	@$(call install_missing,$(ARM64_CROSS_PACKAGES),make test-arm64)
	@tree=$$($(ARM64_ROOT_TOOL) path); stamp="$$tree/.perfatlas-packages"; \
	if [ "$$(cat "$$stamp" 2>/dev/null)" != "$(ARM64_PACKAGES)" ]; then \
	    echo "test-arm64: installing the arm64 tree's packages in $$tree"; \
	    $(ARM64_ROOT_TOOL) setup $(ARM64_PACKAGES) && echo "$(ARM64_PACKAGES)" > "$$stamp"; \
	fi && \
	$(PYTHON) cross/relative_symlinks.py "$$tree" && \
	rm -rf $(ARM64_BUILD)/wheel && \
	echo "test-arm64: cross-compiling the native code for aarch64 into $(ARM64_BUILD)" && \
	PERFATLAS_SYSROOT="$$tree" _PYTHON_HOST_PLATFORM=linux-aarch64 CMAKE_BUILD_PARALLEL_LEVEL=2 \
	    $(PY) -m pip wheel -q --no-deps --no-build-isolation -w $(ARM64_BUILD)/wheel \
	    -C build-dir=$(ARM64_BUILD) -C cmake.args=--toolchain=$(CURDIR)/cross/aarch64-linux-gnu.cmake \
	    -C cmake.define.PERFATLAS_ARCH=$(ARM64_ARCH) .
	@[ -x $(ARM64_VENV)/bin/python ] || $(ARM64_ROOT_TOOL) run -- python3 -m venv --without-pip $(ARM64_VENV)
	@[ "$$(cat $(ARM64_VENV)/.deps 2>/dev/null)" = '$(ARM64_PYPI)' ] || { \
	    echo "test-arm64: unpacking the aarch64 wheels of $(ARM64_PYPI) into $(ARM64_VENV)" && \
	    $(PY) -m pip install -q --upgrade --target $(ARM64_SITE) $(ARM64_WHEELS) $(ARM64_PYPI:%='%') && \
	    echo '$(ARM64_PYPI)' > $(ARM64_VENV)/.deps; }
	@echo "test-arm64: unpacking perfatlas's aarch64 wheel into $(ARM64_VENV)"
	@$(PY) -m pip install -q --upgrade --no-deps --target $(ARM64_SITE) $(ARM64_WHEELS) \
	    $(ARM64_BUILD)/wheel/perfatlas-*.whl
	@rm -rf $(ARM64_SITE)/bin  # pip --target's scripts would start this host's Python
	@if [ -d "$(ARM64_MATRICES)" ]; then \
	    mkdir -p $(ARM64_BUILD)/matrices && cp -r "$(ARM64_MATRICES)/." $(ARM64_BUILD)/matrices/; fi
	@echo "test-arm64: running the tests in the arm64 tree (qemu-user)"
	@$(ARM64_ROOT_TOOL) run -- make --no-print-directory test-arm64-inside \
	    ARM64_TESTS="$(ARM64_TESTS)" ARM64_DESELECT='$(ARM64_DESELECT)'

# Run inside the arm64 tree by test-arm64.
test-arm64-inside:
	@[ "$$(uname -m)" = aarch64 ] || { echo "test-arm64-inside runs inside the arm64 tree: use make test-arm64" >&2; exit 2; }
	@$(if $(wildcard $(ARM64_BUILD)/matrices),PERFATLAS_MATRICES=$(CURDIR)/$(ARM64_BUILD)/matrices) \
	    $(ARM64_VENV)/bin/python -m pytest -q -p no:cacheprovider -rs --durations=15 \
	    $(ARM64_TESTS) $(ARM64_DESELECT)

# Style: ruff (Python: lint rules and format, pyproject.toml) and clang-format (C: .clang-format).
# `make format` applies both.
C_SOURCES = $(shell git ls-files 'native/*.c' 'native/*.h' 'bench/*.c' 2>/dev/null || \
                    find native bench -name '*.[ch]')  # a checkout without git: every C file
$(VENV)/.lint-deps: $(VENV)/.deps
	$(PY) -m pip install -q "ruff>=0.5"
	touch $@

lint: $(VENV)/.lint-deps
	$(VENV)/bin/ruff check -q src tests bench cross
	$(VENV)/bin/ruff format -q --check src tests bench cross
	@clang-format --dry-run --Werror $(C_SOURCES) && echo "lint: ruff and clang-format clean"

format: $(VENV)/.lint-deps
	$(VENV)/bin/ruff format src tests bench cross
	clang-format -i $(C_SOURCES)

# The documentation site (MkDocs Material): docs/ -> site/. --strict turns every warning into an
# error, and mkdocs.yml's validation makes a broken internal link or anchor a warning (not
# --quiet: it hides the warnings from --strict too). tests/test_docs.py runs this same command.
$(VENV)/.docs-deps: $(VENV)/.deps
	$(PY) -m pip install -q "mkdocs>=1.6" "mkdocs-material>=9.5"
	touch $@

docs: $(VENV)/.docs-deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Fuzzing (docs/safety/native.md): libFuzzer targets for the Matrix Market reader and the key=value
# parser, built with clang under AddressSanitizer and UndefinedBehaviorSanitizer. `make fuzz` runs
# each for FUZZ_SECONDS from the seed and regression corpora in tests/data/fuzz, keeping what it
# finds in FUZZ_BUILD/corpus and any crashing input in FUZZ_BUILD (crash-*, leak-*, timeout-*).
# `make fuzz-replay` builds the same targets with GCC's sanitizers and a plain main that replays
# files. tests/test_fuzz.py runs both briefly in `make test`.
FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 600
FUZZ_CC      ?= clang
FUZZ_INCLUDE := -Inative/common -Inative/app/spsolve
FUZZ_READER  := native/fuzz/matrix_market_fuzz.c native/app/spsolve/matrix_market.c \
                native/app/spsolve/sparse.c native/common/alloc.c native/common/args.c \
                native/common/files.c native/common/json.c
FUZZ_ARGS    := native/fuzz/args_fuzz.c native/common/alloc.c native/common/args.c \
                native/common/json.c
FUZZ_SANITIZE := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                 -fno-sanitize-recover=all
FUZZ_TARGETS := matrix_market args

fuzz-build: $(FUZZ_BUILD)/matrix_market_fuzz $(FUZZ_BUILD)/args_fuzz
$(FUZZ_BUILD)/matrix_market_fuzz: $(FUZZ_READER) native/app/spsolve/*.h native/common/*.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_SANITIZE) -fsanitize=fuzzer $(FUZZ_INCLUDE) -o $@ $(FUZZ_READER) -lm
$(FUZZ_BUILD)/args_fuzz: $(FUZZ_ARGS) native/common/*.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_SANITIZE) -fsanitize=fuzzer $(FUZZ_INCLUDE) -Wl,--wrap=exit -o $@ \
	    $(FUZZ_ARGS) -lm

fuzz-replay: $(FUZZ_BUILD)/gcc/matrix_market_replay $(FUZZ_BUILD)/gcc/args_replay
$(FUZZ_BUILD)/gcc/matrix_market_replay: $(FUZZ_READER) native/fuzz/replay_main.c
	@mkdir -p $(@D)
	gcc $(FUZZ_SANITIZE) $(FUZZ_INCLUDE) -o $@ $(FUZZ_READER) native/fuzz/replay_main.c -lm
$(FUZZ_BUILD)/gcc/args_replay: $(FUZZ_ARGS) native/fuzz/replay_main.c
	@mkdir -p $(@D)
	gcc $(FUZZ_SANITIZE) $(FUZZ_INCLUDE) -Wl,--wrap=exit -o $@ $(FUZZ_ARGS) \
	    native/fuzz/replay_main.c -lm

fuzz: deps fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	    echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_BUILD)/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 \
	        -max_len=4096 -artifact_prefix=$(FUZZ_BUILD)/$$t- $(FUZZ_BUILD)/corpus/$$t \
	        tests/data/fuzz/$$t tests/data/fuzz/regressions/$$t || exit 1; \
	done

# The peers of bench/ alone, never dependencies of perfatlas (docs/guide/peers.md): librsb
# (Debian), scipy and Intel MKL (PyPI; MKL has x86-64 wheels only) in the venv.
BENCH_DEBIAN_PACKAGES := librsb-dev
BENCH_PYTHON_PACKAGES := scipy $(if $(filter x86_64,$(shell uname -m)),mkl)
$(VENV)/.bench-deps: $(VENV)/.deps Makefile
	@$(call install_missing,$(BENCH_DEBIAN_PACKAGES),the peers of make bench)
	$(PY) -m pip install -q $(BENCH_PYTHON_PACKAGES)
	touch $@

# Every peer comparison (bench/peers.py's SCRIPTS), then one table of all their ratios;
# BENCH_DOC=docs/guide/peers.md also writes that table, the machine and the date into the page.
bench: install $(VENV)/.bench-deps
	$(PY) bench/peers.py $(if $(BENCH_DOC),--doc $(BENCH_DOC))

clean:
	rm -rf build site $(VENV) $(OUT)

# The install from nothing (.ci/fresh-machine, as root): a bookworm amd64 tree made with
# mmdebstrap that has only make; there a user without root must be refused and root's
# `make install` must bring everything, then perfatlas measures, profiles and reports.
.PHONY: test-fresh
test-fresh:
	.ci/fresh-machine
