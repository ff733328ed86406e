# SPDX-License-Identifier: GPL-2.0-only
#
# make            build build/profiler
# make demo       install missing dependencies, build, profile a bundled workload
# make test       install missing dependencies, build, run unit and end-to-end tests
# make bench      run the benchmarks, write bench/results.json (Bencher Metric Format)
# make asan       the test suite under AddressSanitizer and UBSan (build-asan/)
# make install    PREFIX=/usr/local DESTDIR=
#
# V=1 shows full command lines. OUTPUT=dir puts every build product there.
# VMLINUX_H=path uses a given vmlinux.h instead of generating one from
# /sys/kernel/btf/vmlinux (BTF=path names another BTF file to generate from).

OUTPUT ?= build
PREFIX ?= /usr/local
DESTDIR ?=

CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
PKG_CONFIG ?= pkg-config
BTF ?= /sys/kernel/btf/vmlinux

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')

PKGS := libbpf libelf libdw libprotobuf-c zlib
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror
override CPPFLAGS += -D_GNU_SOURCE -I. -I$(OUTPUT) -I$(OUTPUT)/proto $(PKG_CFLAGS)
override CFLAGS += -std=gnu11 -MMD -MP
LDLIBS += $(PKG_LIBS) -lpthread

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.PHONY: all clean demo test unit-tests bench deps install uninstall format-check format asan \
	workloads fixtures

all: $(OUTPUT)/profiler

# --- generated sources -------------------------------------------------------

ifdef VMLINUX_H
$(OUTPUT)/vmlinux.h: $(VMLINUX_H) | $(OUTPUT)
	$(call msg,CP,$@)
	$(Q)cp $< $@
else
$(OUTPUT)/vmlinux.h: | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)test -r $(BTF) || { echo "no BTF at $(BTF): set BTF=file or VMLINUX_H=file" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(BTF) format c > $@
endif

$(OUTPUT)/profile.bpf.o: bpf/profile.bpf.c bpf/profile.h $(OUTPUT)/vmlinux.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) -I. \
		$(filter-out -I%/include,$(PKG_CFLAGS)) -Wall -Werror -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/profile.skel.h: $(OUTPUT)/profile.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profile_bpf > $@

$(OUTPUT)/proto/profile.pb-c.c $(OUTPUT)/proto/profile.pb-c.h &: proto/profile.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUTPUT)/proto $<

GENERATED := $(OUTPUT)/profile.skel.h $(OUTPUT)/proto/profile.pb-c.h

# --- the profiler ------------------------------------------------------------

LIB_SRCS := $(wildcard common/*.c collector/*.c symbolize/*.c export/*.c)
LIB_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS)) $(OUTPUT)/obj/proto/profile.pb-c.o
CLI_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(wildcard cli/*.c))

$(OUTPUT)/obj/%.o: %.c | $(GENERATED)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

# Generated code is not ours to keep warning-free.
$(OUTPUT)/obj/proto/profile.pb-c.o: $(OUTPUT)/proto/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/libprofiler.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/profiler: $(CLI_OBJS) $(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUTPUT):
	$(Q)mkdir -p $@

# --- tests -------------------------------------------------------------------

UNIT_OBJS := $(patsubst %.c,$(OUTPUT)/obj/%.o,$(wildcard tests/unit/*.c))

# The command-line parser is tested too; main() is not.
$(OUTPUT)/tests/unit-tests: $(UNIT_OBJS) $(OUTPUT)/obj/cli/options.o $(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ELF fixtures for the symbolizer's unit tests: the same code as a PIE, a
# non-PIE executable and a shared library.
FIXTURES := $(OUTPUT)/fixtures/symbols-pie $(OUTPUT)/fixtures/symbols-nopie \
	$(OUTPUT)/fixtures/libsymbols.so $(OUTPUT)/fixtures/symbols-stripped
FIXTURE_CFLAGS := -O1 -g -fno-inline

$(OUTPUT)/fixtures/symbols-pie: tests/fixtures/symbols.c tests/loaded_object.h
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -fPIE -pie -Wl,--build-id $< -o $@

$(OUTPUT)/fixtures/symbols-nopie: tests/fixtures/symbols.c tests/loaded_object.h
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -fno-pie -no-pie -Wl,--build-id $< -o $@

$(OUTPUT)/fixtures/libsymbols.so: tests/fixtures/libsymbols.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -fPIC -shared -Wl,--build-id $< -o $@

$(OUTPUT)/fixtures/symbols-stripped: $(OUTPUT)/fixtures/symbols-pie
	$(call msg,STRIP,$@)
	$(Q)strip -s $< -o $@

fixtures: $(FIXTURES)

# Workloads for the end-to-end tests: frame pointers everywhere, including
# leaf functions, so frame-pointer unwinding sees every caller. clang 14
# shrink-wraps a leaf's frame setup past its hot loop even with
# -mno-omit-leaf-frame-pointer, which hides the caller: turn that off too.
WORKLOAD_CC := $(CLANG)
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -mllvm -enable-shrink-wrap=false -Wall -Werror
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(filter-out \
	tests/workloads/lib%.c,$(wildcard tests/workloads/*.c)))

$(OUTPUT)/workloads/libhot.so: tests/workloads/libhot.c
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -fPIC -shared $< -o $@

$(OUTPUT)/workloads/uses_lib: tests/workloads/uses_lib.c $(OUTPUT)/workloads/libhot.so
	$(call msg,WORKLOAD,$@)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) $< -L$(OUTPUT)/workloads -lhot \
		-Wl,-rpath,'$$ORIGIN' -o $@

$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) $< -lpthread -o $@

workloads: $(WORKLOADS)

unit-tests: $(OUTPUT)/tests/unit-tests fixtures
	$(Q)FIXTURES=$(OUTPUT)/fixtures $(OUTPUT)/tests/unit-tests

# `make test` is the README's test command and what CI runs: it installs what
# is missing, builds, and runs every test through tests/run, which ends with
# an "N passed, N failed, N skipped" line.
test: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/tests/unit-tests fixtures workloads
	$(Q)OUTPUT=$(OUTPUT) tests/run

demo: deps
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)OUTPUT=$(OUTPUT) tools/demo

bench: deps
	$(Q)$(MAKE) --no-print-directory all workloads $(OUTPUT)/bench/symbolize-bench
	$(Q)OUTPUT=$(OUTPUT) bench/run

$(OUTPUT)/bench/%: $(OUTPUT)/obj/bench/%.o $(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The whole test suite with AddressSanitizer and UBSan, in its own build directory.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: deps
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)-asan CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="$(ASAN_FLAGS)" all $(OUTPUT)-asan/tests/unit-tests fixtures workloads
	$(Q)OUTPUT=$(OUTPUT)-asan ASAN_OPTIONS=detect_leaks=1 tests/run

deps:
	$(Q)tools/install-deps

# --- install -----------------------------------------------------------------

install: $(OUTPUT)/profiler
	install -D -m 0755 $(OUTPUT)/profiler $(DESTDIR)$(PREFIX)/bin/profiler
	install -D -m 0644 doc/profiler.1 $(DESTDIR)$(PREFIX)/share/man/man1/profiler.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/profiler $(DESTDIR)$(PREFIX)/share/man/man1/profiler.1

FORMATTED := $(wildcard $(addsuffix /*.[ch],bpf cli collector common export symbolize bench) \
	tests/*.h tests/*/*.[ch])

format-check:
	$(Q)clang-format --dry-run --Werror $(FORMATTED)

format:
	$(Q)clang-format -i $(FORMATTED)

clean:
	rm -rf $(OUTPUT) $(OUTPUT)-asan

-include $(shell find $(OUTPUT)/obj -name '*.d' 2>/dev/null)
