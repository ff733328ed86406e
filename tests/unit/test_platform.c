// SPDX-License-Identifier: GPL-2.0-only
/* The kernel releases the profiler takes and refuses, as uname -r writes them. */
#include "cli/platform.h"
#include "test.h"

TEST(platform_release_at_least)
{
	CHECK(platform__release_at_least("6.1.0-13-amd64", 5, 17));
	CHECK(platform__release_at_least("5.17.0", 5, 17));
	CHECK(platform__release_at_least("5.17-rc3", 5, 17));
	CHECK(platform__release_at_least("10.0.1", 5, 17));
	CHECK(!platform__release_at_least("5.16.20", 5, 17));
	CHECK(!platform__release_at_least("5.4.0-150-generic", 5, 17));
	CHECK(!platform__release_at_least("4.19.0", 5, 17));
	CHECK(!platform__release_at_least("", 5, 17));
	CHECK(!platform__release_at_least("linux", 5, 17));
	CHECK(!platform__release_at_least("6", 5, 17));
}
