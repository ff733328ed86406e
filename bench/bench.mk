# SPDX-License-Identifier: GPL-2.0-only
#
# bench/bench.mk: the benchmarks' rules, included by the top-level Makefile
# (make bench, bench-check, bench-baseline, bench-ci). See bench/README.md.

BENCH_PROGRAMS := $(addprefix $(OUTPUT)/bench/,symbolize-bench dwarf-bench export-bench)

bench: deps
	$(Q)$(MAKE) --no-print-directory all workloads $(BENCH_PROGRAMS) $(BENCH_PEERS)
	$(Q)OUTPUT=$(OUTPUT) bench/run

# The regression gate: instruction counts and ours-to-fastest ratios (bench/check).
bench-check:
	$(Q)bench/check bench/results.json bench/baseline.json

# Deliberately: the last make bench's figures become the ones to hold to.
bench-baseline:
	$(Q)cp bench/results.json bench/baseline.json

# The gate's deterministic half, fast enough for CI: instruction counts only.
bench-ci: deps
	$(Q)$(MAKE) --no-print-directory $(BENCH_PROGRAMS) $(OUTPUT)/bench/mid-c
	$(Q)OUTPUT=$(OUTPUT) bench/callgrind --json $(OUTPUT)/bench/callgrind.json
	$(Q)bench/check --measure instructions $(OUTPUT)/bench/callgrind.json bench/baseline.json

$(OUTPUT)/bench/%: $(OUTPUT)/obj/bench/%.o $(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# What "symbolize vs peers" symbolizes: programs that bench/gen-cxx writes,
# built with -O2 -g: a C++ one with tens of MB of DWARF (5 minutes of CPU:
# use make -j) and a C one with a few MB.
BENCH_CXX ?= g++
BENCH_CC ?= gcc
BENCH_CXX_TUS := 20
BENCH_C_TUS := 48
BENCH_CXX_SRC := $(patsubst %,$(OUTPUT)/bench/cxx-src/tu%.cc,$(shell seq $(BENCH_CXX_TUS))) \
	$(OUTPUT)/bench/cxx-src/main.cc
BENCH_C_SRC := $(patsubst %,$(OUTPUT)/bench/c-src/tu%.c,$(shell seq $(BENCH_C_TUS))) \
	$(OUTPUT)/bench/c-src/main.c
BENCH_PEERS := $(OUTPUT)/bench/big-cxx $(OUTPUT)/bench/mid-c $(OUTPUT)/bench/runstat

$(BENCH_CXX_SRC) $(OUTPUT)/bench/cxx-src/bench.h &: bench/gen-cxx
	$(call msg,GEN,$(OUTPUT)/bench/cxx-src)
	$(Q)bench/gen-cxx cxx $(OUTPUT)/bench/cxx-src $(BENCH_CXX_TUS)

$(BENCH_C_SRC) $(OUTPUT)/bench/c-src/bench.h &: bench/gen-cxx
	$(call msg,GEN,$(OUTPUT)/bench/c-src)
	$(Q)bench/gen-cxx c $(OUTPUT)/bench/c-src $(BENCH_C_TUS)

$(OUTPUT)/bench/cxx-src/%.o: $(OUTPUT)/bench/cxx-src/%.cc $(OUTPUT)/bench/cxx-src/bench.h
	$(call msg,CXX,$@)
	$(Q)$(BENCH_CXX) -O2 -g -c $< -o $@

$(OUTPUT)/bench/c-src/%.o: $(OUTPUT)/bench/c-src/%.c $(OUTPUT)/bench/c-src/bench.h
	$(call msg,CC,$@)
	$(Q)$(BENCH_CC) -O2 -g -c $< -o $@

$(OUTPUT)/bench/big-cxx: $(BENCH_CXX_SRC:.cc=.o)
	$(call msg,LINK,$@)
	$(Q)$(BENCH_CXX) -O2 -g -Wl,--build-id $^ -o $@

$(OUTPUT)/bench/mid-c: $(BENCH_C_SRC:.c=.o)
	$(call msg,LINK,$@)
	$(Q)$(BENCH_CC) -O2 -g -Wl,--build-id $^ -o $@
