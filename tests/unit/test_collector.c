// SPDX-License-Identifier: GPL-2.0-only
/* What the collector checks before it loads anything. */
#include <errno.h>
#include <unistd.h>

#include "collector/collector.h"
#include "common/log.h"
#include "test.h"

static void quiet(enum log_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
}

TEST(collector_offcpu_needs_sched_switch)
{
	log_print_fn old = log_set_print(quiet);

	/* Our own BPF object (beside the fixtures) has BTF, but no kernel tracepoints. */
	CHECK(collector__check_offcpu(test__fixture("../profile.bpf.o")) == -ENOTSUP);
	CHECK(collector__check_offcpu("/nonexistent/btf") == -ENOTSUP);
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		CHECK(collector__check_offcpu("/sys/kernel/btf/vmlinux") == 0);
	log_set_print(old);
}
