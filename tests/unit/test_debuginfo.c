// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of symbolize/debuginfo on the fixtures the Makefile builds under
 * $FIXTURES/debuginfo from tests/fixtures/debuglink.c:
 *   prog.full, other.full          the program, and a build with another build-id
 *   prog.debug, prog.stripped      objcopy --only-keep-debug, strip --strip-debug
 *   next/prog                      debuglink to prog.debug beside it
 *   dotdebug/prog                  debuglink to .debug/prog.debug, behind a
 *                                  directory called prog.debug
 *   global/prog                    debuglink, the file under global-debug/ABSDIR/
 *   buildid-debug/                 a debug directory with prog's .build-id link
 *   badcrc/prog                    debuglink to a prog.debug with one byte changed
 *   wrongid/prog, wrongid-debug/   other.debug under prog's debuglink and build-id
 *   root/                          a target's root: usr/bin/{prog,other}, with
 *                                  usr/lib/debug/usr/bin/prog.debug and other's
 *                                  .build-id link
 *   mini, mini-corrupt, mini-truncated
 *                                  MiniDebugInfo, good, with a flipped byte, cut short
 * No test reads the host's /usr/lib/debug or asks a debuginfod server.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "symbolize/debuginfo.h"
#include "symbolize/elf_symtab.h"
#include "test.h"

/* A debug directory that does not exist: the steps that need none find nothing there. */
#define NO_DEBUG_DIR "/nonexistent/profiler-test/debug"

struct elf_file {
	char path[PATH_MAX];
	char build_id[2 * 64 + 1];
	int fd;
	Elf *elf;
};

/* Open fixture @name; 0 or -1. */
static int elf_file_open(struct elf_file *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", test__fixture(name));
	elf_version(EV_CURRENT);
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF ||
	    elf_file__read_build_id(f->fd, f->build_id, sizeof(f->build_id))) {
		elf_end(f->elf);
		close(f->fd);
		return -1;
	}
	return 0;
}

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* Fixture @name as an absolute path, as a debug directory mirrors it; 0 or -1. */
static int abs_fixture(const char *name, char *buf, size_t size)
{
	const char *rel = test__fixture(name);
	char cwd[PATH_MAX];
	int n;

	if (rel[0] == '/')
		n = snprintf(buf, size, "%s", rel);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(buf, size, "%s/%s", cwd, rel);
	else
		return -1;
	return n >= 0 && (size_t)n < size ? 0 : -1;
}

/*
 * Is @fd, as debuginfo__find() returned it, open read-only and close-on-exec
 * on the file at @path (a symbolic link is followed) with build-id @build_id?
 */
static bool is_debug_file(int fd, const char *path, const char *build_id)
{
	char id[2 * 64 + 1];
	struct stat a, b;
	int fl = fcntl(fd, F_GETFL);

	return fd >= 0 && !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && fl >= 0 && (fl & O_ACCMODE) == O_RDONLY &&
	       !(fl & O_NONBLOCK) && (fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
	       !elf_file__read_build_id(fd, id, sizeof(id)) && !strcmp(id, build_id);
}

/*
 * Find the debug file of fixture @name, opened as the target at @target_path,
 * which must be found at @expect (NULL: nothing must be found).
 */
static void check_find(const char *name, const char *target_path, const struct debuginfo_opts *opts,
		       const char *expect)
{
	struct elf_file f;
	char *found = (char *)"unset";
	int fd;

	CHECK(elf_file_open(&f, name) == 0);
	errno = 0;
	fd = debuginfo__find(f.elf, target_path, f.build_id, opts, &found);
	if (expect) {
		if (fd >= 0) {
			CHECK(is_debug_file(fd, expect, f.build_id));
			close(fd);
		}
		CHECK(fd >= 0);
		CHECK_STR(found, expect);
	} else {
		if (fd >= 0)
			close(fd);
		CHECK(fd == -ENOENT);
		CHECK(!found);
	}
	free(found);
	elf_file_close(&f);
}

/* --- .gnu_debuglink ----------------------------------------------------- */

TEST(debuginfo_debuglink_beside)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	char path[PATH_MAX], expect[PATH_MAX];

	snprintf(path, sizeof(path), "%s", test__fixture("debuginfo/next/prog"));
	snprintf(expect, sizeof(expect), "%s", test__fixture("debuginfo/next/prog.debug"));
	check_find("debuginfo/next/prog", path, &opts, expect);
	if (test__failed())
		return;
	/* Seen by a target that mapped prog.debug itself, the debuglink leads back to it. */
	check_find("debuginfo/next/prog", expect, &opts, NULL);
}

/*
 * A FIFO where the debuglink leads is passed over without opening it for
 * good (which would wait for a writer): made here, in a directory whose
 * prog and .debug/prog.debug are symbolic links to next/.
 */
TEST(debuginfo_debuglink_fifo)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	char dir[] = "/tmp/profiler-test-XXXXXX", prog[64], dot[64], fifo[64], link[64];
	char target[PATH_MAX];

	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(dot, sizeof(dot), "%s/.debug", dir);
	snprintf(fifo, sizeof(fifo), "%s/prog.debug", dir);
	snprintf(link, sizeof(link), "%s/.debug/prog.debug", dir);
	if (abs_fixture("debuginfo/next/prog", target, sizeof(target)) || symlink(target, prog) ||
	    abs_fixture("debuginfo/next/prog.debug", target, sizeof(target)) || mkdir(dot, 0700) ||
	    symlink(target, link) || mkfifo(fifo, 0600))
		test__fail(__FILE__, __LINE__, "cannot make %s: %s", dir, strerror(errno));
	else
		check_find("debuginfo/next/prog", prog, &opts, link);
	unlink(link);
	unlink(fifo);
	rmdir(dot);
	unlink(prog);
	rmdir(dir);
}

/*
 * A user's program whose debuglink leads, through a link she made, to a
 * file of root's that she could not read: passed over; once it is
 * world-readable, found.
 */
TEST(debuginfo_debuglink_to_unreadable)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	char dir[] = "/tmp/profiler-test-XXXXXX", prog[64], secret[64], link[64];

	if (geteuid())
		SKIP("needs root, to give the program to another user");
	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(secret, sizeof(secret), "%s/secret.debug", dir);
	snprintf(link, sizeof(link), "%s/prog.debug", dir);
	if (test__copy_file(test__fixture("debuginfo/next/prog"), prog, 0755) ||
	    chown(prog, 65534, 65534) ||
	    test__copy_file(test__fixture("debuginfo/next/prog.debug"), secret, 0600) ||
	    symlink(secret, link)) {
		test__fail(__FILE__, __LINE__, "cannot make %s: %s", dir, strerror(errno));
	} else {
		check_find("debuginfo/next/prog", prog, &opts, NULL);
		if (!chmod(secret, 0644))
			check_find("debuginfo/next/prog", prog, &opts, link);
	}
	unlink(link);
	unlink(secret);
	unlink(prog);
	rmdir(dir);
}

/* The directory called prog.debug beside it is no candidate; .debug/prog.debug is. */
TEST(debuginfo_debuglink_dot_debug)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	char path[PATH_MAX], expect[PATH_MAX];

	snprintf(path, sizeof(path), "%s", test__fixture("debuginfo/dotdebug/prog"));
	snprintf(expect, sizeof(expect), "%s",
		 test__fixture("debuginfo/dotdebug/.debug/prog.debug"));
	check_find("debuginfo/dotdebug/prog", path, &opts, expect);
}

/* DEBUG_DIR/DIR/NAME, DIR being the absolute directory of the file. */
TEST(debuginfo_debuglink_debug_dir)
{
	char path[PATH_MAX], dir[PATH_MAX], debug_dir[PATH_MAX], expect[3 * PATH_MAX];
	struct debuginfo_opts opts = { .debug_dir = debug_dir };

	CHECK(abs_fixture("debuginfo/global/prog", path, sizeof(path)) == 0);
	CHECK(abs_fixture("debuginfo/global", dir, sizeof(dir)) == 0);
	CHECK(abs_fixture("debuginfo/global-debug", debug_dir, sizeof(debug_dir)) == 0);
	snprintf(expect, sizeof(expect), "%s%s/prog.debug", debug_dir, dir);
	check_find("debuginfo/global/prog", path, &opts, expect);
}

/* A debug file with the right build-id but one byte changed: its CRC gives it away. */
TEST(debuginfo_debuglink_bad_crc)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	char path[PATH_MAX], id[2 * 64 + 1];
	struct elf_file prog;
	int fd;

	CHECK(elf_file_open(&prog, "debuginfo/prog.full") == 0);
	elf_file_close(&prog);
	fd = open(test__fixture("debuginfo/badcrc/prog.debug"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(elf_file__read_build_id(fd, id, sizeof(id)) == 0);
	close(fd);
	CHECK_STR(id, prog.build_id);
	snprintf(path, sizeof(path), "%s", test__fixture("debuginfo/badcrc/prog"));
	check_find("debuginfo/badcrc/prog", path, &opts, NULL);
}

/* Another build's debug file, under both the debuglink name (CRC right) and the build-id. */
TEST(debuginfo_wrong_build_id)
{
	char path[PATH_MAX], debug_dir[PATH_MAX], expect[PATH_MAX];
	struct debuginfo_opts opts = { .debug_dir = debug_dir };
	struct elf_file f;
	char *found = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s", test__fixture("debuginfo/wrongid/prog"));
	snprintf(debug_dir, sizeof(debug_dir), "%s", test__fixture("debuginfo/wrongid-debug"));
	check_find("debuginfo/wrongid/prog", path, &opts, NULL);
	if (test__failed())
		return;
	/* Without a build-id to compare, the debuglink's CRC alone accepts it. */
	snprintf(expect, sizeof(expect), "%s", test__fixture("debuginfo/wrongid/prog.debug"));
	CHECK(elf_file_open(&f, "debuginfo/wrongid/prog") == 0);
	fd = debuginfo__find(f.elf, path, NULL, &opts, &found);
	elf_file_close(&f);
	CHECK(fd >= 0);
	close(fd);
	CHECK_STR(found, expect);
	free(found);
}

/* --- build-id ----------------------------------------------------------- */

/*
 * Through a relative symbolic link, as Fedora's; found first, although
 * next/prog's debuglink leads to a good file too.
 */
TEST(debuginfo_build_id)
{
	char debug_dir[PATH_MAX], expect[2 * PATH_MAX], path[PATH_MAX];
	struct debuginfo_opts opts = { .debug_dir = debug_dir };
	struct elf_file f;
	int fd;

	snprintf(debug_dir, sizeof(debug_dir), "%s", test__fixture("debuginfo/buildid-debug"));
	CHECK(elf_file_open(&f, "debuginfo/prog.stripped") == 0);
	snprintf(expect, sizeof(expect), "%s/.build-id/%.2s/%s.debug", debug_dir, f.build_id,
		 f.build_id + 2);
	elf_file_close(&f);
	check_find("debuginfo/prog.stripped", NULL, &opts, expect);
	if (test__failed())
		return;
	snprintf(path, sizeof(path), "%s", test__fixture("debuginfo/next/prog"));
	check_find("debuginfo/next/prog", path, &opts, expect);
	if (test__failed())
		return;
	/* No @found wanted. */
	CHECK(elf_file_open(&f, "debuginfo/prog.stripped") == 0);
	fd = debuginfo__find(f.elf, NULL, f.build_id, &opts, NULL);
	CHECK(is_debug_file(fd, test__fixture("debuginfo/buildid-debug/prog.debug"), f.build_id));
	close(fd);
	elf_file_close(&f);
}

/* --- a target's root ---------------------------------------------------- */

TEST(debuginfo_root)
{
	char root[PATH_MAX], root_slash[PATH_MAX + 1], expect[2 * PATH_MAX];
	struct debuginfo_opts opts = { .root = root, .debug_dir = "/usr/lib/debug" };
	struct elf_file other;

	snprintf(root, sizeof(root), "%s", test__fixture("debuginfo/root"));
	/* The debuglink, under ROOT/DEBUG_DIR/DIR: nothing is at prog's build-id there. */
	snprintf(expect, sizeof(expect), "%s/usr/lib/debug/usr/bin/prog.debug", root);
	check_find("debuginfo/root/usr/bin/prog", "/usr/bin/prog", &opts, expect);
	if (test__failed())
		return;
	/* The build-id, through a link relative to ROOT; "ROOT/" is the same root. */
	CHECK(elf_file_open(&other, "debuginfo/other.full") == 0);
	elf_file_close(&other);
	snprintf(expect, sizeof(expect), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
		 other.build_id, other.build_id + 2);
	snprintf(root_slash, sizeof(root_slash), "%s/", root);
	opts.root = root_slash;
	check_find("debuginfo/root/usr/bin/other", "/usr/bin/other", &opts, expect);
}

/*
 * A target's links resolve inside its root, as the target sees them: an
 * absolute link under ROOT/usr/lib/debug/.build-id leads to a file under
 * ROOT, and a link that climbs out with ".." towards a file of the host's
 * stays in ROOT, and finds nothing there.
 */
TEST(debuginfo_root_links_stay_inside)
{
	char root[] = "/tmp/profiler-unit-root.XXXXXX", cmd[4 * PATH_MAX], host[PATH_MAX];
	char idlink[PATH_MAX], inside[PATH_MAX];
	struct debuginfo_opts opts = { .root = root, .debug_dir = "/usr/lib/debug" };
	struct stat want, got;
	struct elf_file f;
	char *found = NULL;
	int fd;

	CHECK(mkdtemp(root) != NULL);
	CHECK(abs_fixture("debuginfo/prog.debug", host, sizeof(host)) == 0);
	CHECK(elf_file_open(&f, "debuginfo/prog.full") == 0);
	if (test__failed())
		return;
	snprintf(inside, sizeof(inside), "%s/usr/lib/debug/real/prog.debug", root);
	snprintf(idlink, sizeof(idlink), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
		 f.build_id, f.build_id + 2);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/usr/lib/debug/real %s/usr/lib/debug/.build-id/%.2s && "
		 "cp '%s' %s && ln -s /usr/lib/debug/real/prog.debug %s",
		 root, root, f.build_id, host, inside, idlink);
	CHECK(system(cmd) == 0);
	fd = debuginfo__find(f.elf, NULL, f.build_id, &opts, &found);
	CHECK(fd >= 0 && !fstat(fd, &got) && !stat(inside, &want) && got.st_ino == want.st_ino);
	CHECK_STR(found, idlink);
	if (fd >= 0)
		close(fd);
	free(found);
	found = NULL;

	/* On the host, this link would reach the fixture itself. */
	snprintf(cmd, sizeof(cmd), "ln -sfn ../../../../../../../../../../../../..%s %s", host,
		 idlink);
	CHECK(system(cmd) == 0);
	errno = 0;
	fd = debuginfo__find(f.elf, NULL, f.build_id, &opts, &found);
	CHECK(fd == -ENOENT && !found);
	if (fd >= 0)
		close(fd);
	free(found);
	elf_file_close(&f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/* --- nothing to find ---------------------------------------------------- */

/* Whether libdebuginfod is loaded into this process. */
static bool debuginfod_loaded(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h;
}

/*
 * Not found anywhere, and debuginfod never loaded without DEBUGINFOD_URLS
 * (or with it empty). A malformed build-id is no path.
 */
TEST(debuginfo_not_found_without_debuginfod)
{
	struct debuginfo_opts opts = { .debug_dir = NO_DEBUG_DIR };
	const char *saved = getenv("DEBUGINFOD_URLS");
	char *urls = saved ? strdup(saved) : NULL;
	struct elf_file f;
	char *found = NULL;
	int fd;

	CHECK(!debuginfod_loaded());
	CHECK(elf_file_open(&f, "debuginfo/prog.stripped") == 0);
	unsetenv("DEBUGINFOD_URLS");
	check_find("debuginfo/prog.stripped", f.path, &opts, NULL);
	setenv("DEBUGINFOD_URLS", "", 1);
	check_find("debuginfo/prog.stripped", f.path, &opts, NULL);
	errno = 0;
	fd = debuginfo__find(f.elf, NULL, NULL, NULL, &found);
	CHECK(fd == -ENOENT && !found);
	errno = 0;
	fd = debuginfo__find(f.elf, f.path, "../../../etc/passwd", &opts, &found);
	CHECK(fd == -ENOENT && !found);
	if (urls)
		setenv("DEBUGINFOD_URLS", urls, 1);
	else
		unsetenv("DEBUGINFOD_URLS");
	free(urls);
	elf_file_close(&f);
	CHECK(!debuginfod_loaded());
}

/* --- MiniDebugInfo and DWARF -------------------------------------------- */

static bool has_function(const struct elf_symtab *tab, const char *name)
{
	size_t nr;
	const struct elf_sym *syms = elf_symtab__syms(tab, &nr);

	for (size_t i = 0; i < nr; i++)
		if (!strcmp(syms[i].name, name))
			return true;
	return false;
}

TEST(debuginfo_minidebuginfo)
{
	struct elf_symtab *tab;
	struct elf_file f;
	size_t size = 0;
	void *image;

	CHECK(elf_file_open(&f, "debuginfo/mini") == 0);
	image = debuginfo__minidebuginfo(f.elf, &size);
	elf_file_close(&f);
	CHECK(image);
	CHECK(size > 4 && !memcmp(image, "\177ELF", 4));
	tab = elf_symtab__open_mem(image, size, "minidebuginfo");
	free(image);
	CHECK(tab);
	CHECK(!elf_symtab__from_dynsym(tab));
	/* The static function the stripped file lost; main is not exported by a PIE. */
	CHECK(has_function(tab, "debuglink_static_fn"));
	CHECK(has_function(tab, "main"));
	elf_symtab__free(tab);
}

static void check_mini_fails(const char *name, int err)
{
	struct elf_file f;
	size_t size = 0;
	void *image;

	CHECK(elf_file_open(&f, name) == 0);
	errno = 0;
	image = debuginfo__minidebuginfo(f.elf, &size);
	elf_file_close(&f);
	CHECK(!image);
	CHECK(errno == err);
}

TEST(debuginfo_minidebuginfo_errors)
{
	check_mini_fails("debuginfo/prog.full", ENOENT);
	check_mini_fails("debuginfo/mini-corrupt", EINVAL);
	check_mini_fails("debuginfo/mini-truncated", EINVAL);
}

static void check_dwarf(const char *name, bool expect)
{
	struct elf_file f;

	CHECK(elf_file_open(&f, name) == 0);
	CHECK(debuginfo__has_dwarf(f.elf) == expect);
	elf_file_close(&f);
}

TEST(debuginfo_has_dwarf)
{
	check_dwarf("debuginfo/prog.full", true);
	check_dwarf("debuginfo/prog.debug", true);
	check_dwarf("debuginfo/prog.stripped", false);
	check_dwarf("debuginfo/mini", false);
}
