/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The CPUID words the x86-64 psABI levels are decided from, and XCR0 (the
 * register states the OS enabled, read with XGETBV). A pure input so that
 * tests can feed one CPUID table per level boundary.
 */
typedef struct {
	guint32 leaf1_ecx, leaf1_edx; /* leaf 1 */
	guint32 leaf7_ebx;            /* leaf 7 subleaf 0 (0 above the maximum leaf) */
	guint32 ext1_ecx;             /* leaf 0x80000001 (0 above the maximum) */
	guint64 xcr0;                 /* 0 when OSXSAVE is clear */
} GbIsaInput;

#define GB_ISA_LEVEL_MAX 4

/*
 * The highest level (1..4) whose every feature is usable, as glibc's loader
 * decides (sysdeps/x86/get-isa-level.h: AVX, AVX2, FMA and F16C need the YMM
 * state enabled in XCR0, AVX-512 the opmask and ZMM states too); 0 when even
 * the baseline (cmov cx8 fpu fxsr mmx sse sse2) is missing. *missing gets the
 * features (lowercase, as in /proc/cpuinfo where it has a name) that the next
 * level up lacks: empty at level 4.
 */
guint gb_isa_level(const GbIsaInput *in, GPtrArray **missing);

/* Reads CPUID leaf/subleaf into regs (eax, ebx, ecx, edx); FALSE when there is no CPUID. */
typedef gboolean (*GbCpuidFunc)(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data);

/* The CPUID instruction of this machine (FALSE off x86). */
gboolean gb_isa_cpuid_live(guint32 leaf, guint32 subleaf, guint32 regs[4], gpointer user_data);

/*
 * Fills in from cpuid: leaves 1, 7.0 and 0x80000001 when the maximum leaves
 * have them. XCR0 comes from XGETBV when live (cpuid is this machine's own),
 * else from leaf 0xD subleaf 0 (the states the CPU has, which Linux enables
 * for user space), so an injected CPUID table stands alone. FALSE without
 * CPUID or without leaf 1.
 */
gboolean gb_isa_input_read(GbCpuidFunc cpuid, gpointer user_data, gboolean live, GbIsaInput *in);

/* "x86-64-v3" for 3; NULL for 0. */
char *gb_isa_level_name(guint level);

/*
 * Arm A-profile levels, encoded 10 * major + minor: 80 is Armv8.0 ("armv8-a"),
 * 86 Armv8.6, 90 Armv9.0 ("armv9-a"), up to 93. gb_isa_arm_level() returns
 * the highest level whose every EL0-visible mandatory feature is among hwcaps
 * (the /proc/cpuinfo Features names): 8.1 atomics asimdrdm crc32; 8.2 dcpop;
 * 8.3 jscvt fcma lrcpc paca pacg; 8.4 dit uscat ilrcpc flagm; 8.5 sb dcpodp
 * flagm2 frint bti; 8.6 i8mm bf16; 8.7 afp wfxt; 8.8 mops hbc; Armv9.N is
 * Armv8.(N+5) with sve2. Never below Armv8.0. *missing gets what the next
 * Armv8 step lacks (empty at 8.8). A lower bound: see PROTOCOL.md.
 */
#define GB_ISA_ARM_V8 80
#define GB_ISA_ARM_V9 90
guint gb_isa_arm_level(const char *const *hwcaps, GPtrArray **missing);
/* "armv8-a", "armv8.2-a", "armv9-a", "armv9.1-a"; NULL for a code out of range. */
char *gb_isa_arm_level_name(guint level);
/* The inverse of gb_isa_arm_level_name(); FALSE for anything else. */
gboolean gb_isa_arm_level_parse(const char *name, guint *level);
/* The highest level that both a and b include (Armv8.6 and Armv9.0 meet at Armv8.5). */
guint gb_isa_arm_level_meet(guint a, guint b);
/*
 * What of level's mandatory hwcaps (every Armv8 step up to it, and sve2 for
 * Armv9.N) hwcaps lacks, in table order: empty when hwcaps reach level.
 */
GPtrArray *gb_isa_arm_level_lacks(const char *const *hwcaps, guint level);

G_END_DECLS
