# perfatlas: `make run` measures this machine, `make test` runs the test suite.
# Both install what is missing on a fresh Debian 12 machine first.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DB     ?= perfatlas.db
OUT    ?= perfatlas-out

# Debian packages the build, the measurements and the tests need.
DEBIAN_PACKAGES := build-essential cmake ninja-build pkg-config python3-venv python3-dev \
                   libhwloc-dev hwloc libnuma-dev numactl libsqlite3-dev \
                   chromium likwid \
                   openmpi-bin libopenmpi-dev mpich libmpich-dev iproute2 hpcc \
                   libsuitesparse-dev libmumps-dev libmetis-dev libopenblas-openmp-dev libpapi-dev \
                   libscalapack-openmpi-dev clang-format qemu-user \
                   clang libclang-rt-14-dev

.PHONY: all deps install run test test-mpich docs bench lint format clean fuzz fuzz-build fuzz-replay
all: install

deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:" $$missing; \
	    SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(VENV)/.deps: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "scikit-build-core>=0.10" numpy matplotlib jinja2 rich pytest jsonschema "hypothesis>=6.100"
	touch $@

# The CPUs the native code is built for (docs/portability.md): this machine's (native, the
# default), or a level every node of a cluster has, e.g. `make install PERFATLAS_ARCH=x86-64-v3`
# (any GCC -march= value); or exact flags: `make install PERFATLAS_ARCH_FLAGS="-march=... -m..."`.
# Always passed, so that a build folder configured for another choice is not reused silently.
PERFATLAS_ARCH_FLAGS ?=
PERFATLAS_ARCH       ?= $(if $(PERFATLAS_ARCH_FLAGS),,native)
ARCH_DEFINES := -C cmake.define.PERFATLAS_ARCH=$(PERFATLAS_ARCH) \
                -C "cmake.define.PERFATLAS_ARCH_FLAGS=$(PERFATLAS_ARCH_FLAGS)"

install: deps $(VENV)/.deps
	$(PY) -m pip install -q --no-build-isolation $(ARCH_DEFINES) .

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
	        tests/test_ipm_calls.py tests/test_spmv.py tests/test_app_sweep.py

# Style: ruff (Python: lint rules and format, pyproject.toml) and clang-format (C: .clang-format).
# `make format` applies both.
C_SOURCES = $(shell git ls-files 'native/*.c' 'native/*.h' 'bench/*.c' 2>/dev/null)
$(VENV)/.lint-deps: $(VENV)/.deps
	$(PY) -m pip install -q "ruff>=0.5"
	touch $@

lint: $(VENV)/.lint-deps
	$(VENV)/bin/ruff check -q src tests bench
	$(VENV)/bin/ruff format -q --check src tests bench
	@clang-format --dry-run --Werror $(C_SOURCES) && echo "lint: ruff and clang-format clean"

format: $(VENV)/.lint-deps
	$(VENV)/bin/ruff format src tests bench
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
FUZZ_INCLUDE := -Inative/common -Inative/apps/spsolve
FUZZ_READER  := native/fuzz/matrix_market_fuzz.c native/apps/spsolve/matrix_market.c \
                native/apps/spsolve/sparse.c native/common/alloc.c native/common/args.c \
                native/common/json.c
FUZZ_ARGS    := native/fuzz/args_fuzz.c native/common/alloc.c native/common/args.c \
                native/common/json.c
FUZZ_SANITIZE := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                 -fno-sanitize-recover=all
FUZZ_TARGETS := matrix_market args

fuzz-build: $(FUZZ_BUILD)/matrix_market_fuzz $(FUZZ_BUILD)/args_fuzz
$(FUZZ_BUILD)/matrix_market_fuzz: $(FUZZ_READER) native/apps/spsolve/*.h native/common/*.h
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

bench: install
	$(PY) bench/likwid_compare.py
	$(PY) bench/peakflops_compare.py
	$(PY) bench/hpcc_compare.py
	$(PY) bench/spsolve_overhead.py

clean:
	rm -rf build site $(VENV) $(OUT)
