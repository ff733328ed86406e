// SPDX-License-Identifier: GPL-2.0-only
/*
 * `profiler symbolize`: addr2line on the command line and in its output,
 * with the profiler's own symbolizer, so that scripts can use it in
 * addr2line's place and tests can hold it against the other symbolizers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strset.h"
#include "symbolize.h"
#include "symbolize/symbolizer.h"

/* Longer input lines are not addresses; their bytes are skipped, not buffered. */
#define MAX_LINE 4096

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
"  -h, --help              show this help\n"
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
	bool addresses, functions, inlines, demangle, basenames;
};

enum {
	OPT_DEBUG_DIR = 256
};

static const struct option long_options[] = {
	{ "exe", required_argument, NULL, 'e' },
	{ "addresses", no_argument, NULL, 'a' },
	{ "functions", no_argument, NULL, 'f' },
	{ "inlines", no_argument, NULL, 'i' },
	{ "demangle", no_argument, NULL, 'C' },
	{ "basenames", no_argument, NULL, 's' },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Print the answer for @addr (@valid: it parsed) as addr2line does. */
static void print_frames(struct symbolizer *sym, const struct profile_mapping *mapping,
			 const struct symbolize_opts *o, uint64_t addr, bool valid)
{
	const struct profile_frame *f = NULL;
	uint32_t nr = 1;

	if (o->addresses)
		printf("0x%016llx\n", (unsigned long long)addr);
	if (valid) {
		f = symbolizer__elf_frame(sym, mapping, addr);
		nr = o->inlines ? f->nr_lines : 1;
	}
	for (uint32_t i = 0; i < nr; i++) {
		const struct profile_line *l = f ? &f->lines[i] : NULL;
		const char *name = NULL;

		if (o->functions) {
			/* Unnamed code stays "??": the placeholder names are the profiler's own. */
			if (l && l->system_name)
				name = o->demangle ? l->name : l->system_name;
			puts(name ? name : "??");
		}
		if (!l || !l->filename) {
			puts("??:0");
			continue;
		}
		printf("%s:%u", o->basenames ? base_name(l->filename) : l->filename, l->line);
		if (i == 0 && l->discriminator)
			printf(" (discriminator %u)", l->discriminator);
		putchar('\n');
	}
}

/*
 * Answer the addresses on stdin. Each read's complete lines are answered
 * and flushed before the next read blocks, so a script feeding one address
 * at a time gets each answer at once, and a pipe of a million addresses is
 * not flushed a million times.
 */
static int symbolize_stdin(struct symbolizer *sym, const struct profile_mapping *mapping,
			   const struct symbolize_opts *o)
{
	static char buf[1 << 16];
	size_t len = 0;
	bool skipping = false; /* inside a line too long to be an address */
	ssize_t n;

	for (;;) {
		size_t start = 0;
		char *nl;

		n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pr_warn("symbolize: cannot read stdin: %s", strerror(errno));
			return -errno;
		}
		if (n == 0) {
			/* A last line without a newline. */
			if (len && !skipping) {
				uint64_t addr = 0;
				bool valid = !parse_address(buf, len, &addr);

				print_frames(sym, mapping, o, addr, valid);
			}
			break;
		}
		len += n;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			size_t line_len = nl - (buf + start);
			uint64_t addr = 0;

			if (skipping) {
				skipping = false;
			} else {
				bool valid = !parse_address(buf + start, line_len, &addr);

				print_frames(sym, mapping, o, addr, valid);
			}
			start += line_len + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > MAX_LINE) {
			if (!skipping)
				print_frames(sym, mapping, o, 0, false);
			skipping = true;
			len = 0;
		}
		if (fflush(stdout))
			break;
	}
	return fflush(stdout) || ferror(stdout) ? -EIO : 0;
}

int symbolize_main(int argc, char **argv)
{
	struct symbolize_opts o = { .exe = "a.out" };
	const struct profile_mapping *mapping;
	struct symbolizer_opts sopts = { 0 };
	struct symbolizer *sym = NULL;
	struct strset *strings;
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
	if (strings)
		sym = symbolizer__new(strings, &sopts);
	if (!sym) {
		fprintf(stderr, "profiler: symbolize: %s\n", strerror(ENOMEM));
		goto out;
	}
	err = symbolizer__open_elf(sym, o.exe, &mapping);
	if (err) {
		fprintf(stderr, "profiler: symbolize: cannot read '%s': %s\n", o.exe,
			err == -ENOEXEC ? "not an ELF file, or a truncated one" : strerror(-err));
		goto out;
	}
	if (optind < argc) {
		for (int i = optind; i < argc; i++) {
			uint64_t addr = 0;
			bool valid = !parse_address(argv[i], strlen(argv[i]), &addr);

			print_frames(sym, mapping, &o, addr, valid);
		}
		err = fflush(stdout) ? -EIO : 0;
	} else {
		err = symbolize_stdin(sym, mapping, &o);
	}
	if (err) {
		fprintf(stderr, "profiler: symbolize: cannot write the output: %s\n",
			strerror(-err));
		goto out;
	}
	ret = 0;
out:
	symbolizer__free(sym);
	strset__free(strings);
	return ret;
}
