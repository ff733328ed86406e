// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpf_hot.bpf.c - a BPF program that costs its caller real time, for
 * tests/e2e/bpf_code.sh: at each system call the process of bpf_hot.c
 * enters, it mixes a number many times over, in a function of its own
 * called through bpf_loop(); or, as a uprobe, at each call of one of its
 * functions; or, as an XDP program, at each packet a device receives.
 * Built with -g: its BTF has its lines.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* The process whose system calls cost (bpf_hot.c sets it), and the rounds per call. */
const volatile __u32 target_tgid;
const volatile __u32 rounds = 2000;

#define ETH_P_IP 0x0800 /* a macro of the uapi's, not in vmlinux.h */

__u64 sink;

/* What bpf_hot.c updates from user space with `bpf_hot SECONDS maps`. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* One round of a 64-bit linear congruential generator, folded. */
static long mix_round(__u64 index, void *ctx)
{
	__u64 *x = ctx;

	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	*x ^= *x >> 29;
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(hot_syscall_enter, struct pt_regs *regs, long id)
{
	__u64 x = id;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	bpf_loop(rounds, mix_round, &x, 0);
	sink += x;
	return 0;
}

/*
 * The same work on bpf_hot.c's probed(), attached as a uprobe with
 * `bpf_hot SECONDS uprobe`: the kernel runs no perf_event BPF program on
 * the CPU meanwhile, so the profiler's samples that fall here are not taken.
 */
SEC("uprobe")
int BPF_KPROBE(hot_uprobe)
{
	__u64 x = 1;

	bpf_loop(rounds, mix_round, &x, 0);
	sink += x;
	return 0;
}

/*
 * The same work at each UDP packet a network device receives, as an XDP
 * program, which then drops it (`bpf_hot SECONDS xdp ...`); other packets
 * (ARP's) pass. The kernel runs it in the softirq that polls the device,
 * here in the context of the process that sent the packet.
 */
SEC("xdp")
int hot_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u64 x;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	x = ip->saddr;
	bpf_loop(rounds, mix_round, &x, 0);
	sink += x;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
