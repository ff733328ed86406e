# SPDX-License-Identifier: GPL-2.0-only
#
# fuzz/fuzz.mk: the fuzz targets' rules, included by the top-level Makefile
# (make fuzz). See fuzz/README.md.
#
# make fuzz        build every target with libFuzzer, ASan and UBSan in
#                  $(OUTPUT)-fuzz/ and run each for FUZZ_SECONDS (default 60)
# make fuzz-build  only build them: $(OUTPUT)-fuzz/fuzz/fuzz_*
#
# FUZZ_TARGETS=fuzz_perf_map limits both to some targets. A target's working
# corpus grows in $(OUTPUT)-fuzz/fuzz/corpus/TARGET/ (kept between runs);
# fuzz/corpus/TARGET/ holds the seeds committed with the code, and crashes
# land in $(OUTPUT)-fuzz/fuzz/artifacts/.

.PHONY: fuzz fuzz-build fuzz-targets fuzz-seeds

FUZZ_TARGETS ?= $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 60
FUZZ_OUTPUT := $(OUTPUT)-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
# The library is instrumented for coverage (fuzzer-no-link); only the
# targets link libFuzzer's main().
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_LIBFUZZER_FLAGS ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

# The longest input worth trying, per target: a few maps or perf-map lines;
# a few address lines, past the 4 KiB at which a line stops being one; a
# small ELF file (the seeds are 2 to 20 KiB).
FUZZ_MAX_LEN_fuzz_proc_maps := 4096
FUZZ_MAX_LEN_fuzz_perf_map := 4096
FUZZ_MAX_LEN_fuzz_symbolize_addresses := 16384
FUZZ_MAX_LEN_fuzz_line_table := 8192
FUZZ_MAX_LEN_fuzz_die_reader := 8192
FUZZ_MAX_LEN_fuzz_elf := 32768
FUZZ_MAX_LEN_fuzz_event := 4096
FUZZ_MAX_LEN_fuzz_kallsyms := 4096
FUZZ_MAX_LEN_fuzz_cmdline := 4096
FUZZ_MAX_LEN_fuzz_compressed := 4096
FUZZ_MAX_LEN_fuzz_serve_request := 4096
FUZZ_MAX_LEN_fuzz_python_lines := 2048
FUZZ_MAX_LEN_fuzz_unwind_cache := 4096

fuzz-build: deps
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(FUZZ_OUTPUT) CC=$(CLANG) \
		CFLAGS="$(FUZZ_CFLAGS)" LDFLAGS="$(FUZZ_SAN)" fuzz-targets

# $(call fuzz_run,TARGET): run TARGET for FUZZ_SECONDS, its output in
# $(FUZZ_OUTPUT)/fuzz/TARGET.log; show the last lines when it finds something.
define fuzz_run
	$(Q)mkdir -p $(FUZZ_OUTPUT)/fuzz/corpus/$(1) $(FUZZ_OUTPUT)/fuzz/seeds/$(1) \
		$(FUZZ_OUTPUT)/fuzz/artifacts
	@echo "  FUZZ     $(1) for $(FUZZ_SECONDS) s"
	$(Q)$(FUZZ_OUTPUT)/fuzz/$(1) $(FUZZ_LIBFUZZER_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
		-max_len=$(or $(FUZZ_MAX_LEN_$(1)),4096) \
		-artifact_prefix=$(FUZZ_OUTPUT)/fuzz/artifacts/$(1)- \
		$(FUZZ_OUTPUT)/fuzz/corpus/$(1) fuzz/corpus/$(1) $(FUZZ_OUTPUT)/fuzz/seeds/$(1) \
		2>$(FUZZ_OUTPUT)/fuzz/$(1).log || { tail -n 60 $(FUZZ_OUTPUT)/fuzz/$(1).log; exit 1; }
	$(Q)grep -E '^#[0-9]+[[:space:]]+DONE' $(FUZZ_OUTPUT)/fuzz/$(1).log | tail -n 1

endef

fuzz: fuzz-build
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t)))

# Run inside the fuzz build directory (OUTPUT=$(OUTPUT)-fuzz, CC=clang).
fuzz-targets: $(addprefix $(OUTPUT)/fuzz/,$(FUZZ_TARGETS)) $(OUTPUT)/fuzz/seeds.stamp

# Seeds too big to commit: small ELF files, built (fuzz/make-seeds).
$(OUTPUT)/fuzz/seeds.stamp: fuzz/make-seeds fuzz/seed.c
	$(call msg,SEEDS,$(@D)/seeds)
	$(Q)rm -rf $(@D)/seeds
	$(Q)fuzz/make-seeds $(@D)/seeds
	$(Q)touch $@

# Not intermediate files to delete: relinking would rebuild them.
.SECONDARY: $(patsubst %,$(OUTPUT)/obj/fuzz/%.o,$(FUZZ_TARGETS))

# Objects before the library, whichever rule named them.
$(OUTPUT)/fuzz/%: $(OUTPUT)/obj/fuzz/%.o $(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $(LDFLAGS) $(filter %.o,$^) $(filter %.a,$^) \
		$(LDLIBS) -o $@

# The address-line target exercises cli/symbolize.c, which the library lacks.
$(OUTPUT)/fuzz/fuzz_symbolize_addresses: $(OUTPUT)/obj/cli/symbolize.o $(OUTPUT)/obj/cli/cache_dir.o

# tests/unit/test_fuzz_inputs.c replays the address-line target's inputs too.
$(OUTPUT)/tests/unit-tests: $(OUTPUT)/obj/cli/symbolize.o $(OUTPUT)/obj/cli/cache_dir.o
