// SPDX-License-Identifier: GPL-2.0-only
/* Which files are CPython interpreters of which release, and which releases are read. */
#include "collector/python_offsets.h"
#include "test.h"

static bool version_is(const char *path, unsigned int major, unsigned int minor)
{
	unsigned int a = 0, b = 0;

	return python_version_from_path(path, &a, &b) && a == major && b == minor;
}

TEST(python_version_of_file)
{
	unsigned int a, b;

	CHECK(version_is("/usr/bin/python3.11", 3, 11));
	CHECK(version_is("/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0", 3, 12));
	CHECK(version_is("libpython3.10.so", 3, 10));
	CHECK(version_is("/opt/py/lib/libpython3.6m.so.1.0", 3, 6));
	CHECK(version_is("/usr/bin/python2.7", 2, 7));
	/* Debug builds, other tools, other names. */
	CHECK(!python_version_from_path("/usr/bin/python3.11d", &a, &b));
	CHECK(!python_version_from_path("/usr/bin/python3.11-config", &a, &b));
	CHECK(!python_version_from_path("/usr/bin/python3", &a, &b));
	CHECK(!python_version_from_path("/usr/lib/libpythonista.so", &a, &b));
	CHECK(!python_version_from_path("/usr/lib/python3.11/lib-dynload/zlib.so", &a, &b));
}

TEST(python_offsets_releases)
{
	static const unsigned int supported[] = { 10, 11, 12, 13 };

	for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++) {
		const struct python_offsets *off = python_offsets__find(3, supported[i]);

		CHECK(off && off->version == (3 << 8 | supported[i]));
		/* Every field the BPF program reads lies in the bytes it reads of a frame. */
		CHECK(off && off->frame_size > off->frame_instr && off->frame_size <= 128);
	}
	CHECK(!python_offsets__find(3, 9));
	CHECK(!python_offsets__find(3, 14));
	CHECK(!python_offsets__find(2, 7));
}
