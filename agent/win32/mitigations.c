/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <windows.h>
#include <winternl.h>

#include "mitigations.h"

/* NtQuerySystemInformation classes (winternl.h names neither) */
#define GB_SYSTEM_KERNEL_VA_SHADOW_INFORMATION 196
#define GB_SYSTEM_SPECULATION_CONTROL_INFORMATION 201

/* SystemSpeculationControlInformation flags */
#define SPEC_BPB_ENABLED (1u << 0)
#define SPEC_BPB_DISABLED_SYSTEM_POLICY (1u << 1)
#define SPEC_BPB_DISABLED_NO_HARDWARE_SUPPORT (1u << 2)
#define SPEC_SSBD_AVAILABLE (1u << 8)
#define SPEC_SSBD_DISABLED_SYSTEM_WIDE (1u << 10)
#define SPEC_SSBD_DISABLED_KERNEL (1u << 11)
#define SPEC_SSBD_REQUIRED (1u << 12)
#define SPEC_RETPOLINE_ENABLED (1u << 14)
#define SPEC_ENHANCED_IBRS (1u << 16)
#define SPEC_MDS_HARDWARE_PROTECTED (1u << 24)
#define SPEC_MB_CLEAR_ENABLED (1u << 25)
#define SPEC_MB_CLEAR_REPORTED (1u << 26)
/* SystemKernelVaShadowInformation flags */
#define KVA_SHADOW_ENABLED (1u << 0)
#define KVA_SHADOW_REQUIRED (1u << 4)
#define KVA_SHADOW_REQUIRED_AVAILABLE (1u << 5)

static void mitigations_add(GPtrArray *out, const char *name, char *value)
{
	g_ptr_array_add(out, g_strdup(name));
	g_ptr_array_add(out, value);
}

static char *mitigations_spectre_v2(guint32 f)
{
	if (f & SPEC_BPB_ENABLED)
		return g_strdup_printf("Mitigation: %s%s",
		                       (f & SPEC_ENHANCED_IBRS) ? "Enhanced IBRS" : "IBRS/IBPB",
		                       (f & SPEC_RETPOLINE_ENABLED) ? ", Retpolines" : "");
	if (f & SPEC_BPB_DISABLED_NO_HARDWARE_SUPPORT)
		return g_strdup("Vulnerable: the CPU offers no IBRS/IBPB (microcode or CPU model)");
	if (f & SPEC_BPB_DISABLED_SYSTEM_POLICY)
		return g_strdup("Vulnerable: branch prediction barrier off by system policy");
	return g_strdup("Vulnerable");
}

static char *mitigations_ssb(guint32 f)
{
	if (!(f & SPEC_SSBD_REQUIRED))
		return g_strdup("Not affected");
	if (f & (SPEC_SSBD_DISABLED_SYSTEM_WIDE | SPEC_SSBD_DISABLED_KERNEL))
		return g_strdup_printf("Mitigation: Speculative Store Bypass disabled%s",
		                       (f & SPEC_SSBD_DISABLED_SYSTEM_WIDE) ? ""
		                                                            : " for the kernel");
	if (!(f & SPEC_SSBD_AVAILABLE))
		return g_strdup("Vulnerable: the CPU offers no SSBD (microcode or CPU model)");
	return g_strdup("Vulnerable");
}

char **agent_win_mitigations_decode(const AgentWinMitigations *m)
{
	g_autoptr(GPtrArray) out = NULL;

	if (!m->have_spec && !m->have_kva)
		return NULL;
	out = g_ptr_array_new_with_free_func(g_free);
	/* sorted by name, as the Linux agent lists its sysfs directory */
	if (m->have_kva && (m->kva & KVA_SHADOW_REQUIRED_AVAILABLE)) {
		if (!(m->kva & KVA_SHADOW_REQUIRED))
			mitigations_add(out, "meltdown", g_strdup("Not affected"));
		else if (m->kva & KVA_SHADOW_ENABLED)
			mitigations_add(out, "meltdown", g_strdup("Mitigation: KVA shadow"));
		else
			mitigations_add(out, "meltdown", g_strdup("Vulnerable"));
	}
	if (m->have_spec) {
		if (m->spec & SPEC_MDS_HARDWARE_PROTECTED)
			mitigations_add(out, "mds", g_strdup("Not affected"));
		else if (m->spec & SPEC_MB_CLEAR_ENABLED)
			mitigations_add(out, "mds", g_strdup("Mitigation: Clear CPU buffers"));
		else if (m->spec & SPEC_MB_CLEAR_REPORTED)
			mitigations_add(out, "mds", g_strdup("Vulnerable: Clear CPU buffers off"));
		mitigations_add(out, "spec_store_bypass", mitigations_ssb(m->spec));
		mitigations_add(out, "spectre_v2", mitigations_spectre_v2(m->spec));
	}
	g_ptr_array_add(out, NULL);
	return (char **)g_ptr_array_free(g_steal_pointer(&out), FALSE);
}

typedef LONG(NTAPI *GbNtQuerySystemInformation)(ULONG cls, void *info, ULONG len, ULONG *ret_len);

gboolean agent_win_mitigations_query(AgentWinMitigations *m, char **reason)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	GbNtQuerySystemInformation query = NULL;
	guint32 word = 0;
	ULONG len = 0;
	LONG spec_status;
	LONG kva_status;

	*m = (AgentWinMitigations){ 0 };
	if (ntdll != NULL)
		query = (GbNtQuerySystemInformation)(void (*)(void))GetProcAddress(
		    ntdll, "NtQuerySystemInformation");
	if (query == NULL) {
		*reason = g_strdup("ntdll has no NtQuerySystemInformation");
		return FALSE;
	}
	spec_status = query(GB_SYSTEM_SPECULATION_CONTROL_INFORMATION, &word, sizeof(word), &len);
	if (spec_status == 0 && len >= sizeof(word)) {
		m->have_spec = TRUE;
		m->spec = word;
	}
	word = 0;
	len = 0;
	kva_status = query(GB_SYSTEM_KERNEL_VA_SHADOW_INFORMATION, &word, sizeof(word), &len);
	if (kva_status == 0 && len >= sizeof(word)) {
		m->have_kva = TRUE;
		m->kva = word;
	}
	if (!m->have_spec && !m->have_kva) {
		*reason = g_strdup_printf("Windows did not report its speculation control "
		                          "(NtQuerySystemInformation: 0x%08lx, 0x%08lx)",
		                          (unsigned long)spec_status, (unsigned long)kva_status);
		return FALSE;
	}
	return TRUE;
}
