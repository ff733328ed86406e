/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * debuginfo.h - where the debug information of an ELF file is, the way
 * distributions lay it out.
 *
 * A distribution ships its binaries stripped and their DWARF and full symbol
 * tables apart, found by the binary's GNU build-id (DEBUG_DIR/.build-id/xx/
 * rest.debug) or by the file name and CRC32 in its .gnu_debuglink section,
 * the same search gdb and elfutils make. Failing both, a debuginfod server
 * may have it. Some distributions (Fedora and its kin) also put a small
 * xz-compressed ELF image into the binary itself, MiniDebugInfo, whose
 * .symtab has the functions that .dynsym leaves out.
 *
 * Every path of the target is resolved under its root ("/proc/PID/root"), as
 * text: a process in a container sees its own /usr/lib/debug. Nothing is
 * realpath()ed on the host. Relative symbolic links in the target's tree
 * (Fedora's .build-id links) resolve inside it; an absolute one would be
 * followed from the host's root, as the kernel does below /proc/PID/root;
 * the build-id check still rejects what it finds there for another build.
 *
 * The functions hold no state but the lazily loaded libdebuginfod, loaded
 * once (thread-safe) and kept until exit: they may run concurrently on
 * different Elf handles.
 */
#ifndef PROFILER_DEBUGINFO_H
#define PROFILER_DEBUGINFO_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

struct debuginfo_opts {
	/*
	 * The target's root ("/proc/PID/root"), under which every path below
	 * is resolved with openat2(RESOLVE_IN_ROOT): the target's symbolic
	 * links, absolute ones and "..", resolve as they do for it and never
	 * lead out of its root. NULL, "" or "/" for the host, where a relative
	 * path is relative to our working directory.
	 */
	const char *root;
	/* Global debug directory, NULL for "/usr/lib/debug" (gdb's debug-file-directory). */
	const char *debug_dir;
};

/*
 * Find the separate debug file of the ELF @elf, which was opened from @path
 * (the path as the target sees it, under opts->root; NULL when unknown, which
 * leaves out step 2) and has GNU build-id @build_id (lowercase hex; NULL when
 * it has none, which leaves out steps 1 and 3). @opts may be NULL. Tries, in
 * order:
 *  1. ROOT/DEBUG_DIR/.build-id/xx/rest.debug;
 *  2. the .gnu_debuglink NAME, if the candidate's CRC32 matches the one
 *     recorded: ROOT/DIR/NAME, ROOT/DIR/.debug/NAME, ROOT/DEBUG_DIR/DIR/NAME,
 *     DIR being the directory of @path, never @path itself;
 *  3. debuginfod, only when $DEBUGINFOD_URLS is set and not empty, through
 *     libdebuginfod.so.1 loaded with dlopen(): neither the build nor the
 *     profiler need it otherwise.
 * Only regular ELF files are candidates, and one whose build-id differs from
 * @build_id (when both have one) is rejected.
 *
 * Returns an open O_RDONLY | O_CLOEXEC descriptor, which the caller closes,
 * and if @found is not NULL a malloc()ed copy of the path opened (on the
 * host, with the root prefix; debuginfod's cache file for step 3). Else a
 * negative errno: -ENOENT when nothing is found, -ENOMEM when out of memory.
 */
int debuginfo__find(Elf *elf, const char *path, const char *build_id,
		    const struct debuginfo_opts *opts, char **found);

/*
 * MiniDebugInfo: decompress the xz-compressed ELF image in @elf's
 * .gnu_debugdata section. The image is capped at 64 MiB and the decoder's
 * memory at 128 MiB, so a hostile file cannot exhaust ours.
 * Returns the image, which the caller frees, and its size in @size; NULL and
 * errno ENOENT when there is no such section, EINVAL when it does not
 * decompress (or its decoder passes 128 MiB), EFBIG when the image passes
 * 64 MiB, ENOMEM when out of memory.
 */
void *debuginfo__minidebuginfo(Elf *elf, size_t *size);

/* Does @elf carry DWARF line information itself (a non-empty .debug_line or .zdebug_line)? */
bool debuginfo__has_dwarf(Elf *elf);

/* Does @elf keep some of its DWARF in a dwz file (a .gnu_debugaltlink section)? */
bool debuginfo__has_altlink(Elf *elf);

#endif
