// SPDX-License-Identifier: GPL-2.0-only
/* The command line: every usage error is caught with a message a user can act on. */
#include <errno.h>
#include <string.h>

#include "cli/options.h"
#include "test.h"

#define MAX_FREQ 100000

static int parse(struct options *o, char *err, size_t size, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return options__parse(o, argc, argv, MAX_FREQ, err, size);
}

#define PARSE(o, err, ...) parse(o, err, sizeof(err), (char *[]){ "profiler", __VA_ARGS__, NULL })

TEST(options_pids_and_defaults)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "-p", "12,34") == 0);
	CHECK_U64(o.nr_pids, 2);
	CHECK_U64(o.pids[0], 12);
	CHECK_U64(o.pids[1], 34);
	CHECK_U64(o.freq_hz, 99);
	CHECK_U64(o.duration_ns, 0);
	CHECK_U64(o.outputs[0].format, EXPORT_PPROF);
	CHECK_STR(o.outputs[0].path, "profile.pb.gz");
	CHECK(o.command == NULL);
	options__release(&o);
}

TEST(options_command_after_dashes)
{
	/* o.command points into argv, which must outlive it. */
	char *argv[] = { "profiler", "-F", "499", "-d", "2.5", "--", "ls", "-l", NULL };
	struct options o;
	char err[256];

	CHECK(parse(&o, err, sizeof(err), argv) == 0);
	CHECK(o.command != NULL);
	CHECK_STR(o.command[0], "ls");
	CHECK_STR(o.command[1], "-l");
	CHECK(o.command[2] == NULL);
	CHECK_U64(o.freq_hz, 499);
	CHECK_U64(o.duration_ns, 2500000000ULL);
	options__release(&o);
}

TEST(options_format_from_extension_and_flag)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "-p", "1", "-o", "x.folded") == 0);
	CHECK_U64(o.outputs[0].format, EXPORT_FOLDED);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "-o", "dir/x.pb") == 0);
	CHECK_U64(o.outputs[0].format, EXPORT_PPROF);
	options__release(&o);
	/* -f wins over the extension; folded without -o goes to stdout. */
	CHECK(PARSE(&o, err, "-p", "1", "-f", "folded") == 0);
	CHECK_U64(o.outputs[0].format, EXPORT_FOLDED);
	CHECK_STR(o.outputs[0].path, "-");
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "-f", "pprof", "-o", "out.txt") == 0);
	CHECK_U64(o.outputs[0].format, EXPORT_PPROF);
	options__release(&o);
	/* stdout without -f: text, for a pipe. */
	CHECK(PARSE(&o, err, "-p", "1", "-o", "-") == 0);
	CHECK_U64(o.outputs[0].format, EXPORT_FOLDED);
	options__release(&o);
}

TEST(options_several_outputs)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "-p", "1", "-o", "a.pb.gz", "-o", "a.json.gz", "-o", "a.svg", "-o",
		    "-", "-o", "a.json") == 0);
	CHECK_U64(o.nr_outputs, 5);
	CHECK_STR(o.outputs[0].path, "a.pb.gz");
	CHECK_U64(o.outputs[0].format, EXPORT_PPROF);
	CHECK_U64(o.outputs[1].format, EXPORT_FIREFOX);
	CHECK_U64(o.outputs[2].format, EXPORT_SVG);
	/* stdout without -f: folded, for a pipe. */
	CHECK_U64(o.outputs[3].format, EXPORT_FOLDED);
	CHECK_U64(o.outputs[4].format, EXPORT_FIREFOX);
	options__release(&o);
	/* -f names the format of the one output, whatever its name. */
	CHECK(PARSE(&o, err, "-p", "1", "-f", "svg", "-o", "flame") == 0);
	CHECK_U64(o.nr_outputs, 1);
	CHECK_U64(o.outputs[0].format, EXPORT_SVG);
	options__release(&o);
}

/* Each usage error: parse fails and the message names the cause. */
static bool rejects(const char *expect, char **argv)
{
	struct options o;
	char err[256] = "";
	int argc = 0, ret;

	while (argv[argc])
		argc++;
	ret = options__parse(&o, argc, argv, MAX_FREQ, err, sizeof(err));
	options__release(&o);
	if (ret != -EINVAL || !strstr(err, expect)) {
		test__fail(__FILE__, __LINE__, "expected '%s', got %d '%s'", expect, ret, err);
		return false;
	}
	return true;
}

#define REJECTS(expect, ...) CHECK(rejects(expect, (char *[]){ "profiler", __VA_ARGS__, NULL }))

/* --version needs no target, as --help does, and the help lists it. */
TEST(options_version)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "--version") == 0);
	CHECK(o.version);
	options__release(&o);
	CHECK(PARSE(&o, err, "-V") == 0);
	CHECK(o.version);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1") == 0);
	CHECK(!o.version);
	options__release(&o);
	CHECK(strstr(options_usage, "-V, --version") != NULL);
}

/* Folded stacks and flame graphs start with the process name unless told otherwise. */
TEST(options_root_frame)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "-p", "1", "-o", "x.folded") == 0);
	CHECK_U64(o.export.root, PROFILE_ROOT_COMM);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "--root-frame", "cmdline", "-o", "x.svg") == 0);
	CHECK_U64(o.export.root, PROFILE_ROOT_CMDLINE);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "--root-frame", "none") == 0);
	CHECK_U64(o.export.root, PROFILE_ROOT_NONE);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "--root-frame", "labels") == 0);
	CHECK_U64(o.export.root, PROFILE_ROOT_LABELS);
	options__release(&o);
	CHECK(PARSE(&o, err, "-p", "1", "--root-frame", "comm") == 0);
	CHECK_U64(o.export.root, PROFILE_ROOT_COMM);
	options__release(&o);
}

TEST(options_usage_errors)
{
	REJECTS("nothing to profile", "-F", "99");
	REJECTS("invalid frequency '0'", "-F", "0", "-p", "1");
	REJECTS("invalid frequency '-5'", "-F", "-5", "-p", "1");
	REJECTS("perf_event_max_sample_rate", "-F", "100001", "-p", "1");
	REJECTS("invalid pid 'x'", "-p", "x");
	REJECTS("invalid pid '0'", "-p", "0");
	REJECTS("invalid pid list", "-p", ",");
	REJECTS("unknown format 'svgz'", "-f", "svgz", "-p", "1");
	REJECTS("cannot tell the format of 'out.bin'", "-o", "out.bin", "-p", "1");
	REJECTS("cannot be combined", "-p", "1", "--", "ls");
	REJECTS("invalid duration 'abc'", "-d", "abc", "-p", "1");
	REJECTS("invalid duration '0'", "-d", "0", "-p", "1");
	REJECTS("unknown option", "--frobnicate", "-p", "1");
	REJECTS("unknown option '-z'", "-z", "-p", "1");
	REJECTS("needs an argument", "-p");
	REJECTS("unexpected argument 'ls'", "-p", "1", "ls");
	REJECTS("-o 'a.pb.gz' given twice", "-p", "1", "-o", "a.pb.gz", "-o", "a.pb.gz");
	REJECTS("-f with several -o", "-p", "1", "-f", "svg", "-o", "a", "-o", "b");
	REJECTS("cannot tell the format of 'b.xyz'", "-p", "1", "-o", "a.svg", "-o", "b.xyz");
	REJECTS("invalid --root-frame 'pid': use comm, cmdline, labels or none", "-p", "1",
		"--root-frame", "pid");
	REJECTS("too many -o", "-p", "1", "-o", "1.svg", "-o", "2.svg", "-o", "3.svg", "-o",
		"4.svg", "-o", "5.svg", "-o", "6.svg", "-o", "7.svg", "-o", "8.svg", "-o", "9.svg");
}

/* profiler serve: the whole machine on loopback unless told otherwise; no file, no -d, no command. */
TEST(options_serve)
{
	struct options o;
	char err[256];

	CHECK(PARSE(&o, err, "serve") == 0);
	CHECK(o.serve);
	CHECK(o.system_wide);
	CHECK_STR(o.listen, "127.0.0.1:7071");
	CHECK_U64(o.nr_outputs, 0);
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "--listen", "[::]:9000", "-p", "42", "--off-cpu", "-F",
		    "49") == 0);
	CHECK_STR(o.listen, "[::]:9000");
	CHECK(!o.system_wide);
	CHECK_U64(o.nr_pids, 1);
	CHECK(o.offcpu);
	CHECK_U64(o.freq_hz, 49);
	options__release(&o);

	CHECK(PARSE(&o, err, "serve", "--", "sleep", "1") == -EINVAL);
	CHECK(strstr(err, "takes no command"));
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "-o", "x.pb.gz") == -EINVAL);
	CHECK(strstr(err, "writes no file"));
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "-d", "5") == -EINVAL);
	CHECK(strstr(err, "no -d"));
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "--wall") == -EINVAL);
	CHECK(strstr(err, "--wall"));
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "-a", "-p", "1") == -EINVAL);
	options__release(&o);
	CHECK(PARSE(&o, err, "serve", "--listen", "7071") == -EINVAL);
	CHECK(strstr(err, "HOST:PORT"));
	options__release(&o);
	/* --listen belongs to serve; "serve" is no target of a recording. */
	CHECK(PARSE(&o, err, "--listen", "127.0.0.1:1", "-a") == -EINVAL);
	CHECK(strstr(err, "profiler serve"));
	options__release(&o);
	CHECK(PARSE(&o, err, "-a", "serve") == -EINVAL);
	options__release(&o);
}
