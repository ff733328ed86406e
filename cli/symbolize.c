// SPDX-License-Identifier: GPL-2.0-only
/*
 * `profiler symbolize`: addr2line on the command line and in its output,
 * with the profiler's own symbolizer, so that scripts can use it in
 * addr2line's place and tests can hold it against the other symbolizers.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/lru.h"
#include "common/strset.h"
#include "cache_dir.h"
#include "symbolize.h"
#include "symbolize/symbolizer.h"
#include "version.h"

/*
 * Answers are flushed after each read of stdin anyway; a buffer larger than
 * stdio's 4 KiB spares a million-address run tens of thousands of writes.
 */
static char stdout_buf[1 << 18];

/* clang-format off */
const char symbolize_usage[] =
"Usage: profiler symbolize [OPTIONS] [-e FILE] [ADDR...]\n"
"\n"
"Translate addresses of an ELF file into function names and source lines,\n"
"as addr2line does: for each address, with -f the function, then FILE:LINE\n"
"('?\?' and '?\?:0' when unknown). Addresses are ELF virtual addresses in hex,\n"
"with or without 0x; without ADDR, they are read from stdin, one per line,\n"
"and each is answered as soon as it is read.\n"
"\n"
"  -e, --exe FILE          the ELF file (default a.out)\n"
"  -a, --addresses         print each address before its frames\n"
"  -f, --functions         print function names\n"
"  -i, --inlines           print the functions inlined at the address, innermost\n"
"                          first, each with the line of its call\n"
"  -C, --demangle          demangle C++ and Rust names\n"
"  -s, --basenames         print source file names without directories\n"
"      --debug-dir DIR     look for separate debug files under DIR (default\n"
"                          /usr/lib/debug): DIR/.build-id/xx/rest.debug, and\n"
"                          the .gnu_debuglink name in DIR/<the file's directory>\n"
"      --memo-size SIZE    keep the answers to at most SIZE of recent addresses\n"
"                          (MiB, or with a K, M or G suffix; default 64, 0: none):\n"
"                          repeated addresses are answered from it, and memory\n"
"                          stays bounded however many addresses come\n"
"      --no-cache          neither read nor write the cache of answers (below)\n"
"  -h, --help              show this help\n"
"\n"
"Answers are kept between runs, per build-id, for files whose symbols and DWARF\n"
"are their own: the second run on a file reads its answers instead of its\n"
"DWARF. The cache is $XDG_CACHE_HOME/profiler, else /var/cache/profiler for\n"
"root, else ~/.cache/profiler (at most 1 GiB, least recently used files go).\n"
"\n"
"Debug information is read from the file itself, else from its separate debug\n"
"file (build-id or .gnu_debuglink, CRC checked, also next to the file and in\n"
"its .debug/ directory), else from debuginfod when DEBUGINFOD_URLS is set; a\n"
"stripped file's MiniDebugInfo (.gnu_debugdata) still names its functions.\n"
"\n"
"Exit status: 0 success, 1 the file cannot be read, 2 usage error.\n";
/* clang-format on */

struct symbolize_opts {
	const char *exe;
	const char *debug_dir;
	size_t memo_size; /* bytes */
	bool no_cache;
	bool addresses, functions, inlines, demangle, basenames;
};

enum {
	OPT_DEBUG_DIR = 256,
	OPT_MEMO_SIZE,
	OPT_NO_CACHE,
};

/* The default --memo-size: a profile's hot addresses fit many times over. */
#define DEFAULT_MEMO_SIZE (64 << 20)

static const struct option long_options[] = {
	{ "exe", required_argument, NULL, 'e' },
	{ "addresses", no_argument, NULL, 'a' },
	{ "functions", no_argument, NULL, 'f' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "demangle", no_argument, NULL, 'C' },
	{ "basenames", no_argument, NULL, 's' },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "memo-size", required_argument, NULL, OPT_MEMO_SIZE },
	{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parse a hex address, with or without 0x, surrounded by blanks; -EINVAL otherwise. */
static int parse_address(const char *s, size_t len, uint64_t *addr)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (len - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	for (; i < len; i++, digits++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (digits == 16)
			return -EINVAL;
		v = v << 4 | d;
	}
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (!digits || i != len)
		return -EINVAL;
	*addr = v;
	return 0;
}

/* Parse --memo-size's SIZE: MiB, or with a K, M or G suffix (KiB...); -EINVAL otherwise. */
static int parse_memo_size(const char *s, size_t *bytes)
{
	unsigned long long v;
	unsigned int shift = 20;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || v > (SIZE_MAX >> shift))
		return -EINVAL;
	*bytes = (size_t)v << shift;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* A growing text buffer; appends after a failed allocation are dropped and remembered. */
struct text {
	char *buf;
	size_t len, alloc;
	bool failed;
};

static void text__add(struct text *t, const char *s, size_t len)
{
	if (t->len + len > t->alloc) {
		size_t alloc = t->alloc ? t->alloc : 256;
		char *tmp;

		while (alloc < t->len + len)
			alloc *= 2;
		tmp = realloc(t->buf, alloc);
		if (!tmp) {
			t->failed = true;
			return;
		}
		t->buf = tmp;
		t->alloc = alloc;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
}

static void text__str(struct text *t, const char *s)
{
	text__add(t, s, strlen(s));
}

static void text__uint(struct text *t, uint32_t v)
{
	char digits[10];
	int n = 0;

	do
		digits[sizeof(digits) - ++n] = '0' + v % 10;
	while ((v /= 10));
	text__add(t, digits + sizeof(digits) - n, n);
}

/*
 * The frames of @f (NULL: not an address) as addr2line prints them. By hand
 * rather than with printf: for a profile's worth of distinct addresses,
 * formatting was a third of the time.
 */
static void format_frames(struct text *out, const struct profile_frame *f,
			  const struct symbolize_opts *o)
{
	uint32_t nr = f && o->inlines ? f->nr_lines : 1;

	for (uint32_t i = 0; i < nr; i++) {
		const struct profile_line *l = f ? &f->lines[i] : NULL;
		const char *name = NULL;

		if (o->functions) {
			/* Unnamed code stays "??": the placeholder names are the profiler's own. */
			if (l && l->system_name)
				name = o->demangle ? l->name : l->system_name;
			text__str(out, name ? name : "??");
			text__add(out, "\n", 1);
		}
		if (!l || !l->filename) {
			text__add(out, "??:0\n", 5);
			continue;
		}
		text__str(out, o->basenames ? base_name(l->filename) : l->filename);
		text__add(out, ":", 1);
		text__uint(out, l->line);
		if (i == 0 && l->discriminator) {
			text__str(out, " (discriminator ");
			text__uint(out, l->discriminator);
			text__add(out, ")", 1);
		}
		text__add(out, "\n", 1);
	}
}

/*
 * What answers addresses: the symbolizer, and the text of the answers to
 * recent addresses, by address, bounded (--memo-size). Profiles and scripts
 * ask for the same addresses over and over; formatting the answer again
 * cost more than finding it. A stream of distinct addresses would make an
 * unbounded memo as large as the output.
 */
struct answerer {
	struct symbolizer *sym;
	const struct profile_mapping *mapping;
	const struct symbolize_opts *o;
	struct lru *memo;
	struct symbolizer_answer frame; /* the frame being formatted */
	struct text scratch;
	struct text invalid; /* the answer to what is not an address */
};

/*
 * The text of the answer for @addr (@valid: it parsed) into *@text and
 * *@len, valid until the next call; -ENOMEM.
 */
static int answerer__find(struct answerer *a, uint64_t addr, bool valid, const char **text,
			  size_t *len)
{
	const struct profile_frame *f;

	if (!valid) {
		if (!a->invalid.len)
			format_frames(&a->invalid, NULL, a->o);
		if (a->invalid.failed)
			return -ENOMEM;
		*text = a->invalid.buf;
		*len = a->invalid.len;
		return 0;
	}
	*text = lru__find(a->memo, addr, len);
	if (*text)
		return 0;
	f = symbolizer__elf_lookup(a->sym, a->mapping, addr, &a->frame);
	if (!f)
		return -ENOMEM;
	a->scratch.len = 0;
	format_frames(&a->scratch, f, a->o);
	if (a->scratch.failed)
		return -ENOMEM;
	*text = a->scratch.buf;
	*len = a->scratch.len;
	/* Kept from an address's second time on: most of a random stream comes once. */
	if (!lru__admit(a->memo, addr))
		return 0;
	return lru__add(a->memo, addr, a->scratch.buf, a->scratch.len);
}

/* Free what @a holds; again is a no-op. */
static void answerer__release(struct answerer *a)
{
	lru__free(a->memo);
	free(a->invalid.buf);
	free(a->scratch.buf);
	a->memo = NULL;
	a->invalid.buf = a->scratch.buf = NULL;
}

/* Print the answer for @addr (@valid: it parsed) as addr2line does; 0 or -ENOMEM. */
static int answer(struct answerer *a, uint64_t addr, bool valid)
{
	static const char digits[] = "0123456789abcdef";
	const char *text;
	size_t len;
	int err;

	/* printf's "0x%016llx" was a tenth of a repeated address's cost. */
	if (a->o->addresses) {
		char line[2 + 16 + 1];

		line[0] = '0';
		line[1] = 'x';
		for (int i = 0; i < 16; i++)
			line[2 + i] = digits[(addr >> (60 - 4 * i)) & 0xf];
		line[18] = '\n';
		fwrite_unlocked(line, 1, sizeof(line), stdout);
	}
	err = answerer__find(a, addr, valid, &text, &len);
	if (err)
		return err;
	fwrite_unlocked(text, 1, len, stdout);
	return 0;
}

static int answer_cb(void *ctx, uint64_t addr, bool valid)
{
	return answer(ctx, addr, valid);
}

/* Call @fn for the line @s of @len bytes (not terminated): its address, or not one. */
static int read_line(const char *s, size_t len, symbolize_address_fn fn, void *ctx)
{
	uint64_t addr = 0;
	bool valid = len <= SYMBOLIZE_MAX_LINE && !parse_address(s, len, &addr);

	return fn(ctx, addr, valid);
}

/*
 * Each read's complete lines are answered and stdout flushed before the
 * next read blocks, so a script feeding one address at a time gets each
 * answer at once, and a pipe of a million addresses is not flushed a
 * million times.
 */
int symbolize_read_addresses(int fd, char *buf, size_t size, symbolize_address_fn fn, void *ctx)
{
	bool skipping = false; /* inside a line too long to be an address */
	size_t len = 0;
	int err = 0;
	ssize_t n;

	while (!err) {
		size_t start = 0;
		char *nl;

		/* Never full: the loop below leaves at most SYMBOLIZE_MAX_LINE bytes. */
		n = read(fd, buf + len, size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			/* A last line without a newline. */
			if (len && !skipping)
				err = read_line(buf, len, fn, ctx);
			break;
		}
		len += n;
		while (!err && (nl = memchr(buf + start, '\n', len - start))) {
			size_t line_len = nl - (buf + start);

			if (!skipping)
				err = read_line(buf + start, line_len, fn, ctx);
			skipping = false;
			start += line_len + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (!err && len > SYMBOLIZE_MAX_LINE) {
			if (!skipping)
				err = fn(ctx, 0, false);
			skipping = true;
			len = 0;
		}
		if (fflush(stdout))
			break;
	}
	if (!err && (fflush(stdout) || ferror(stdout)))
		err = -EIO;
	return err;
}

int symbolize_main(int argc, char **argv)
{
	struct symbolize_opts o = { .exe = "a.out", .memo_size = DEFAULT_MEMO_SIZE };
	struct answerer a = { .o = &o };
	struct symbolizer_opts sopts = { 0 };
	struct symbolizer *sym = NULL;
	struct strset *strings;
	char *cache_dir = NULL;
	int c, err, ret = 1;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":e:afiCsh", long_options, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.exe = optarg;
			break;
		case 'a':
			o.addresses = true;
			break;
		case 'f':
			o.functions = true;
			break;
		case 'i':
			o.inlines = true;
			break;
		case 'C':
			o.demangle = true;
			break;
		case 's':
			o.basenames = true;
			break;
		case OPT_DEBUG_DIR:
			o.debug_dir = optarg;
			break;
		case OPT_MEMO_SIZE:
			if (parse_memo_size(optarg, &o.memo_size)) {
				fprintf(stderr,
					"profiler: symbolize: invalid --memo-size '%s': a size in MiB, or with a K, M or G suffix\n",
					optarg);
				return 2;
			}
			break;
		case OPT_NO_CACHE:
			o.no_cache = true;
			break;
		case 'h':
			fputs(symbolize_usage, stdout);
			return 0;
		case ':':
			fprintf(stderr,
				"profiler: symbolize: option '%s' needs an argument (see --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "profiler: symbolize: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}

	strings = strset__new();
	sopts.debug_dir = o.debug_dir;
	if (!o.no_cache)
		sopts.cache_dir = cache_dir = cache_dir__default();
	sopts.cache_producer = "profiler " PROFILER_VERSION;
	if (strings)
		sym = symbolizer__new(strings, &sopts);
	a.memo = lru__new(o.memo_size);
	if (!sym || !a.memo) {
		fprintf(stderr, "profiler: symbolize: %s\n", strerror(ENOMEM));
		goto out;
	}
	a.sym = sym;
	err = symbolizer__open_elf(sym, o.exe, &a.mapping);
	if (err) {
		fprintf(stderr, "profiler: symbolize: cannot read '%s': %s\n", o.exe,
			err == -ENOEXEC ? "not an ELF file, or a truncated one" : strerror(-err));
		goto out;
	}
	setvbuf(stdout, stdout_buf, _IOFBF, sizeof(stdout_buf));
	if (optind < argc) {
		for (int i = optind; i < argc && !err; i++)
			err = read_line(argv[i], strlen(argv[i]), answer_cb, &a);
		if (!err && fflush(stdout))
			err = -EIO;
	} else {
		static char buf[1 << 16];

		err = symbolize_read_addresses(STDIN_FILENO, buf, sizeof(buf), answer_cb, &a);
	}
	if (err == -ENOMEM)
		fprintf(stderr, "profiler: symbolize: %s\n", strerror(ENOMEM));
	else if (err == -EIO)
		fprintf(stderr, "profiler: symbolize: cannot write the output\n");
	else if (err)
		fprintf(stderr, "profiler: symbolize: cannot read stdin: %s\n", strerror(-err));
	if (!err)
		ret = 0;
	/*
	 * The answers are out, and stdout is closed, so that whoever reads them
	 * is done before the cache is learned and written; the memo's room is
	 * the cache's now.
	 */
	if (fclose(stdout) && !err) {
		fprintf(stderr, "profiler: symbolize: cannot write the output\n");
		ret = 1;
	}
	answerer__release(&a);
	/* The memo's many small blocks back to the system, before the cache takes its share. */
	malloc_trim(0);
	symbolizer__save_cache(sym);
out:
	answerer__release(&a);
	free(cache_dir);
	symbolizer__free(sym);
	strset__free(strings);
	return ret;
}
