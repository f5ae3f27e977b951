/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A libintl without translations, for the Windows build of GLib only.
 *
 * GLib 2.74 needs libintl even when built with -Dnls=disabled, and its
 * fallback is a download. The agent has no translations: every call
 * returns its message unchanged. scripts/windows-deps builds this as a
 * static libintl.a that GLib links into its DLL.
 */
#ifndef GB_LIBINTL_H
#define GB_LIBINTL_H

#ifdef __cplusplus
extern "C" {
#endif

/* GLib builds with -Werror=format-nonliteral: the message is the format */
#define GB_INTL_FORMAT(n) __attribute__((format_arg(n)))

char *gettext(const char *msgid) GB_INTL_FORMAT(1);
char *dgettext(const char *domain, const char *msgid) GB_INTL_FORMAT(2);
char *dcgettext(const char *domain, const char *msgid, int category) GB_INTL_FORMAT(2);
char *ngettext(const char *msgid, const char *msgid_plural, unsigned long n) GB_INTL_FORMAT(1)
    GB_INTL_FORMAT(2);
char *dngettext(const char *domain, const char *msgid, const char *msgid_plural, unsigned long n)
    GB_INTL_FORMAT(2) GB_INTL_FORMAT(3);
char *dcngettext(const char *domain, const char *msgid, const char *msgid_plural, unsigned long n,
                 int category) GB_INTL_FORMAT(2) GB_INTL_FORMAT(3);
char *textdomain(const char *domain);
char *bindtextdomain(const char *domain, const char *dirname);
char *bind_textdomain_codeset(const char *domain, const char *codeset);

#ifdef __cplusplus
}
#endif

#endif
