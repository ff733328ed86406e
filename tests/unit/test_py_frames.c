// SPDX-License-Identifier: GPL-2.0-only
/* Python frames as addresses: one per (name, file, line, start), back to the same names. */
#include "common/py_frames.h"
#include "test.h"

/* hot70 at @line of its body, which starts at line 33. */
#define HOT70(line) ((struct py_frame_name){ "hot70", "/w/py_work.py", (line), 33, false })

TEST(py_frames_addresses)
{
	struct py_frames t;
	uint64_t a, b, c, again, js;
	const struct py_frame_name *n;

	CHECK(py_frames__init(&t) == 0);
	CHECK(py_frames__add(&t, &HOT70(34), &a) == 0);
	CHECK(py_frames__add(&t, &HOT70(35), &b) == 0);
	CHECK(py_frames__add(&t, &(struct py_frame_name){ .name = "Outer.<locals>.f" }, &c) == 0);
	CHECK(py_frames__add(&t, &HOT70(34), &again) == 0);
	/* The same function and line, of JavaScript: a frame of its own. */
	CHECK(py_frames__add(&t, &(struct py_frame_name){ "hot70", "/w/py_work.py", 34, 33, true },
			     &js) == 0);
	CHECK_U64(again, a);
	CHECK(a != b && b != c && js != a);
	/* In the hole between user and kernel addresses, apart from both. */
	CHECK(py_frames__is_addr(a) && py_frames__is_addr(c));
	CHECK(!py_frames__is_addr(0x7ffff7a00000) && !py_frames__is_addr(0xffffffff81000000));

	n = py_frames__get(&t, b);
	CHECK(n && !strcmp(n->name, "hot70") && !strcmp(n->filename, "/w/py_work.py"));
	CHECK_U64(n ? n->line : 0, 35);
	CHECK_U64(n ? n->start_line : 0, 33);
	/* The byte before, as a caller's return address is looked up, names the same. */
	CHECK(py_frames__get(&t, b - 1) == n);
	n = py_frames__get(&t, c);
	CHECK(n && !n->filename && !strcmp(n->name, "Outer.<locals>.f"));
	/* Not one of the table's. */
	CHECK(!py_frames__get(&t, PY_FRAME_ADDR_TAG | 100 << 4 | 8));
	CHECK(!py_frames__get(&t, 0x401000));
	py_frames__release(&t);
}
