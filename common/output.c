// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

static bool is_stdout(const char *path)
{
	return !strcmp(path, "-");
}

/* The directory part of @path into @dir ("." when there is none). */
static void dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/*
 * Is @path a symbolic link that someone else planted in a shared directory?
 * The kernel's fs.protected_symlinks rule, applied whatever that sysctl
 * says: in a sticky world-writable directory such as /tmp, only a link
 * that belongs to us or to the directory's owner is followed. Otherwise
 * any user could point /tmp/out.pb.gz at a device or a FIFO of root's, or
 * /tmp/dir at /etc.
 */
static bool planted_link(const char *path)
{
	char dir[PATH_MAX];
	struct stat lst, dst;

	if (lstat(path, &lst) || !S_ISLNK(lst.st_mode))
		return false;
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &dst) || !(dst.st_mode & S_ISVTX) || !(dst.st_mode & S_IWOTH))
		return false;
	return lst.st_uid != geteuid() && lst.st_uid != dst.st_uid;
}

/* @path or its directory is a planted link (see planted_link()). */
static bool through_planted_link(const char *path)
{
	char dir[PATH_MAX];

	dir_of(path, dir, sizeof(dir));
	return planted_link(path) || planted_link(dir);
}

/*
 * Is what is at @path (followed) something output_file__open() will not
 * write? Not a regular file under OUTPUT_REGULAR_ONLY (-EINVAL), or a
 * regular file in a sticky directory that is neither ours nor the
 * directory owner's (-EPERM: the kernel's rule for rename() and unlink()
 * there). 0 when it may be written or is absent.
 */
static int refused_destination(const char *path, unsigned int flags)
{
	char dir[PATH_MAX];
	struct stat st, dst;

	if (stat(path, &st))
		return 0;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return flags & OUTPUT_REGULAR_ONLY ? -EINVAL : 0;
	dir_of(path, dir, sizeof(dir));
	if (lstat(path, &st) || stat(dir, &dst) || !(dst.st_mode & S_ISVTX))
		return 0;
	return st.st_uid != geteuid() && dst.st_uid != geteuid() ? -EPERM : 0;
}

int output_file__check(const char *path, unsigned int flags)
{
	char dir[PATH_MAX];
	struct stat st;
	int err;

	if (is_stdout(path))
		return 0;
	if (!*path)
		return -ENOENT;
	if (path[strlen(path) - 1] == '/')
		return -EISDIR;
	if (through_planted_link(path))
		return -ELOOP;
	err = refused_destination(path, flags);
	if (err)
		return err;
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return -errno;
	return 0;
}

/* Write @out through @fd, which is closed if that fails. 0 or -errno. */
static int open_stream(struct output_file *out, int fd)
{
	int err;

	out->fp = fdopen(fd, "w");
	if (out->fp)
		return 0;
	err = -errno;
	close(fd);
	return err;
}

int output_file__open(struct output_file *out, const char *path, unsigned int flags)
{
	char dir[PATH_MAX];
	mode_t mask;
	int fd, err;
	struct stat st;

	memset(out, 0, sizeof(*out));
	out->path = path;
	if (is_stdout(path)) {
		out->fp = stdout;
		return 0;
	}
	/* Checked again: the link may have been planted while we sampled. */
	if (through_planted_link(path))
		return -ELOOP;
	err = refused_destination(path, flags);
	if (err)
		return err;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* A FIFO with no reader: ENXIO now, rather than waiting for one forever. */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
			err = -errno;
			close(fd);
			return err;
		}
		err = open_stream(out, fd);
		out->direct = !err;
		return err;
	}
	dir_of(path, dir, sizeof(dir));
	/* Nameless until it is whole: killed while it writes (SIGKILL), it leaves nothing. */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	if (fd >= 0) {
		err = open_stream(out, fd);
		out->unnamed = !err;
		return err;
	}
	/* A file system without O_TMPFILE: a named temporary file. */
	if (asprintf(&out->tmp_path, "%s/.profiler-XXXXXX", dir) < 0) {
		out->tmp_path = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(out->tmp_path);
	if (fd < 0)
		goto out_err;
	/* mkstemp() creates 0600; give the file the mode a plain creat() would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask))
		goto out_close;
	out->fp = fdopen(fd, "w");
	if (!out->fp)
		goto out_close;
	return 0;

out_close:
	err = -errno;
	close(fd);
	unlink(out->tmp_path);
	errno = -err;
out_err:
	err = -errno;
	free(out->tmp_path);
	out->tmp_path = NULL;
	return err;
}

/* The error of a stream, flushed: errno from the write that failed, else EIO. */
static int flush_error(FILE *fp)
{
	if (fflush(fp) || ferror(fp))
		return -(errno ? errno : EIO);
	return 0;
}

/*
 * Give @out's nameless file a temporary name beside its destination, for
 * the rename into place: a name of ours that nothing has, as mkstemp()
 * picks. 0 or -errno.
 */
static int name_unnamed(struct output_file *out)
{
	char dir[PATH_MAX], fd_path[64];
	uint64_t r;
	int err = -EEXIST;

	dir_of(out->path, dir, sizeof(dir));
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fileno(out->fp));
	for (int i = 0; i < 100 && err == -EEXIST; i++) {
		char *name;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return -EIO;
		if (asprintf(&name, "%s/.profiler-%012llx", dir,
			     (unsigned long long)(r & 0xffffffffffffULL)) < 0)
			return -ENOMEM;
		if (!linkat(AT_FDCWD, fd_path, AT_FDCWD, name, AT_SYMLINK_FOLLOW)) {
			out->tmp_path = name;
			return 0;
		}
		err = -errno;
		free(name);
	}
	return err;
}

int output_file__close(struct output_file *out)
{
	int err;

	if (!out->fp)
		return 0;
	err = flush_error(out->fp);
	if (!out->tmp_path && !out->direct && !out->unnamed)
		return err; /* stdout stays open */
	if (!err && (out->tmp_path || out->unnamed) && fsync(fileno(out->fp)))
		err = -errno;
	if (!err && out->unnamed)
		err = name_unnamed(out);
	out->unnamed = false;
	if (fclose(out->fp) && !err)
		err = -(errno ? errno : EIO);
	out->fp = NULL;
	return err;
}

int output_file__commit(struct output_file *out)
{
	int err = output_file__close(out);

	if (!out->tmp_path)
		return err;
	if (!err && rename(out->tmp_path, out->path))
		err = -errno;
	if (err)
		unlink(out->tmp_path);
	free(out->tmp_path);
	out->tmp_path = NULL;
	return err;
}

void output_file__abort(struct output_file *out)
{
	if (out->fp && (out->tmp_path || out->direct || out->unnamed))
		fclose(out->fp);
	out->fp = NULL;
	out->unnamed = false;
	if (!out->tmp_path)
		return;
	unlink(out->tmp_path);
	free(out->tmp_path);
	out->tmp_path = NULL;
}

int output_file__commit_all(struct output_file *out, size_t nr, size_t *failed)
{
	size_t i;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		err = output_file__commit(&out[i]);
		if (err)
			*failed = i;
	}
	for (; i < nr; i++)
		output_file__abort(&out[i]);
	return err;
}
