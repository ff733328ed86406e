# SPDX-License-Identifier: GPL-2.0-only
#
# bench/bench.mk: the benchmarks' rules, included by the top-level Makefile
# (make bench, bench-check, bench-baseline, bench-ci). See bench/README.md.

# What bench/callgrind runs (and so make bench-ci builds), then what only make bench needs.
BENCH_PROGRAMS := $(addprefix $(OUTPUT)/bench/,symbolize-bench dwarf-bench export-bench \
	unwind-bench)
BENCH_TOOLS := $(addprefix $(OUTPUT)/bench/,classic-profile spin-rate runstat)

bench: deps
	$(Q)$(MAKE) --no-print-directory all workloads $(BENCH_PROGRAMS) $(BENCH_TOOLS) \
		$(BENCH_PEERS)
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

# The classic stack-id-map design that bench/bpf-vs-classic measures ours
# against: built as bpf/profile.bpf.c is, with its own skeleton.
$(OUTPUT)/bench/classic.bpf.o: bench/classic.bpf.c bench/classic.h $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -I. \
		$(filter-out -I%/include,$(PKG_CFLAGS)) -Wall -Werror -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/bench/classic.skel.h: $(OUTPUT)/bench/classic.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name classic_bpf > $@

$(OUTPUT)/obj/bench/classic-profile.o: $(OUTPUT)/bench/classic.skel.h

# The target of bench/overhead, built as the workloads are (frame pointers
# everywhere), so that perf record -g and ours walk the same stacks.
$(OUTPUT)/bench/spin-rate: bench/spin-rate.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -I. $< -lpthread -o $@

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
BENCH_PEERS := $(OUTPUT)/bench/big-cxx $(OUTPUT)/bench/mid-c

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
