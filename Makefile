# silt — thin wrapper over CMake. See README.md.
#
#   make / make build   bootstrap, configure and build ./build
#   make test           all ctest tests in ./build, unit tests under
#                       ASan+UBSan in ./build-asan, fuzz targets in ./build-fuzz
#                       (SILT_FUZZ_SECONDS per target, default 20)
#   make demo           build, then examples/demo.sh
#   make bench          build, then bench/run.sh
#   make ui-shots       build, run the browser test, copy a few of its screenshots to docs/img/
#   make install        install into $(PREFIX) (default /usr/local), honouring DESTDIR
#   make bootstrap      only scripts/bootstrap.sh
#   make clean          remove the build directories

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DEFAULT_GOAL := build
MAKEFLAGS += --no-print-directory

NPROC      := $(shell nproc 2>/dev/null || echo 2)
BUILD_TYPE ?= RelWithDebInfo
BUILD_DIRS := build build-asan build-fuzz

.PHONY: all build bootstrap test demo bench clean install ui-shots

all: build

bootstrap:
	@bash scripts/bootstrap.sh

build: bootstrap
	cmake -S . -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build build -j$(NPROC)

# One shell for the whole recipe (.ONESHELL): any failing step stops make.
# The summary counts the tests ctest reports ("... out of N") in all three runs.
test: build
	@total=0
	run_ctest() {
	  local log n
	  log=$$(mktemp)
	  echo "+ $$*"
	  if ! "$$@" 2>&1 | tee "$$log"; then
	    rm -f "$$log"
	    echo "make test: FAILED: $$*" >&2
	    exit 1
	  fi
	  n=$$(sed -n 's/.*tests failed out of \([0-9][0-9]*\).*/\1/p' "$$log" | tail -n 1)
	  rm -f "$$log"
	  total=$$((total + $${n:-0}))
	}
	run_ctest ctest --test-dir build -j$(NPROC) --output-on-failure
	echo "+ sanitizer build (build-asan)"
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DSILT_SANITIZE=ON -DCMAKE_C_COMPILER=clang
	cmake --build build-asan -j$(NPROC)
	run_ctest env ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan -L unit --output-on-failure
	echo "+ fuzz build (build-fuzz)"
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DSILT_FUZZ=ON -DCMAKE_C_COMPILER=clang
	cmake --build build-fuzz -j$(NPROC)
	run_ctest ctest --test-dir build-fuzz -L fuzz -j$(NPROC) --output-on-failure
	echo "make test: $$total passed, 0 failed"

PREFIX ?= /usr/local
install: build
	DESTDIR=$(DESTDIR) cmake --install build --prefix $(PREFIX)

demo: build
	bash examples/demo.sh

# The screenshots shown in README.md and docs/ui.md, from the browser test
# (tests/ui/), which renders every page at 1280x800 and 390x844.
UI_SHOTS := datasets-1280x800 overview-1280x800 data-1280x800 sql-chart-1280x800 history-390x844
ui-shots: build
	ctest --test-dir build -R '^ui\.test_ui$$' --output-on-failure
	mkdir -p docs/img
	for s in $(UI_SHOTS); do cp build/ui-shots/$$s.png docs/img/ui-$$s.png; done

bench: build
	bash bench/run.sh

clean:
	rm -rf $(BUILD_DIRS)
