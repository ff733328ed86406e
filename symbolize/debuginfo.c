// SPDX-License-Identifier: GPL-2.0-only
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/openat2.h>
#include <lzma.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "common/file_access.h"
#include "common/log.h"
#include "debuginfo.h"
#include "elf/elf_file.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"

/* The longest build-id elf_file accepts (ELF_BUILD_ID_MAX bytes), in hex. */
#define BUILD_ID_HEX_MAX (2 * ELF_BUILD_ID_MAX)

/* Bytes read per pread() for the CRC of a candidate debug file. */
#define CRC_CHUNK (1 << 20)

/*
 * MiniDebugInfo caps. Fedora's images are a few hundred KiB (xz's default
 * -6 needs 9 MiB to decode; -9 needs 65 MiB): far below these.
 */
#define MINI_OUT_MAX (64 << 20)
#define MINI_MEMLIMIT (128 << 20)

/*
 * Join path pieces with one '/' between each: the pieces after the first
 * lose their leading slashes, so that ROOT + "/usr/lib/debug" stays under
 * ROOT. An empty first piece (the host's root) keeps the second one as it
 * is, absolute or relative. NULL-terminated; returns a malloc()ed string.
 */
static char *path_join(const char *first, ...)
{
	size_t len = strlen(first), cap = len + 1;
	const char *part;
	va_list ap;
	char *buf;

	va_start(ap, first);
	while ((part = va_arg(ap, const char *)) != NULL)
		cap += strlen(part) + 1;
	va_end(ap);
	buf = malloc(cap);
	if (!buf)
		return NULL;
	memcpy(buf, first, len);
	va_start(ap, first);
	while ((part = va_arg(ap, const char *)) != NULL) {
		if (len) {
			while (*part == '/')
				part++;
			while (len > 1 && buf[len - 1] == '/')
				len--;
			if (buf[len - 1] != '/')
				buf[len++] = '/';
		}
		memcpy(buf + len, part, strlen(part));
		len += strlen(part);
	}
	va_end(ap);
	buf[len] = '\0';
	return buf;
}

/* The section called @name, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *s;

		if (!gelf_getshdr(scn, shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (s && !strcmp(s, name))
			return scn;
	}
	return NULL;
}

/*
 * Where the paths of one lookup are resolved. Every path is built as
 * ROOT/rest, for messages and for @found; the kernel is given only the
 * rest, from @skip on, resolved under @dirfd, the root opened once, with
 * RESOLVE_IN_ROOT: a symbolic link in the target's file system, absolute
 * or full of "..", resolves inside that root as it does for the target,
 * and never reaches a file of the host's. For the host itself, @dirfd is
 * AT_FDCWD and paths resolve as usual.
 */
struct lookup {
	int dirfd;
	size_t skip;	  /* the root's length in every path */
	uint64_t resolve; /* RESOLVE_* flags for openat2() */
};

/*
 * An O_PATH descriptor of @path (which opens nothing: no device or FIFO
 * reacts to it), or -1 with errno set. Without openat2() (before Linux
 * 5.6, or under a seccomp filter) a root's paths are refused: resolving
 * them the old way could leave the root.
 */
static int open_path(const struct lookup *in, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = in->resolve,
	};

	if (!in->resolve)
		return open(path, O_PATH | O_CLOEXEC);
	return syscall(SYS_openat2, in->dirfd, path + in->skip, &how, sizeof(how));
}

/* stat() of @path as open_path() resolves it. 0 or -1 with errno set. */
static int stat_path(const struct lookup *in, const char *path, struct stat *st)
{
	int fd = open_path(in, path), err = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, st))
		err = -1;
	close(fd);
	return err;
}

/*
 * Open @path read-only if it is a regular file and not @self (when not
 * NULL), one that @self's owner could read. The file is found once, as an
 * O_PATH descriptor, checked on that descriptor, and that very inode
 * reopened through /proc/self/fd: a device node or FIFO planted in a
 * target's debug directory is never opened, a link planted there to a
 * file its owner could not read (a root-only one) is not followed into
 * the profile, and nothing can be swapped in between.
 */
static int open_regular(const struct lookup *in, const char *path, const struct stat *self)
{
	char proc_path[64];
	struct stat st;
	int pfd, fd;

	pfd = open_path(in, path);
	if (pfd < 0) {
		if (errno != ENOENT)
			pr_debug("debuginfo: cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	fd = -1;
	if (fstat(pfd, &st)) {
		pr_debug("debuginfo: cannot stat '%s': %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		pr_debug("debuginfo: ignoring '%s': not a regular file", path);
	} else if (self && st.st_dev == self->st_dev && st.st_ino == self->st_ino) {
		pr_debug("debuginfo: ignoring '%s': the file itself", path);
	} else if (self && !file_readable_by(&st, self->st_uid, self->st_gid)) {
		pr_debug("debuginfo: ignoring '%s': uid %u, which owns the file it is for, could "
			 "not read it",
			 path, (unsigned int)self->st_uid);
	} else {
		snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", pfd);
		fd = open(proc_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			pr_debug("debuginfo: cannot open '%s': %s", path, strerror(errno));
	}
	close(pfd);
	return fd;
}

/* Is @fd an ELF file whose build-id is @build_id, if both have one? */
static bool build_id_matches(int fd, const char *path, const char *build_id)
{
	char id[BUILD_ID_HEX_MAX + 1];
	int err = elf_file__read_build_id(fd, id, sizeof(id));

	if (err == -ENOENT || (!err && (!build_id || !strcmp(id, build_id))))
		return true;
	if (err)
		pr_debug("debuginfo: ignoring '%s': %s", path, strerror(-err));
	else
		pr_debug("debuginfo: ignoring '%s': build-id %s, not %s", path, id, build_id);
	return false;
}

/* Open @path if it is a regular ELF file, not @self, with build-id @build_id; else -ENOENT. */
static int open_candidate(const struct lookup *in, const char *path, const struct stat *self,
			  const char *build_id)
{
	int fd = open_regular(in, path, self);

	if (fd < 0)
		return -ENOENT;
	if (!build_id_matches(fd, path, build_id)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* Hand @path to @found if @fd is open and @found is not NULL, else free it; returns @fd. */
static int found_at(int fd, char *path, char **found)
{
	if (fd >= 0 && found)
		*found = path;
	else
		free(path);
	return fd;
}

/* Is @s lowercase hex, long enough to split into xx/rest? */
static bool valid_build_id(const char *s)
{
	size_t len = strspn(s, "0123456789abcdef");

	return len > 2 && len <= BUILD_ID_HEX_MAX && !s[len];
}

/* Step 1: ROOT/DEBUG_DIR/.build-id/xx/rest.debug. An fd, -ENOENT or -ENOMEM. */
static int find_by_build_id(const struct lookup *in, const char *root, const char *debug_dir,
			    const char *build_id, char **found)
{
	char dir[3] = { build_id[0], build_id[1], '\0' };
	char file[BUILD_ID_HEX_MAX + sizeof(".debug")];
	char *path;

	snprintf(file, sizeof(file), "%s.debug", build_id + 2);
	path = path_join(root, debug_dir, ".build-id", dir, file, NULL);
	if (!path)
		return -ENOMEM;
	return found_at(open_candidate(in, path, NULL, build_id), path, found);
}

/*
 * The .gnu_debuglink section's file name and CRC32, as libdw's dwelf reads
 * them. The name must be a plain file name: one with a '/' could lead out
 * of the target's root. 0 or -ENOENT.
 */
static int read_debuglink(Elf *elf, const char **name, uint32_t *crc)
{
	GElf_Word word;

	*name = dwelf_elf_gnu_debuglink(elf, &word);
	if (!*name)
		return -ENOENT;
	if (!**name || strchr(*name, '/') || !strcmp(*name, ".") || !strcmp(*name, "..")) {
		pr_debug("debuginfo: ignoring a malformed .gnu_debuglink");
		return -ENOENT;
	}
	*crc = word;
	return 0;
}

/* Is the zlib CRC32 of all of @fd's contents (gdb's and objcopy's) @want? */
static bool crc_matches(int fd, const char *path, uint32_t want)
{
	unsigned char *buf = malloc(CRC_CHUNK);
	uLong crc = crc32(0, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	if (!buf)
		return false;
	while ((n = pread(fd, buf, CRC_CHUNK, off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_debug("debuginfo: cannot read '%s': %s", path, strerror(errno));
			free(buf);
			return false;
		}
		crc = crc32(crc, buf, n);
		off += n;
	}
	free(buf);
	if (crc != want)
		pr_debug("debuginfo: ignoring '%s': CRC %08lx, not %08x", path, crc, want);
	return crc == want;
}

/*
 * Step 2: the .gnu_debuglink name beside @path, in .debug/ beside it, then
 * under DEBUG_DIR at @path's directory. An fd, -ENOENT or -ENOMEM.
 */
static int find_by_debuglink(Elf *elf, const struct lookup *in, const char *root,
			     const char *debug_dir, const char *path, const char *build_id,
			     char **found)
{
	const char *slash = strrchr(path, '/'), *name;
	char *dir, *self_path, *cands[3] = { NULL };
	bool have_self;
	struct stat self;
	uint32_t want;
	int fd = -ENOMEM;

	if (read_debuglink(elf, &name, &want))
		return -ENOENT;
	if (!slash)
		dir = strdup(".");
	else
		dir = strndup(path, slash == path ? 1 : slash - path);
	self_path = path_join(root, path, NULL);
	if (!dir || !self_path)
		goto out_free;
	cands[0] = path_join(root, dir, name, NULL);
	cands[1] = path_join(root, dir, ".debug", name, NULL);
	cands[2] = path_join(root, debug_dir, dir, name, NULL);
	if (!cands[0] || !cands[1] || !cands[2])
		goto out_free;
	have_self = !stat_path(in, self_path, &self);
	for (int i = 0; i < 3; i++) {
		fd = open_candidate(in, cands[i], have_self ? &self : NULL, build_id);
		if (fd >= 0 && !crc_matches(fd, cands[i], want)) {
			close(fd);
			fd = -ENOENT;
		}
		if (fd >= 0) {
			fd = found_at(fd, cands[i], found);
			cands[i] = NULL;
			break;
		}
	}
out_free:
	for (int i = 0; i < 3; i++)
		free(cands[i]);
	free(self_path);
	free(dir);
	return fd;
}

/*
 * libdebuginfod's entry points (as its debuginfod.h declares them, with the
 * client handle opaque), loaded on first use so that neither the build nor
 * the profiler depend on it. The library stays loaded until exit: it starts
 * libcurl, which is not made to be unloaded.
 */
static struct {
	void *(*begin)(void);
	int (*find_debuginfo)(void *client, const unsigned char *build_id, int build_id_len,
			      char **path);
	void (*end)(void *client);
} debuginfod;
static pthread_once_t debuginfod_once = PTHREAD_ONCE_INIT;

static void debuginfod_load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		pr_debug("debuginfo: cannot load libdebuginfod: %s", dlerror());
		return;
	}
	debuginfod.begin = dlsym(h, "debuginfod_begin");
	debuginfod.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	debuginfod.end = dlsym(h, "debuginfod_end");
	if (!debuginfod.begin || !debuginfod.find_debuginfo || !debuginfod.end) {
		pr_debug("debuginfo: cannot use libdebuginfod: a function is missing");
		debuginfod.begin = NULL;
		dlclose(h);
	}
}

/* Step 3: ask the servers in $DEBUGINFOD_URLS. An fd or -ENOENT. */
static int find_by_debuginfod(const char *build_id, char **found)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	void *client;
	int fd;

	if (!urls || !*urls)
		return -ENOENT;
	pthread_once(&debuginfod_once, debuginfod_load);
	if (!debuginfod.begin)
		return -ENOENT;
	client = debuginfod.begin();
	if (!client)
		return -ENOENT;
	/* A build-id length of 0 says it is given as a hex string. */
	fd = debuginfod.find_debuginfo(client, (const unsigned char *)build_id, 0, &path);
	debuginfod.end(client);
	if (fd < 0) {
		pr_debug("debuginfo: debuginfod has no debug file for build-id %s: %s", build_id,
			 strerror(-fd));
		return -ENOENT;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) || !path || !build_id_matches(fd, path, build_id)) {
		close(fd);
		free(path);
		return -ENOENT;
	}
	return found_at(fd, path, found);
}

int debuginfo__find(Elf *elf, const char *path, const char *build_id,
		    const struct debuginfo_opts *opts, char **found)
{
	const char *root = opts && opts->root ? opts->root : "";
	const char *debug_dir = opts && opts->debug_dir ? opts->debug_dir : DEFAULT_DEBUG_DIR;
	struct lookup in = { .dirfd = AT_FDCWD };
	int fd = -ENOENT;

	if (found)
		*found = NULL;
	/* "/" is the host's root: leave relative paths relative. */
	if (!root[strspn(root, "/")])
		root = "";
	if (*root) {
		in.dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		/* Steps 1 and 2 then find nothing (EBADF); debuginfod may still. */
		if (in.dirfd < 0)
			pr_debug("debuginfo: cannot open '%s': %s", root, strerror(errno));
		/* path_join() keeps the root without its trailing slashes. */
		in.skip = strlen(root);
		while (in.skip > 1 && root[in.skip - 1] == '/')
			in.skip--;
		in.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	}
	if (build_id && !valid_build_id(build_id)) {
		pr_debug("debuginfo: ignoring malformed build-id '%s'", build_id);
		build_id = NULL;
	}
	if (build_id)
		fd = find_by_build_id(&in, root, debug_dir, build_id, found);
	if (fd == -ENOENT && path)
		fd = find_by_debuglink(elf, &in, root, debug_dir, path, build_id, found);
	if (in.dirfd >= 0)
		close(in.dirfd);
	if (fd == -ENOENT && build_id)
		fd = find_by_debuginfod(build_id, found);
	return fd;
}

/*
 * Decoded as a stream into a buffer grown as needed: the image's size is
 * only known from the xz index at the end of the data, and growing costs
 * less than a second pass.
 */
void *debuginfo__minidebuginfo(Elf *elf, size_t *size)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	lzma_ret ret;
	size_t cap;
	void *out = NULL, *grown;
	int err = EINVAL;

	scn = find_section(elf, ".gnu_debugdata", &shdr);
	if (!scn || shdr.sh_type == SHT_NOBITS) {
		errno = ENOENT;
		return NULL;
	}
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		goto out_errno;
	ret = lzma_stream_decoder(&strm, MINI_MEMLIMIT, 0);
	if (ret != LZMA_OK) {
		err = ret == LZMA_MEM_ERROR ? ENOMEM : EINVAL;
		goto out_errno;
	}
	/* xz packs a symbol table about 4:1. */
	cap = data->d_size < MINI_OUT_MAX / 4 ? 4 * data->d_size : MINI_OUT_MAX;
	out = malloc(cap);
	if (!out) {
		err = ENOMEM;
		goto out_end;
	}
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	for (;;) {
		strm.next_out = (uint8_t *)out + strm.total_out;
		strm.avail_out = cap - strm.total_out;
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK) {
			err = ret == LZMA_MEM_ERROR ? ENOMEM : EINVAL;
			pr_debug("debuginfo: cannot decompress .gnu_debugdata: liblzma error %d",
				 ret);
			goto out_free;
		}
		if (strm.avail_out)
			continue;
		if (cap == MINI_OUT_MAX) {
			/* The caller's one warning names the file and says "too large". */
			err = EFBIG;
			goto out_free;
		}
		cap = cap < MINI_OUT_MAX / 2 ? 2 * cap : MINI_OUT_MAX;
		grown = realloc(out, cap);
		if (!grown) {
			err = ENOMEM;
			goto out_free;
		}
		out = grown;
	}
	*size = strm.total_out;
	/* Give back what the last doubling over-allocated. */
	grown = realloc(out, *size ? *size : 1);
	lzma_end(&strm);
	return grown ? grown : out;

out_free:
	free(out);
out_end:
	lzma_end(&strm);
out_errno:
	errno = err;
	return NULL;
}

bool debuginfo__has_altlink(Elf *elf)
{
	GElf_Shdr shdr;

	return find_section(elf, ".gnu_debugaltlink", &shdr);
}

bool debuginfo__has_dwarf(Elf *elf)
{
	static const char *const names[] = { ".debug_line", ".zdebug_line" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		GElf_Shdr shdr;

		if (find_section(elf, names[i], &shdr) && shdr.sh_type != SHT_NOBITS &&
		    shdr.sh_size)
			return true;
	}
	return false;
}
