// SPDX-License-Identifier: GPL-2.0-only
/* Messages as a terminal gets them: what a target wrote cannot drive it. */
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "test.h"

/* log_write_escaped(@s) into a malloc()ed string. */
static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	log_write_escaped(f, s);
	fclose(f);
	return buf;
}

static void check_escaped(const char *s, const char *want)
{
	char *got = escaped(s);

	CHECK_STR(got ? got : "(null)", want);
	free(got);
}

TEST(log_escapes_what_a_terminal_obeys)
{
	/* Positive precondition: printable text, tabs and UTF-8 names stay as they are. */
	check_escaped("jvm: pid 42: refused: no\tsuch command",
		      "jvm: pid 42: refused: no\tsuch command");
	check_escaped("'/tmp/caf\xc3\xa9.so' \xe2\x82\xac \xf0\x9f\x94\xa5",
		      "'/tmp/caf\xc3\xa9.so' \xe2\x82\xac \xf0\x9f\x94\xa5");
	/* A JVM's answer that clears the screen, retitles the window and forges a line. */
	check_escaped("refused: \x1b[2J\x1b]0;pwned\x07\nprofiler: wrote /etc/shadow\r",
		      "refused: \\x1b[2J\\x1b]0;pwned\\x07\\nprofiler: wrote /etc/shadow\\x0d");
	/* C1 controls, as a byte (malformed) and as UTF-8 (U+009B, CSI), DEL, a backslash. */
	check_escaped("a\x9b"
		      "31mb",
		      "a\\x9b31mb");
	check_escaped("a\xc2\x9b"
		      "31mb\x7f",
		      "a\\xc2\\x9b31mb\\x7f");
	check_escaped("C:\\x", "C:\\\\x");
	/* Malformed UTF-8: an overlong form, a truncated sequence. */
	check_escaped("\xc0\xaf"
		      "x\xe2\x82",
		      "\\xc0\\xafx\\xe2\\x82");
}
