// SPDX-License-Identifier: GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf/profile.h"
#include "common/hashtab.h"
#include "common/log.h"
#include "proc_maps.h"
#include "unwind.h"
#include "unwind_table.h"

/* Load segments kept per file: executables and libraries have two to four. */
#define MAX_SEGMENTS 16
/* Entries of a DWARF expression's stack: CFI expressions use two or three. */
#define EXPR_STACK 16
/* The vDSO is two to four pages; refuse to read anything much larger. */
#define VDSO_MAX_SIZE (1 << 20)
/* The longest GNU build-id we key by, in bytes; longer ones are not keys. */
#define BUILD_ID_BYTES 64

struct segment {
	uint64_t offset, filesz, vaddr;
	bool exec;
};

/*
 * What unwinding needs of one ELF file, read the first time a frame is in
 * it: one per build-id, however many paths, inodes and containers map it.
 */
struct unwind_module {
	char build_id[2 * BUILD_ID_BYTES + 1]; /* the key, in hex; "" when the file has none */
	const struct mapped_file *file;	       /* the key when it has no build-id */
	void *image;			       /* the vDSO's copy, which @elf reads */
	Elf *elf;			       /* NULL: not an ELF file we can read */
	Dwarf *dwarf;			       /* for .debug_frame; NULL when there is none */
	Dwarf_CFI *eh_cfi;		       /* .eh_frame: ours to dwarf_cfi_end() */
	Dwarf_CFI *debug_cfi;		       /* .debug_frame: @dwarf's */
	size_t nr_segs;
	struct segment segs[MAX_SEGMENTS];
};

/* A mapped file and its module. */
struct unwind_file {
	const struct mapped_file *file;
	struct unwind_module *mod; /* NULL: memory ran out */
};

struct unwinder {
	struct hashtab files;	    /* of struct unwind_file, by mapped file */
	struct hashtab modules;	    /* of struct unwind_module, by build-id, else by file */
	struct unwind_module *vdso; /* read the first time a frame is in a vDSO */
	bool vdso_loaded;
};

/* The registers of one frame; a bit of @known per register whose value is known. */
struct regs {
	uint64_t v[PROFILE_NR_REGS];
	uint32_t known;
	bool signal; /* interrupted here by a signal: @v[IP] is exact, not a return address */
};

/* The copy of the user stack: @size bytes that were at @base. */
struct stack_copy {
	uint64_t base;
	const unsigned char *data;
	size_t size;
};

#define REG_BIT(r) (1U << (r))
#define ALL_REGS (REG_BIT(PROFILE_NR_REGS) - 1)

struct unwinder *unwinder__new(void)
{
	struct unwinder *u;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	hashtab__init(&u->files);
	hashtab__init(&u->modules);
	return u;
}

static void unwind_module__free(struct unwind_module *m)
{
	if (m->eh_cfi)
		dwarf_cfi_end(m->eh_cfi);
	dwarf_end(m->dwarf);
	elf_end(m->elf);
	free(m->image);
	free(m);
}

void unwinder__free(struct unwinder *u)
{
	struct unwind_module *m;
	struct unwind_file *f;
	size_t i;

	if (!u)
		return;
	hashtab__for_each_entry(&u->files, i, f)
		free(f);
	hashtab__release(&u->files);
	hashtab__for_each_entry(&u->modules, i, m)
		unwind_module__free(m);
	hashtab__release(&u->modules);
	if (u->vdso)
		unwind_module__free(u->vdso);
	free(u);
}

static bool file_eq(const void *entry, const void *key)
{
	return ((const struct unwind_file *)entry)->file == key;
}

/* A module's key: its build-id, or its file when it has none. */
struct module_key {
	const char *build_id;
	const struct mapped_file *file;
};

static bool module_eq(const void *entry, const void *key)
{
	const struct unwind_module *m = entry;
	const struct module_key *k = key;

	if (*k->build_id)
		return !strcmp(m->build_id, k->build_id);
	return !*m->build_id && m->file == k->file;
}

static uint64_t module_hash(const struct module_key *k)
{
	if (*k->build_id)
		return hash_bytes(k->build_id, strlen(k->build_id));
	return hash_mix(0, (uintptr_t)k->file);
}

/* Read the ELF image @m->elf, file or memory: its load segments and CFI. */
static void unwind_module__load(struct unwind_module *m)
{
	size_t nr_phdrs;

	if (!m->elf)
		return;
	if (elf_kind(m->elf) != ELF_K_ELF || elf_getphdrnum(m->elf, &nr_phdrs)) {
		elf_end(m->elf);
		m->elf = NULL;
		return;
	}
	for (size_t i = 0; i < nr_phdrs && m->nr_segs < MAX_SEGMENTS; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(m->elf, i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		m->segs[m->nr_segs++] = (struct segment){
			.offset = phdr.p_offset,
			.filesz = phdr.p_filesz,
			.vaddr = phdr.p_vaddr,
			.exec = phdr.p_flags & PF_X,
		};
	}
	m->eh_cfi = dwarf_getcfi_elf(m->elf);
	m->dwarf = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	if (m->dwarf)
		m->debug_cfi = dwarf_getcfi(m->dwarf);
}

/*
 * The module of @file's build-id, read the first time the build-id is seen
 * (any file with that build-id will do: the contents are the same). NULL
 * when memory runs out.
 */
static struct unwind_module *unwinder__find_module(struct unwinder *u,
						   const struct mapped_file *file)
{
	char build_id[2 * BUILD_ID_BYTES + 1] = "";
	struct module_key key = { build_id, file };
	Elf *elf = file->fd >= 0 ? elf_begin(file->fd, ELF_C_READ_MMAP, NULL) : NULL;
	const unsigned char *id;
	struct unwind_module *m;
	ssize_t len;
	uint64_t hash;

	len = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	for (ssize_t i = 0; len > 0 && len <= BUILD_ID_BYTES && i < len; i++)
		sprintf(build_id + 2 * i, "%02x", id[i]);
	hash = module_hash(&key);
	m = hashtab__find(&u->modules, hash, module_eq, &key);
	if (m) {
		elf_end(elf);
		return m;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		elf_end(elf);
		return NULL;
	}
	memcpy(m->build_id, build_id, sizeof(build_id));
	m->file = file;
	m->elf = elf;
	unwind_module__load(m);
	pr_debug("unwind: '%s' (build-id %s): %s%s", file->path, *build_id ? build_id : "none",
		 m->eh_cfi ? ".eh_frame " : "", m->debug_cfi ? ".debug_frame" : "");
	if (hashtab__insert(&u->modules, hash, m)) {
		unwind_module__free(m);
		return NULL;
	}
	return m;
}

/* The module of @file, found once per file. NULL when memory runs out. */
static struct unwind_module *unwinder__module(struct unwinder *u, const struct mapped_file *file)
{
	uint64_t hash = hash_mix(0, (uintptr_t)file);
	struct unwind_file *f = hashtab__find(&u->files, hash, file_eq, file);

	if (f)
		return f->mod;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->file = file;
	f->mod = unwinder__find_module(u, file);
	if (!f->mod || hashtab__insert(&u->files, hash, f)) {
		free(f);
		return NULL;
	}
	return f->mod;
}

/*
 * The vDSO, which no file backs: every 64-bit process of this kernel maps
 * the same one as we do, so read ours, @size bytes as the target maps it.
 * NULL when it cannot be read.
 */
static struct unwind_module *unwinder__vdso(struct unwinder *u, size_t size)
{
	struct unwind_module *m;
	struct iovec local, remote;
	uint64_t own = getauxval(AT_SYSINFO_EHDR);

	if (u->vdso_loaded)
		return u->vdso;
	u->vdso_loaded = true;
	if (!own || size > VDSO_MAX_SIZE || !(m = calloc(1, sizeof(*m))))
		return NULL;
	m->image = malloc(size);
	local = (struct iovec){ m->image, size };
	remote = (struct iovec){ (void *)(uintptr_t)own, size };
	/* Not memcpy(): a read past the end of our own vDSO must fail, not fault. */
	if (m->image && process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size) {
		m->elf = elf_memory(m->image, size);
		unwind_module__load(m);
	}
	u->vdso = m;
	return m;
}

/* The module of the file (or vDSO) that @map maps, or NULL. */
static struct unwind_module *unwinder__map_module(struct unwinder *u, const struct proc_map *map)
{
	struct unwind_module *m;

	if (map->file)
		m = unwinder__module(u, map->file);
	else if (!strcmp(map->name, "[vdso]"))
		m = unwinder__vdso(u, map->end - map->start);
	else
		return NULL;
	return m && m->elf ? m : NULL;
}

/* The load segment of @m that holds file offset @offset, preferring an executable one. */
static const struct segment *module_segment(const struct unwind_module *m, uint64_t offset)
{
	const struct segment *seg = NULL;

	for (size_t i = 0; i < m->nr_segs; i++) {
		const struct segment *s = &m->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz &&
		    (!seg || (s->exec && !seg->exec)))
			seg = s;
	}
	return seg;
}

const struct unwind_module *unwinder__table_module(struct unwinder *u, const struct proc_map *map,
						   uint64_t *bias)
{
	struct unwind_module *m = unwinder__map_module(u, map);
	const struct segment *seg;

	if (!m || !(m->eh_cfi || m->debug_cfi) || !(seg = module_segment(m, map->pgoff)))
		return NULL;
	*bias = map->start - map->pgoff + seg->offset - seg->vaddr;
	return m;
}

int unwind_module__build_table(const struct unwind_module *m, struct unwind_table *t)
{
	return unwind_table__build(t, m->elf, m->eh_cfi, m->debug_cfi);
}

const char *unwind_module__name(const struct unwind_module *m)
{
	return m->file ? m->file->path : "[vdso]";
}

/*
 * The CFI row for the code at @addr in @maps, or NULL when no mapped file
 * has CFI for it. The caller frees it.
 */
static Dwarf_Frame *unwinder__frame(struct unwinder *u, const struct proc_maps *maps, uint64_t addr)
{
	const struct proc_map *map = proc_maps__find(maps, addr);
	const struct segment *seg;
	struct unwind_module *m;
	Dwarf_Frame *frame;
	uint64_t offset, vaddr;

	if (!map || !(m = unwinder__map_module(u, map)))
		return NULL;
	offset = addr - map->start + map->pgoff;
	seg = module_segment(m, offset);
	if (!seg)
		return NULL;
	vaddr = offset - seg->offset + seg->vaddr;
	if (m->eh_cfi && !dwarf_cfi_addrframe(m->eh_cfi, vaddr, &frame))
		return frame;
	if (m->debug_cfi && !dwarf_cfi_addrframe(m->debug_cfi, vaddr, &frame))
		return frame;
	return NULL;
}

static bool stack_read(const struct stack_copy *mem, uint64_t addr, uint64_t *val)
{
	if (addr < mem->base || mem->size < sizeof(*val) ||
	    addr - mem->base > mem->size - sizeof(*val))
		return false;
	memcpy(val, mem->data + (addr - mem->base), sizeof(*val));
	return true;
}

/*
 * Evaluate the DWARF expression of a CFI rule, with @cfa for
 * DW_OP_call_frame_cfa. *@is_value tells whether the result is the value
 * itself (the expression ends with DW_OP_stack_value) or the address where
 * it is saved. Only what CFI uses is supported: registers, constants,
 * arithmetic, comparisons and reads from the stack copy, which is what
 * compilers and glibc's hand-written CFI (PLT entries, signal trampolines)
 * emit. 0, -ENOENT (a register not known), -EFAULT (a read outside the
 * copy, at *@out) or -EINVAL (anything else).
 */
static int eval_ops(const Dwarf_Op *ops, size_t nops, const struct regs *r, uint64_t cfa,
		    const struct stack_copy *mem, uint64_t *out, bool *is_value)
{
	uint64_t st[EXPR_STACK], a, b;
	size_t n = 0;

	*is_value = false;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		int64_t offset;
		int reg = unwind_op_breg(op, &offset);

		if (n == EXPR_STACK)
			return -EINVAL;
		if (reg >= 0) {
			if (reg >= PROFILE_NR_REGS || !(r->known & REG_BIT(reg)))
				return -ENOENT;
			st[n++] = r->v[reg] + offset;
			continue;
		}
		if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
			st[n++] = op->atom - DW_OP_lit0;
			continue;
		}
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			st[n++] = cfa;
			continue;
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			st[n++] = op->number;
			continue;
		case DW_OP_nop:
			continue;
		case DW_OP_stack_value:
			if (i != nops - 1)
				return -EINVAL;
			*is_value = true;
			continue;
		}
		if (!n)
			return -EINVAL;
		switch (op->atom) {
		case DW_OP_plus_uconst:
			st[n - 1] += op->number;
			continue;
		case DW_OP_deref:
			if (!stack_read(mem, st[n - 1], &st[n - 1])) {
				*out = st[n - 1];
				return -EFAULT;
			}
			continue;
		}
		if (n < 2)
			return -EINVAL;
		a = st[--n];
		b = st[n - 1];
		switch (op->atom) {
		case DW_OP_plus:
			b += a;
			break;
		case DW_OP_minus:
			b -= a;
			break;
		case DW_OP_and:
			b &= a;
			break;
		case DW_OP_or:
			b |= a;
			break;
		case DW_OP_shl:
			b = a < 64 ? b << a : 0;
			break;
		case DW_OP_shr:
			b = a < 64 ? b >> a : 0;
			break;
		case DW_OP_ge:
			b = (int64_t)b >= (int64_t)a;
			break;
		case DW_OP_gt:
			b = (int64_t)b > (int64_t)a;
			break;
		case DW_OP_le:
			b = (int64_t)b <= (int64_t)a;
			break;
		case DW_OP_lt:
			b = (int64_t)b < (int64_t)a;
			break;
		case DW_OP_eq:
			b = b == a;
			break;
		case DW_OP_ne:
			b = b != a;
			break;
		default:
			return -EINVAL;
		}
		st[n - 1] = b;
	}
	if (!n)
		return -EINVAL;
	*out = st[n - 1];
	return 0;
}

/* The CFA: 0, -EFAULT when it needs a read outside the copy (at *@cfa), or another -errno. */
static int frame_cfa(Dwarf_Frame *frame, const struct regs *r, const struct stack_copy *mem,
		     uint64_t *cfa)
{
	Dwarf_Op *ops;
	size_t nops;
	bool is_value;

	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops)
		return -EINVAL;
	return eval_ops(ops, nops, r, 0, mem, cfa, &is_value);
}

/*
 * The caller's register @reg: 0 (in *@val), 1 (same as now), -ENOENT
 * (undefined), -EFAULT (saved outside the copy, at *@val) or another -errno.
 */
static int frame_register(Dwarf_Frame *frame, int reg, const struct regs *r, uint64_t cfa,
			  const struct stack_copy *mem, uint64_t *val)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops;
	bool is_value;
	int err;

	if (dwarf_frame_register(frame, reg, ops_mem, &ops, &nops))
		return -EINVAL;
	if (!nops)
		return ops ? -ENOENT : 1; /* undefined, or same_value */
	err = eval_ops(ops, nops, r, cfa, mem, val, &is_value);
	if (err)
		return err;
	if (!is_value && !stack_read(mem, *val, val))
		return -EFAULT;
	return 0;
}

/* Does the CFA expression read the frame pointer? */
static bool uses_frame_pointer(Dwarf_Frame *frame)
{
	Dwarf_Op *ops;
	size_t nops;
	int64_t offset;

	if (dwarf_frame_cfa(frame, &ops, &nops))
		return true;
	for (size_t i = 0; i < nops; i++)
		if (unwind_op_breg(&ops[i], &offset) == PROFILE_REG_BP)
			return true;
	return false;
}

int unwinder__leaf_caller(struct unwinder *u, const struct proc_maps *maps,
			  const struct unwind_input *in, uint64_t *ra)
{
	struct stack_copy mem = { in->regs[PROFILE_REG_SP], in->stack, in->stack_size };
	struct regs r = { .known = ALL_REGS };
	Dwarf_Frame *frame;
	uint64_t cfa;
	int err = -ENOENT;

	memcpy(r.v, in->regs, sizeof(r.v));
	frame = unwinder__frame(u, maps, r.v[PROFILE_REG_IP]);
	if (!frame)
		return -ENOENT;
	if (uses_frame_pointer(frame) || frame_cfa(frame, &r, &mem, &cfa) ||
	    frame_register(frame, PROFILE_REG_IP, &r, cfa, &mem, ra) || !*ra)
		goto out_free;
	/* A return address outside any code is not one, or code mapped since @maps. */
	err = proc_maps__find(maps, *ra) ? 0 : -ENXIO;
out_free:
	free(frame);
	return err;
}

enum step {
	STEP_OK,
	STEP_END,      /* the outermost frame: the stack is complete */
	STEP_NO_STACK, /* the caller's frame is above the copy */
	STEP_FAIL,     /* nothing usable tells where the caller is */
};

/*
 * Why reading @addr failed: above the copy's start, it is a frame the copy
 * was too short for; below, no frame at all (the stack grows down).
 */
static enum step read_failure(const struct stack_copy *mem, uint64_t addr)
{
	return addr >= mem->base ? STEP_NO_STACK : STEP_FAIL;
}

/* Callee-saved registers in the x86-64 psABI (rbx, rbp, r12-r15): the ones a caller keeps. */
static const int callee_saved[] = { 3, PROFILE_REG_BP, 12, 13, 14, 15 };

/*
 * One frame up through the frame-pointer chain, for code without CFI. A
 * zero frame pointer marks the outermost frame (the psABI asks it of
 * _start, and a process starts with it, in the dynamic linker's _start,
 * which has no CFI).
 */
static enum step step_frame_pointer(struct regs *r, const struct stack_copy *mem)
{
	uint64_t bp = r->v[PROFILE_REG_BP], next_bp, ip;

	if ((r->known & REG_BIT(PROFILE_REG_BP)) && !bp)
		return STEP_END;
	if (!(r->known & REG_BIT(PROFILE_REG_BP)) || bp < r->v[PROFILE_REG_SP])
		return STEP_FAIL;
	if (!stack_read(mem, bp, &next_bp) || !stack_read(mem, bp + 8, &ip))
		return read_failure(mem, bp);
	r->known = REG_BIT(PROFILE_REG_BP) | REG_BIT(PROFILE_REG_SP) | REG_BIT(PROFILE_REG_IP);
	r->v[PROFILE_REG_BP] = next_bp;
	r->v[PROFILE_REG_SP] = bp + 16;
	r->v[PROFILE_REG_IP] = ip;
	r->signal = false;
	return ip ? STEP_OK : STEP_END;
}

/* From the frame in @r to its caller's. @leaf: @r's ip is the sampled one, exact. */
static enum step step(struct unwinder *u, const struct proc_maps *maps, struct regs *r,
		      const struct stack_copy *mem, bool leaf)
{
	uint64_t ip = r->v[PROFILE_REG_IP], cfa, val;
	struct regs caller = { .known = 0 };
	Dwarf_Frame *frame;
	enum step ret = STEP_FAIL;
	bool signal = false;
	int err;

	/* A return address is after the call, which may be the function's last instruction. */
	frame = unwinder__frame(u, maps, leaf || r->signal ? ip : ip - 1);
	if (!frame)
		return step_frame_pointer(r, mem);
	err = frame_cfa(frame, r, mem, &cfa);
	if (err == -EFAULT)
		ret = read_failure(mem, cfa);
	if (err || cfa <= r->v[PROFILE_REG_SP])
		goto out_free; /* unusable, or no progress: a loop */
	err = frame_register(frame, PROFILE_REG_IP, r, cfa, mem, &val);
	if (err == -ENOENT) {
		ret = STEP_END; /* "undefined": nothing called this frame */
		goto out_free;
	}
	if (err == -EFAULT)
		ret = read_failure(mem, val);
	if (err)
		goto out_free;
	caller.v[PROFILE_REG_IP] = val;
	caller.v[PROFILE_REG_SP] = cfa;
	caller.known = REG_BIT(PROFILE_REG_IP) | REG_BIT(PROFILE_REG_SP);
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++) {
		int reg = callee_saved[i];

		err = frame_register(frame, reg, r, cfa, mem, &val);
		if (err == 1 && (r->known & REG_BIT(reg)))
			val = r->v[reg];
		else if (err)
			continue;
		caller.v[reg] = val;
		caller.known |= REG_BIT(reg);
	}
	dwarf_frame_info(frame, NULL, NULL, &signal);
	caller.signal = signal;
	*r = caller;
	ret = caller.v[PROFILE_REG_IP] ? STEP_OK : STEP_END;
out_free:
	free(frame);
	return ret;
}

size_t unwinder__unwind(struct unwinder *u, const struct proc_maps *maps,
			const struct unwind_input *in, uint64_t *ips, size_t max,
			enum unwind_stop *stop)
{
	struct stack_copy mem = { in->regs[PROFILE_REG_SP], in->stack, in->stack_size };
	struct regs r = { .known = ALL_REGS };
	size_t nr = 0;

	*stop = UNWIND_MAX_FRAMES;
	memcpy(r.v, in->regs, sizeof(r.v));
	while (nr < max) {
		ips[nr++] = r.v[PROFILE_REG_IP];
		switch (step(u, maps, &r, &mem, nr == 1)) {
		case STEP_OK:
			continue;
		case STEP_END:
			*stop = UNWIND_COMPLETE;
			break;
		case STEP_NO_STACK:
			*stop = UNWIND_STACK_ENDED;
			break;
		case STEP_FAIL:
			*stop = UNWIND_NO_FRAME;
			break;
		}
		break;
	}
	return nr;
}
