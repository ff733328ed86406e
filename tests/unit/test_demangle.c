// SPDX-License-Identifier: GPL-2.0-only
/*
 * Names taken with nm from programs built on Debian 12 (g++ 12 -O2, rustc
 * 1.63 -O with the legacy mangling and with -C symbol-mangling-version=v0);
 * the expected names are c++filt -i's, checked by hand.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "test.h"

struct pair {
	const char *mangled, *demangled;
};

static void check_pairs(const struct pair *pairs, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		char *s = demangle(pairs[i].mangled);
		bool same = s && !strcmp(s, pairs[i].demangled);

		if (!same)
			test__fail(__FILE__, __LINE__, "demangle('%s'): '%s' != '%s'",
				   pairs[i].mangled, s ? s : "(null)", pairs[i].demangled);
		free(s);
		if (!same)
			return;
	}
}

#define NR(a) (sizeof(a) / sizeof((a)[0]))
#define CHECK_PAIRS(pairs) check_pairs(pairs, NR(pairs))

static const struct pair cxx[] = {
	{ "_ZN3app5countERKSt3mapINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt6vector"
	  "IiSaIiEESt4lessIS6_ESaISt4pairIKS6_S9_EEE",
	  "app::count(std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> >, std::vector<int, std::allocator<int> >, "
	  "std::less<std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, "
	  "std::char_traits<char>, std::allocator<char> > const, std::vector<int, "
	  "std::allocator<int> > > > > const&)" },
	{ "_ZN3app6WidgetD0Ev", "app::Widget::~Widget()" },
	{ "_ZN3app5scaleERKSt6vectorIiSaIiEEi",
	  "app::scale(std::vector<int, std::allocator<int> > const&, int)" },
};

/* GCC's clone suffixes are kept as binutils prints them. */
static const struct pair cxx_clones[] = {
	{ "_Z3fooi.constprop.0", "foo(int) [clone .constprop.0]" },
	{ "_Z3fooi.isra.0", "foo(int) [clone .isra.0]" },
	{ "_Z3fooi.cold", "foo(int) [clone .cold]" },
	{ "_Z3fooi.part.0", "foo(int) [clone .part.0]" },
	/* Real ones, from g++ -O2. */
	{ "_ZNK3app3BoxIlE3getEv.isra.0", "app::Box<long>::get() const [clone .isra.0]" },
	{ "_ZNK3app6WidgetclERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE.isra.0",
	  "app::Widget::operator()(std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> > const&) const [clone .isra.0]" },
	{ "_ZN3app5scaleERKSt6vectorIiSaIiEEi.cold",
	  "app::scale(std::vector<int, std::allocator<int> > const&, int) [clone .cold]" },
	{ "_ZN3appL3mulEii.constprop.0", "app::mul(int, int) [clone .constprop.0]" },
};

/* The crate disambiguators ([df6bac527272806d]) are dropped, and LLVM's .llvm.N suffix. */
static const struct pair rust_v0[] = {
	{ "_RNvCsjbghrimrkzp_4prog4main", "prog::main" },
	{ "_RNvXs_Csjbghrimrkzp_4progNtB4_2SqNtB4_5Shape4area", "<prog::Sq as prog::Shape>::area" },
	{ "_RNvMCsjbghrimrkzp_4progINtB2_7CounterhE5totalB2_", "<prog::Counter<u8>>::total" },
	{ "_RINvNtCs6IL9ONYDOZW_4core3ptr13drop_in_placeINtNtCsihNoVIYWwLU_5alloc5boxed3BoxDNtCsj"
	  "bghrimrkzp_4prog5ShapeEL_EEB1i_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn prog::Shape>>" },
	{ "_RNCINvNtCsdyIG5SqMl5y_3std2rt10lang_startuE0Csjbghrimrkzp_4prog.llvm.17745670666124361878",
	  "std::rt::lang_start::<()>::{closure#0}" },
};

/* The hash (17h...E) is dropped. */
static const struct pair rust_legacy[] = {
	{ "_ZN4prog4main17h6c00c026288300f1E", "prog::main" },
	{ "_ZN40_$LT$prog..Sq$u20$as$u20$prog..Shape$GT$4area17h5596dd11331c2ce8E",
	  "<prog::Sq as prog::Shape>::area" },
	{ "_ZN4prog16Counter$LT$T$GT$5total17h57be48de463b181aE", "prog::Counter<T>::total" },
	{ "_ZN4core3ptr65drop_in_place$LT$alloc..boxed..Box$LT$dyn$u20$prog..Shape$GT$$GT$17h9af1"
	  "8021cbc5dcd0E",
	  "core::ptr::drop_in_place<alloc::boxed::Box<dyn prog::Shape>>" },
};

TEST(demangle_cxx)
{
	CHECK_PAIRS(cxx);
}

TEST(demangle_cxx_clone_suffixes)
{
	CHECK_PAIRS(cxx_clones);
}

TEST(demangle_rust_v0)
{
	CHECK_PAIRS(rust_v0);
}

TEST(demangle_rust_legacy)
{
	CHECK_PAIRS(rust_legacy);
}

TEST(demangle_not_mangled)
{
	static const char *const plain[] = {
		"main",
		"main.cold",
		"",
		"_start",
		"LazyCompile:*hotLoop /tmp/hot.js:3",
		"py::compute:/tmp/hot.py",
		"_Z",
		"_R",
		"_ZN",
		"_ZN3foo",
		"_RNv",
		"_ZN4prog4main17h6c00c02",
	};

	CHECK(!demangle(NULL));
	for (size_t i = 0; i < NR(plain); i++) {
		char *s = demangle(plain[i]);

		if (s)
			test__fail(__FILE__, __LINE__, "demangle('%s'): '%s'", plain[i], s);
		free(s);
		if (s)
			return;
	}
}

/* A name of @len bytes: @prefix, then @unit repeated, then @suffix. */
static char *repeat(const char *prefix, const char *unit, const char *suffix, size_t len)
{
	size_t lp = strlen(prefix), lu = strlen(unit), ls = strlen(suffix), n = lp;
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, prefix, lp);
	while (n + lu + ls <= len) {
		memcpy(s + n, unit, lu);
		n += lu;
	}
	memcpy(s + n, suffix, ls);
	s[n + ls] = '\0';
	return s;
}

/*
 * libiberty's C++ parser puts arrays sized by the name's length on the
 * stack; past 1024 characters it refuses. A megabyte of nesting must not
 * overflow the stack, of either parser.
 */
TEST(demangle_long_names)
{
	static const struct {
		const char *prefix, *unit, *suffix;
	} shapes[] = {
		{ "_Z1f", "P", "i" },
		{ "_ZN", "3abc", "E" },
		{ "_Z1fISt4pair", "IiE", "v" },
		{ "_R", "N", "v" },
		{ "_R", "NvC3foo", "" },
		{ "_RIN", "INtB", "E" },
		{ "_ZN", "x", "17h0123456789abcdefE" },
	};
	char *s, *out;

	/* Up to 1024 characters, C++ demangles. */
	s = repeat("_ZN", "3abc", "E", 1024);
	CHECK(s);
	out = demangle(s);
	free(s);
	CHECK(out);
	CHECK(!strncmp(out, "abc::abc::", 10));
	free(out);
	s = repeat("_ZN", "3abc", "E", 1028);
	CHECK(s);
	out = demangle(s);
	free(s);
	CHECK(!out);

	for (size_t i = 0; i < NR(shapes); i++) {
		s = repeat(shapes[i].prefix, shapes[i].unit, shapes[i].suffix, 1 << 20);
		CHECK(s);
		out = demangle(s);
		free(s);
		free(out);
	}
}

static uint64_t xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * Random bytes after a mangling prefix, and valid names with bytes changed,
 * inserted or cut: none may crash (ASan and UBSan check the rest under
 * `make asan`), and what comes back is a string.
 */
TEST(demangle_garbage)
{
	static const char *const prefixes[] = { "_Z", "_ZN", "_R", "_RN", "_RIN", "_ZZ", "" };
	static const char alphabet[] = "_0123456789NEIJSTLZRCKVPAFvisBbMcdDlmhtjxyfeQnoUu$.";
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	char buf[2048];

	for (int iter = 0; iter < 200000; iter++) {
		uint64_t r = xorshift(&state);
		size_t len, n;
		char *out;

		if (iter & 1) {
			const char *p = prefixes[r % NR(prefixes)];

			len = xorshift(&state) % 300;
			n = strlen(p);
			memcpy(buf, p, n);
			for (size_t i = 0; i < len; i++) {
				r = xorshift(&state);
				/* Mostly mangling characters, sometimes any byte. */
				buf[n + i] = r & 0x100 ? alphabet[r % (sizeof(alphabet) - 1)] :
							 (char)(r % 255 + 1);
			}
			buf[n + len] = '\0';
		} else {
			const struct pair *src = r & 1 ? &rust_v0[(r >> 1) % NR(rust_v0)] :
							 &cxx_clones[(r >> 1) % NR(cxx_clones)];
			size_t pos;

			n = strlen(src->mangled);
			memcpy(buf, src->mangled, n + 1);
			for (int k = 0; k < 3; k++) {
				r = xorshift(&state);
				pos = r % n;
				switch ((r >> 32) % 3) {
				case 0:
					buf[pos] = alphabet[(r >> 40) % (sizeof(alphabet) - 1)];
					break;
				case 1:
					memmove(buf + pos + 1, buf + pos, n - pos + 1);
					buf[pos] = alphabet[(r >> 40) % (sizeof(alphabet) - 1)];
					n++;
					break;
				default:
					memmove(buf + pos, buf + pos + 1, n - pos);
					n--;
					break;
				}
			}
		}
		out = demangle(buf);
		if (out)
			CHECK(strlen(out) < 1 << 20);
		free(out);
	}
}
