/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * demangle.h - the human-readable names of C++ and Rust linker names.
 *
 * A thin layer over libiberty's cplus_demangle(), the demangler of binutils
 * (c++filt, addr2line) and of perf. It handles C++ (Itanium ABI, with GCC's
 * clone suffixes: "_Z3fooi.constprop.0" reads "foo(int) [clone .constprop.0]")
 * and Rust, both the v0 scheme ("_R...") and the legacy one
 * ("_ZN...17h<hash>E"), whose hash is dropped as rustfilt and `c++filt -i` do.
 * The output is that of `c++filt -i`.
 *
 * libiberty keeps its recursion limit, as c++filt does by default: it refuses
 * C++ names longer than 1024 characters (they stay mangled) because its
 * parser keeps about 70 bytes of stack per input character; lifting the limit
 * lets an 8 KiB name overflow a 1 MiB thread stack. Such names are rare (8 of
 * the 670,000 dynamic symbols in a Debian 12 /usr/lib with LLVM installed).
 * Even so, the worst names it accepts (a thousand nested pointer types) take
 * up to half a MiB of stack: call it from threads with glibc's default 8 MiB.
 *
 * No state is kept: demangle() may be called from several threads at once.
 */
#ifndef PROFILER_DEMANGLE_H
#define PROFILER_DEMANGLE_H

/*
 * The human-readable name of linker name @name, in a malloc'd string the
 * caller frees; NULL when @name is NULL, is not mangled (plain C, JIT names)
 * or does not demangle.
 */
char *demangle(const char *name);

#endif
