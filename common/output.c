// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
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

int output_file__check(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (is_stdout(path))
		return 0;
	if (!*path)
		return -ENOENT;
	if (path[strlen(path) - 1] == '/')
		return -EISDIR;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return -EISDIR;
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return -errno;
	return 0;
}

int output_file__open(struct output_file *out, const char *path)
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
	if (!stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return -errno;
		out->fp = fdopen(fd, "w");
		if (!out->fp) {
			err = -errno;
			close(fd);
			return err;
		}
		out->direct = true;
		return 0;
	}
	dir_of(path, dir, sizeof(dir));
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

int output_file__close(struct output_file *out)
{
	int err;

	if (!out->fp)
		return 0;
	err = flush_error(out->fp);
	if (!out->tmp_path && !out->direct)
		return err; /* stdout stays open */
	if (!err && out->tmp_path && fsync(fileno(out->fp)))
		err = -errno;
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
	if (out->fp && (out->tmp_path || out->direct))
		fclose(out->fp);
	out->fp = NULL;
	if (!out->tmp_path)
		return;
	unlink(out->tmp_path);
	free(out->tmp_path);
	out->tmp_path = NULL;
}