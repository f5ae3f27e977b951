/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <string.h>

#include "gb-isa.h"

/* XCR0 states: SSE (1), YMM (2); AVX-512: opmask (5), ZMM_Hi256 (6), Hi16_ZMM (7). */
#define ISA_XCR0_YMM (G_GUINT64_CONSTANT(0x6))
#define ISA_XCR0_ZMM (G_GUINT64_CONSTANT(0xe6))

typedef enum {
	ISA_L1_ECX,
	ISA_L1_EDX,
	ISA_L7_EBX,
	ISA_X1_ECX,
	ISA_XCR0_YMM_ON,
	ISA_XCR0_ZMM_ON
} IsaWord;

typedef struct {
	guint level;
	const char *name;
	IsaWord word;
	guint bit;
} IsaFeature;

/* The psABI's lists (x86-64-ABI, "Micro-architecture levels"). */
static const IsaFeature isa_features[] = {
	{ 1, "cmov", ISA_L1_EDX, 15 },
	{ 1, "cx8", ISA_L1_EDX, 8 },
	{ 1, "fpu", ISA_L1_EDX, 0 },
	{ 1, "fxsr", ISA_L1_EDX, 24 },
	{ 1, "mmx", ISA_L1_EDX, 23 },
	{ 1, "sse", ISA_L1_EDX, 25 },
	{ 1, "sse2", ISA_L1_EDX, 26 },
	{ 2, "cx16", ISA_L1_ECX, 13 },
	{ 2, "lahf_lm", ISA_X1_ECX, 0 },
	{ 2, "popcnt", ISA_L1_ECX, 23 },
	{ 2, "pni", ISA_L1_ECX, 0 }, /* SSE3 */
	{ 2, "sse4_1", ISA_L1_ECX, 19 },
	{ 2, "sse4_2", ISA_L1_ECX, 20 },
	{ 2, "ssse3", ISA_L1_ECX, 9 },
	{ 3, "avx", ISA_L1_ECX, 28 },
	{ 3, "avx2", ISA_L7_EBX, 5 },
	{ 3, "bmi1", ISA_L7_EBX, 3 },
	{ 3, "bmi2", ISA_L7_EBX, 8 },
	{ 3, "f16c", ISA_L1_ECX, 29 },
	{ 3, "fma", ISA_L1_ECX, 12 },
	{ 3, "abm", ISA_X1_ECX, 5 }, /* LZCNT */
	{ 3, "movbe", ISA_L1_ECX, 22 },
	{ 3, "osxsave", ISA_L1_ECX, 27 },
	{ 3, "xcr0-ymm", ISA_XCR0_YMM_ON, 0 }, /* the OS saves the AVX state */
	{ 4, "avx512f", ISA_L7_EBX, 16 },
	{ 4, "avx512bw", ISA_L7_EBX, 30 },
	{ 4, "avx512cd", ISA_L7_EBX, 28 },
	{ 4, "avx512dq", ISA_L7_EBX, 17 },
	{ 4, "avx512vl", ISA_L7_EBX, 31 },
	{ 4, "xcr0-zmm", ISA_XCR0_ZMM_ON, 0 }, /* the OS saves the AVX-512 state */
};

static gboolean isa_has(const GbIsaInput *in, const IsaFeature *f)
{
	switch (f->word) {
	case ISA_L1_ECX:
		return (in->leaf1_ecx >> f->bit) & 1;
	case ISA_L1_EDX:
		return (in->leaf1_edx >> f->bit) & 1;
	case ISA_L7_EBX:
		return (in->leaf7_ebx >> f->bit) & 1;
	case ISA_X1_ECX:
		return (in->ext1_ecx >> f->bit) & 1;
	case ISA_XCR0_YMM_ON:
		return ((in->leaf1_ecx >> 27) & 1) && (in->xcr0 & ISA_XCR0_YMM) == ISA_XCR0_YMM;
	case ISA_XCR0_ZMM_ON:
		return ((in->leaf1_ecx >> 27) & 1) && (in->xcr0 & ISA_XCR0_ZMM) == ISA_XCR0_ZMM;
	}
	return FALSE;
}

static gboolean isa_level_complete(const GbIsaInput *in, guint level, GPtrArray *missing)
{
	gboolean all = TRUE;

	for (guint i = 0; i < G_N_ELEMENTS(isa_features); i++) {
		if (isa_features[i].level != level || isa_has(in, &isa_features[i]))
			continue;
		all = FALSE;
		if (missing != NULL)
			g_ptr_array_add(missing, g_strdup(isa_features[i].name));
	}
	return all;
}

guint gb_isa_level(const GbIsaInput *in, GPtrArray **missing)
{
	guint level = 0;

	*missing = g_ptr_array_new_with_free_func(g_free);
	while (level < 4 && isa_level_complete(in, level + 1, NULL))
		level++;
	if (level < 4)
		isa_level_complete(in, level + 1, *missing);
	return level;
}

gboolean gb_isa_cpuid_live(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data)
{
#if defined(__x86_64__) || defined(__i386__)
	/* the raw instruction: __get_cpuid_count() refuses the hypervisor range */
	__cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
	return TRUE;
#else
	return FALSE;
#endif
}

static guint64 gb_isa_xgetbv0(void)
{
#if defined(__x86_64__) || defined(__i386__)
	guint32 lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (guint64)hi << 32 | lo;
#else
	return 0;
#endif
}

gboolean gb_isa_input_read(GbCpuidFunc cpuid, gpointer user_data, gboolean live, GbIsaInput *in)
{
	guint32 l0[4] = { 0 }, l1[4] = { 0 }, l7[4] = { 0 }, x0[4] = { 0 }, x1[4] = { 0 };
	guint32 ld[4] = { 0 };

	*in = (GbIsaInput){ 0 };
	if (!cpuid(0, 0, l0, user_data) || l0[0] < 1)
		return FALSE;
	cpuid(1, 0, l1, user_data);
	if (l0[0] >= 7)
		cpuid(7, 0, l7, user_data);
	cpuid(0x80000000, 0, x0, user_data);
	if (x0[0] >= 0x80000001 && x0[0] <= 0x8000ffff)
		cpuid(0x80000001, 0, x1, user_data);
	in->leaf1_ecx = l1[2];
	in->leaf1_edx = l1[3];
	in->leaf7_ebx = l7[1];
	in->ext1_ecx = x1[2];
	/* XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID reports */
	if (!((l1[2] >> 27) & 1))
		return TRUE;
	if (live) {
		in->xcr0 = gb_isa_xgetbv0();
	} else if (l0[0] >= 0xd) {
		cpuid(0xd, 0, ld, user_data);
		in->xcr0 = (guint64)ld[3] << 32 | ld[0];
	}
	return TRUE;
}

char *gb_isa_level_name(guint level)
{
	return level > 0 ? g_strdup_printf("x86-64-v%u", level) : NULL;
}

/*
 * The hwcaps that each Arm A-profile extension makes mandatory and that Linux
 * shows user space (the /proc/cpuinfo Features names). Most of what a level
 * adds (VHE, PAN, RAS, ...) is invisible at EL0, so a level is a lower bound.
 */
static const struct {
	guint minor; /* Armv8.N */
	const char *name;
} isa_arm_features[] = {
	{ 1, "atomics" }, { 1, "asimdrdm" }, { 1, "crc32" }, { 2, "dcpop" }, { 3, "jscvt" },
	{ 3, "fcma" },    { 3, "lrcpc" },    { 3, "paca" },  { 3, "pacg" },  { 4, "dit" },
	{ 4, "uscat" },   { 4, "ilrcpc" },   { 4, "flagm" }, { 5, "sb" },    { 5, "dcpodp" },
	{ 5, "flagm2" },  { 5, "frint" },    { 5, "bti" },   { 6, "i8mm" },  { 6, "bf16" },
	{ 7, "afp" },     { 7, "wfxt" },     { 8, "mops" },  { 8, "hbc" },
};

#define ISA_ARM_V8_MAX 8
/* Armv9.N is Armv8.(N+5) with SVE2. */
#define ISA_ARM_V9_BASE 5

static gboolean isa_strv_has(const char *const *strv, const char *name)
{
	return strv != NULL && g_strv_contains(strv, name);
}

/* The missing features of Armv8.minor, appended to missing. */
static guint isa_arm_lacks(const char *const *hwcaps, guint minor, GPtrArray *missing)
{
	guint n = 0;

	for (guint i = 0; i < G_N_ELEMENTS(isa_arm_features); i++) {
		if (isa_arm_features[i].minor != minor ||
		    isa_strv_has(hwcaps, isa_arm_features[i].name))
			continue;
		n++;
		if (missing != NULL)
			g_ptr_array_add(missing, g_strdup(isa_arm_features[i].name));
	}
	return n;
}

guint gb_isa_arm_level(const char *const *hwcaps, GPtrArray **missing)
{
	guint minor = 0;
	gboolean sve2 = isa_strv_has(hwcaps, "sve2");
	guint level;

	while (minor < ISA_ARM_V8_MAX && isa_arm_lacks(hwcaps, minor + 1, NULL) == 0)
		minor++;
	level = sve2 && minor >= ISA_ARM_V9_BASE ? GB_ISA_ARM_V9 + minor - ISA_ARM_V9_BASE
	                                         : GB_ISA_ARM_V8 + minor;
	if (missing != NULL) {
		*missing = g_ptr_array_new_with_free_func(g_free);
		/* the next step of the same line: Armv9.N+1 lacks what Armv8.N+6 adds */
		if (minor < ISA_ARM_V8_MAX)
			isa_arm_lacks(hwcaps, minor + 1, *missing);
	}
	return level;
}

char *gb_isa_arm_level_name(guint level)
{
	guint major = level / 10, minor = level % 10;

	if ((major != 8 && major != 9) || (major == 8 && minor > ISA_ARM_V8_MAX) ||
	    (major == 9 && minor > ISA_ARM_V8_MAX - ISA_ARM_V9_BASE))
		return NULL;
	if (minor == 0)
		return g_strdup_printf("armv%u-a", major);
	return g_strdup_printf("armv%u.%u-a", major, minor);
}

gboolean gb_isa_arm_level_parse(const char *name, guint *level)
{
	guint64 major = 0, minor = 0;
	const char *p;
	g_autofree char *check = NULL;

	if (name == NULL || !g_str_has_prefix(name, "armv") || !g_str_has_suffix(name, "-a"))
		return FALSE;
	p = name + strlen("armv");
	if (p[0] < '8' || p[0] > '9')
		return FALSE;
	major = (guint64)(p[0] - '0');
	p++;
	if (p[0] == '.') {
		if (!g_ascii_isdigit(p[1]) || p[2] != '-')
			return FALSE;
		minor = (guint64)(p[1] - '0');
		p += 2;
	}
	if (g_strcmp0(p, "-a") != 0)
		return FALSE;
	check = gb_isa_arm_level_name((guint)(major * 10 + minor));
	/* only the spellings the name function makes: "armv8.0-a" is not one */
	if (g_strcmp0(check, name) != 0)
		return FALSE;
	*level = (guint)(major * 10 + minor);
	return TRUE;
}

guint gb_isa_arm_level_meet(guint a, guint b)
{
	/* as (Armv8 minor, SVE2): Armv9.N = (N+5, yes) */
	guint ma = a >= GB_ISA_ARM_V9 ? a - GB_ISA_ARM_V9 + ISA_ARM_V9_BASE : a - GB_ISA_ARM_V8;
	guint mb = b >= GB_ISA_ARM_V9 ? b - GB_ISA_ARM_V9 + ISA_ARM_V9_BASE : b - GB_ISA_ARM_V8;
	guint minor = MIN(ma, mb);

	if (a >= GB_ISA_ARM_V9 && b >= GB_ISA_ARM_V9)
		return GB_ISA_ARM_V9 + minor - ISA_ARM_V9_BASE;
	return GB_ISA_ARM_V8 + minor;
}

GPtrArray *gb_isa_arm_level_lacks(const char *const *hwcaps, guint level)
{
	GPtrArray *missing = g_ptr_array_new_with_free_func(g_free);
	guint minor = level >= GB_ISA_ARM_V9   ? level - GB_ISA_ARM_V9 + ISA_ARM_V9_BASE
	              : level >= GB_ISA_ARM_V8 ? level - GB_ISA_ARM_V8
	                                       : 0;

	for (guint m = 1; m <= minor && m <= ISA_ARM_V8_MAX; m++)
		isa_arm_lacks(hwcaps, m, missing);
	if (level >= GB_ISA_ARM_V9 && !isa_strv_has(hwcaps, "sve2"))
		g_ptr_array_add(missing, g_strdup("sve2"));
	return missing;
}
