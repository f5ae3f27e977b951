/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A libintl without translations (see libintl.h).
 */
#include "libintl.h"

#include <stddef.h>

char *gettext(const char *msgid)
{
	return (char *)msgid;
}

char *dgettext(const char *domain, const char *msgid)
{
	(void)domain;
	return (char *)msgid;
}

char *dcgettext(const char *domain, const char *msgid, int category)
{
	(void)domain;
	(void)category;
	return (char *)msgid;
}

char *ngettext(const char *msgid, const char *msgid_plural, unsigned long n)
{
	return (char *)(n == 1 ? msgid : msgid_plural);
}

char *dngettext(const char *domain, const char *msgid, const char *msgid_plural, unsigned long n)
{
	(void)domain;
	return ngettext(msgid, msgid_plural, n);
}

char *dcngettext(const char *domain, const char *msgid, const char *msgid_plural, unsigned long n,
                 int category)
{
	(void)domain;
	(void)category;
	return ngettext(msgid, msgid_plural, n);
}

/* "messages" is gettext's default domain; NULL asks for the current one */
char *textdomain(const char *domain)
{
	static const char messages[] = "messages";

	return (char *)(domain != NULL ? domain : messages);
}

/* No catalogues to bind: what was asked is what is bound. */
char *bindtextdomain(const char *domain, const char *dirname)
{
	(void)domain;
	return (char *)dirname;
}

char *bind_textdomain_codeset(const char *domain, const char *codeset)
{
	(void)domain;
	return (char *)codeset;
}
