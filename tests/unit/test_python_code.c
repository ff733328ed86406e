// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tests of collector/python_code, with the interpreters themselves as the
 * oracle: the fixtures python-X.Y.Z-lines.txt (tests/fixtures/python_lines.py,
 * run by `make fixtures` with every CPython 3.10-3.13 found) hold the line
 * each release gives every instruction of hundreds of code objects, and
 * tests/fixtures/python_live.py is a process whose code objects are read
 * while it waits. A release none was found for is a skip.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collector/python_code.h"
#include "collector/python_offsets.h"
#include "common/utf8.h"
#include "test.h"

#define LIVE_SCRIPT "tests/fixtures/python_live.py"

/* @hex's bytes into *@out (malloc'ed, "-" is empty); their count, or -1 when not hex. */
static ssize_t unhex(const char *hex, uint8_t **out)
{
	size_t n = strcmp(hex, "-") ? strlen(hex) / 2 : 0;

	*out = malloc(n ? n : 1);
	if (!*out)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		(*out)[i] = b;
	}
	return n;
}

/* The fixture files of release 3.@minor, in a NULL-terminated array the caller frees. */
static char **fixture_files(unsigned int minor)
{
	const char *dir = test__fixture("");
	char prefix[32], **files = calloc(16, sizeof(*files));
	struct dirent *de;
	size_t nr = 0;
	DIR *d;

	if (!files)
		return NULL;
	snprintf(prefix, sizeof(prefix), "python-3.%u.", minor);
	d = opendir(dir);
	if (!d)
		return files;
	while ((de = readdir(d)) && nr < 15) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, prefix, strlen(prefix)) || len < 10 ||
		    strcmp(de->d_name + len - 10, "-lines.txt"))
			continue;
		if (asprintf(&files[nr], "%s/%s", dir, de->d_name) < 0)
			break;
		nr++;
	}
	closedir(d);
	return files;
}

static void free_files(char **files)
{
	for (size_t i = 0; files && files[i]; i++)
		free(files[i]);
	free(files);
}

struct fixture_code {
	int32_t firstlineno;
	uint8_t *table;
	size_t len;
};

/* Python's line (a number, or "-" for None) as ours: None is 0, as is any line below 1. */
static uint32_t expected_line(const char *tok)
{
	long v = strcmp(tok, "-") ? strtol(tok, NULL, 10) : 0;

	return v > 0 ? (uint32_t)v : 0;
}

static uint32_t decode(const struct python_offsets *off, const struct fixture_code *c,
		       int64_t offset)
{
	struct py_code code = {
		.firstlineno = c->firstlineno,
		.linetable = c->table,
		.linetable_len = c->len,
	};
	uint32_t line = py_code__line(off, &code, offset);

	/* The entry point and the decoder of the release agree. */
	if (line != (off->version < 0x030b ?
			     py_linetable_310(c->table, c->len, c->firstlineno, offset) :
			     py_locations(c->table, c->len, c->firstlineno, offset)))
		return UINT32_MAX;
	return line;
}

/*
 * Compare every line of fixture @path with our decoders; how many
 * (function, offset) pairs were compared, -1 on a mismatch (reported).
 */
static long check_lines_file(const char *path, const struct python_offsets *off)
{
	struct fixture_code *codes = NULL;
	size_t nr_codes = 0, cap = 0, linecap = 0;
	long compared = 0, ret = -1;
	char *line = NULL;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		test__fail(__FILE__, __LINE__, "cannot open '%s'", path);
		return -1;
	}
	while (getline(&line, &linecap, f) > 0) {
		char *save, *kind = strtok_r(line, " \n", &save);
		struct fixture_code *c = nr_codes ? &codes[nr_codes - 1] : NULL;

		if (!kind)
			continue;
		if (!strcmp(kind, "code")) {
			char *first, *hex;
			ssize_t n;

			if (nr_codes == cap) {
				cap = cap ? 2 * cap : 256;
				codes = realloc(codes, cap * sizeof(*codes));
				if (!codes)
					goto out;
			}
			strtok_r(NULL, " \n", &save);
			first = strtok_r(NULL, " \n", &save);
			hex = strtok_r(NULL, " \n", &save);
			c = &codes[nr_codes++];
			c->firstlineno = first ? atoi(first) : 0;
			n = unhex(hex ? hex : "-", &c->table);
			c->len = n > 0 ? n : 0;
			/* Before the first instruction: the first line, as PyCode_Addr2Line(). */
			if (decode(off, c, -2) != expected_line(first)) {
				test__fail(__FILE__, __LINE__, "%s: code %zu at offset -2", path,
					   nr_codes - 1);
				goto out;
			}
			compared++;
		} else if (!strcmp(kind, "lines") || !strcmp(kind, "positions")) {
			char *tok;

			for (int64_t unit = 0; c && (tok = strtok_r(NULL, " \n", &save)); unit++) {
				uint32_t ours = decode(off, c, 2 * unit);

				if (ours != expected_line(tok)) {
					test__fail(__FILE__, __LINE__,
						   "%s: code %zu, %s at byte offset %" PRId64
						   ": ours %u, Python's %s",
						   path, nr_codes - 1, kind, 2 * unit, ours, tok);
					goto out;
				}
				compared++;
			}
		} else if (!strcmp(kind, "probe")) {
			char *idx = strtok_r(NULL, " \n", &save);
			char *lasti = strtok_r(NULL, " \n", &save);
			char *lineno = strtok_r(NULL, " \n", &save);
			size_t i = idx ? strtoul(idx, NULL, 10) : SIZE_MAX;
			uint32_t ours;

			if (i >= nr_codes || !lasti || !lineno) {
				test__fail(__FILE__, __LINE__, "%s: bad probe line", path);
				goto out;
			}
			ours = decode(off, &codes[i], strtoll(lasti, NULL, 10));
			if (ours != expected_line(lineno)) {
				test__fail(__FILE__, __LINE__,
					   "%s: code %zu, f_lasti %s: ours %u, f_lineno %s", path,
					   i, lasti, ours, lineno);
				goto out;
			}
			compared++;
		}
	}
	ret = nr_codes ? compared : -1;
	if (!nr_codes)
		test__fail(__FILE__, __LINE__, "%s: no code objects", path);
out:
	for (size_t i = 0; i < nr_codes; i++)
		free(codes[i].table);
	free(codes);
	free(line);
	fclose(f);
	return ret;
}

static void check_lines(unsigned int minor)
{
	const struct python_offsets *off = python_offsets__find(3, minor);
	char **files = fixture_files(minor);
	long total = 0;

	CHECK(off && files);
	if (!files[0]) {
		free_files(files);
		SKIP("no python3.%u-lines fixture: no CPython 3.%u found by make fixtures", minor,
		     minor);
	}
	for (size_t i = 0; files[i]; i++) {
		long n = check_lines_file(files[i], off);

		if (n < 0) {
			free_files(files);
			return;
		}
		printf("# %s: %ld (function, offset) lines compared\n", strrchr(files[i], '/') + 1,
		       n);
		total += n;
	}
	free_files(files);
	CHECK(total > 0);
}

TEST(python_lines_3_10)
{
	check_lines(10);
}

TEST(python_lines_3_11)
{
	check_lines(11);
}

TEST(python_lines_3_12)
{
	check_lines(12);
}

TEST(python_lines_3_13)
{
	check_lines(13);
}

/* Tables CPython would not write: each answer stays within the table. */
TEST(python_lines_malformed)
{
	/* 3.10: a last range of length 0, an odd byte, nothing at all. */
	static const uint8_t zero_tail[] = { 4, 1, 0, 127 };
	static const uint8_t odd[] = { 4, 1, 2 };
	/* 3.11+: a long form whose varint runs off the end; an entry without a start bit. */
	static const uint8_t cut_varint[] = { 0xf0, 0x7f, 0x7f };
	static const uint8_t no_start[] = { 0x01, 0x80 | 10 << 3 };

	CHECK_U64(py_linetable_310(zero_tail, sizeof(zero_tail), 10, 0), 11);
	CHECK_U64(py_linetable_310(zero_tail, sizeof(zero_tail), 10, 4), 0);
	CHECK_U64(py_linetable_310(odd, sizeof(odd), 10, 4), 0);
	CHECK_U64(py_linetable_310(NULL, 0, 10, 0), 0);
	CHECK_U64(py_linetable_310(NULL, 0, 10, -2), 10);
	CHECK_U64(py_linetable_310(NULL, 0, -5, -2), 0);
	CHECK_U64(py_locations(cut_varint, sizeof(cut_varint), 10, 0) < UINT32_MAX, 1);
	CHECK_U64(py_locations(cut_varint, sizeof(cut_varint), 10, 2), 0);
	CHECK_U64(py_locations(no_start, sizeof(no_start), 7, 0), 7);
	CHECK_U64(py_locations(no_start, sizeof(no_start), 7, 4), 7);
	CHECK_U64(py_locations(no_start, sizeof(no_start), 7, 6), 0);
	CHECK_U64(py_locations(NULL, 0, 10, 0), 0);
	CHECK_U64(py_locations(NULL, 0, 10, INT64_MAX), 0);
}

TEST(python_code_offset)
{
	const struct python_offsets *o310 = python_offsets__find(3, 10);
	const struct python_offsets *o312 = python_offsets__find(3, 12);
	uint64_t line = 1234ULL << PY_FRAME_LINE_SHIFT, code = 0x7f0000001000ULL;

	CHECK(o310 && o312);
	/* 3.10: f_lasti in the low 32 bits, f_lineno's in the 16 above. */
	CHECK_U64(py_code__offset(o310, code, line | 0xffffffffULL), (uint64_t)-2);
	CHECK_U64(py_code__offset(o310, code, line | 77ULL << 32 | 5), 10);
	CHECK_U64(py_code__offset(o310, code, 0), 0);
	/* 3.11+: a pointer into co_code_adaptive; the entry flag on the code is no address. */
	CHECK_U64(py_code__offset(o312, code | PY_FRAME_ENTRY,
				  line | (code + o312->code_adaptive + 20)),
		  20);
	CHECK_U64(py_code__offset(o312, code, code + o312->code_adaptive - 2), (uint64_t)-2);
}

/* The interpreter that wrote fixture @path, from its first line; NULL if none (malloc'ed). */
static char *fixture_interpreter(const char *path)
{
	char buf[4096], *nl, *ret = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	if (fgets(buf, sizeof(buf), f) && !strncmp(buf, "interpreter ", 12)) {
		nl = strchr(buf, '\n');
		if (nl)
			*nl = '\0';
		ret = strdup(buf + 12);
	}
	fclose(f);
	return ret;
}

/* @hex as a NUL-terminated string (malloc'ed). */
static char *unhex_str(const char *hex)
{
	uint8_t *bytes;
	ssize_t n = unhex(hex, &bytes);
	char *s;

	if (n < 0) {
		free(bytes);
		return NULL;
	}
	s = realloc(bytes, n + 1);
	if (s)
		s[n] = '\0';
	return s;
}

struct live {
	pid_t pid;     /* the interpreter */
	pid_t own_pid; /* what it printed: the same */
	FILE *out;     /* its stdout */
	int in;	       /* its stdin: closing it ends it */
	int codes;     /* code objects compared */
};

static int live_start(struct live *l, const char *python)
{
	int out[2], in[2];

	memset(l, 0, sizeof(*l));
	if (pipe(out) || pipe(in))
		return -errno;
	fflush(stdout);
	l->pid = fork();
	if (l->pid < 0)
		return -errno;
	if (!l->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(python, python, LIVE_SCRIPT, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	l->in = in[1];
	l->out = fdopen(out[0], "r");
	return l->out ? 0 : -errno;
}

/* End the interpreter and wait for it: 0 when it exited with 0. */
static int live_stop(struct live *l)
{
	int status;

	if (l->in > 0)
		close(l->in);
	if (l->out)
		fclose(l->out);
	if (waitpid(l->pid, &status, 0) != l->pid)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

static bool valid_utf8(const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0, n; i < len; i += n) {
		n = utf8__char_len((const unsigned char *)s + i, len - i);
		if (!n)
			return false;
	}
	return true;
}

/*
 * Check one line of the live process's output; the address of a code
 * object it named in *@code_addr.
 */
static void live_check_line(struct live *l, const struct python_offsets *off, char *line,
			    uint64_t *code_addr)
{
	char *save, *kind = strtok_r(line, " \n", &save);
	char *addr_s = strtok_r(NULL, " \n", &save);
	uint64_t addr = addr_s ? strtoull(addr_s, NULL, 10) : 0;
	struct py_code code;
	int err;

	CHECK(kind);
	if (!strcmp(kind, "pid")) {
		l->own_pid = addr;
		CHECK_U64(l->own_pid, l->pid);
	} else if (!strcmp(kind, "code")) {
		char *first = strtok_r(NULL, " \n", &save);
		char *table_hex = strtok_r(NULL, " \n", &save);
		char *qualname = unhex_str(strtok_r(NULL, " \n", &save));
		char *filename = unhex_str(strtok_r(NULL, " \n", &save));
		uint8_t *table;
		ssize_t len = unhex(table_hex, &table);

		err = py_code__read(l->pid, off, addr, &code);
		if (!err) {
			CHECK_STR(code.qualname, qualname);
			CHECK_STR(code.filename, filename);
			CHECK_U64(code.firstlineno, strtol(first, NULL, 10));
			CHECK_U64(code.linetable_len, len);
			CHECK(!memcmp(code.linetable, table, len));
		}
		py_code__release(&code);
		free(qualname);
		free(filename);
		free(table);
		CHECK_U64(err, 0);
		*code_addr = addr;
		l->codes++;
	} else if (!strcmp(kind, "toolong")) {
		CHECK_U64(py_code__read(l->pid, off, addr, &code), -EINVAL);
		CHECK(!code.qualname && !code.filename && !code.linetable);
	} else if (!strcmp(kind, "other")) {
		/* Not a code object: an error, or anything within bounds. */
		err = py_code__read(l->pid, off, addr, &code);
		if (!err) {
			CHECK(valid_utf8(code.qualname) && valid_utf8(code.filename));
			CHECK(code.linetable_len <= PY_CODE_MAX_LINETABLE);
		}
		py_code__release(&code);
	}
}

static void check_live(const char *python, const struct python_offsets *off)
{
	static const uint64_t wild[] = {
		0, 8, 0x1000, 0xdeadbeef000ULL, 0x7ffffffff000ULL, UINT64_MAX - 64, UINT64_MAX
	};
	uint64_t code_addr = 0;
	struct py_code code;
	char *line = NULL;
	size_t cap = 0;
	struct live l;
	bool ended = false;
	int err;

	err = live_start(&l, python);
	if (err) {
		test__fail(__FILE__, __LINE__, "cannot start '%s': %s", python, strerror(-err));
		return;
	}
	while (!test__failed() && getline(&line, &cap, l.out) > 0) {
		if (!strcmp(line, "end\n")) {
			ended = true;
			break;
		}
		live_check_line(&l, off, line, &code_addr);
	}
	free(line);
	for (size_t i = 0; ended && !test__failed() && i < sizeof(wild) / sizeof(wild[0]); i++) {
		err = py_code__read(l.pid, off, wild[i], &code);
		py_code__release(&code);
		if (!err || (err != -EFAULT && err != -EINVAL))
			test__fail(__FILE__, __LINE__, "%s: address 0x%" PRIx64 " gives %d", python,
				   wild[i], err);
	}
	printf("# %s: %d code objects read\n", python, l.codes);
	err = live_stop(&l);
	CHECK(ended);
	CHECK_U64(err, 0);
	CHECK(l.codes >= 10);
	/* The process is gone (and reaped): its pid names none. */
	CHECK_U64(py_code__read(l.pid, off, code_addr, &code), -ESRCH);
}

static void check_live_release(unsigned int minor)
{
	const struct python_offsets *off = python_offsets__find(3, minor);
	char **files = fixture_files(minor);
	int nr = 0;

	CHECK(off && files);
	if (access(LIVE_SCRIPT, R_OK)) {
		free_files(files);
		SKIP("no %s: run from the top of the tree", LIVE_SCRIPT);
	}
	for (size_t i = 0; files[i] && !test__failed(); i++) {
		char *python = fixture_interpreter(files[i]);

		if (python && !access(python, X_OK)) {
			check_live(python, off);
			nr++;
		}
		free(python);
	}
	free_files(files);
	if (!nr && !test__failed())
		SKIP("no CPython 3.%u found by make fixtures", minor);
}

TEST(python_code_read_3_10)
{
	check_live_release(10);
}

TEST(python_code_read_3_11)
{
	check_live_release(11);
}

TEST(python_code_read_3_12)
{
	check_live_release(12);
}

TEST(python_code_read_3_13)
{
	check_live_release(13);
}
