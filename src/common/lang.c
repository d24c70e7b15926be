/*
 * common/lang.c — in which language a thread words its messages (see
 * common/lang.h).
 *
 * A language travels as two names: the catalogue's language, as the
 * client's gettext found it (the header of the catalogue it uses says
 * "Language: de"), and the client's LC_MESSAGES locale. The first is what
 * counts: LANGUAGE=de under LANG=en_US.UTF-8 reads German, and the daemon
 * cannot set LANGUAGE for one thread (gettext reads it from the process's
 * environment). So the daemon words a client's messages under a locale of
 * that language — the client's own when it is one, else LL.UTF-8 or
 * ll_LL.UTF-8 — whose name leads gettext to the same catalogue.
 */
#include <config.h>

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang.h"
#include "common/util.h"

#define LANG_CACHE_MAX 8        /* distinct languages one daemon serves; more get C */

struct lang_entry {
	char lang[LANG_NAME_MAX + 1], locale[LANG_NAME_MAX + 1];
	locale_t loc;           /* (locale_t)0: none could be made */
};

static pthread_mutex_t lang_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lang_entry lang_cache[LANG_CACHE_MAX];
static size_t lang_ncache;
static locale_t lang_records_loc;

/* A name as locales and catalogues are named: 1 to LANG_NAME_MAX of [A-Za-z0-9_.@-]. */
static bool lang_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= LANG_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-") == n;
}

void lang_client_tag(char **lang, char **locale)
{
	const char *head = gettext(""), *p = head, *cur = setlocale(LC_MESSAGES, NULL);

	*lang = NULL;
	/* The header of the catalogue in use; "" when no catalogue translates us. */
	while (*head && (p = strstr(p, "Language: ")) != NULL) {
		if (p == head || p[-1] == '\n') {
			*lang = xstrndup(p + 10, strcspn(p + 10, "\n"));
			break;
		}
		p++;
	}
	if (!*lang || !lang_name_ok(*lang)) {
		free(*lang);
		*lang = xstrdup("");
	}
	*locale = xstrdup(cur && lang_name_ok(cur) ? cur : "C");
}

/* Whether locale belongs to lang: "de_DE.UTF-8" to "de", "pt_BR.utf8" to "pt_BR". */
static bool lang_locale_of(const char *locale, const char *lang)
{
	size_t n = strlen(lang);

	return strncmp(locale, lang, n) == 0 && (locale[n] == '\0' || strchr("_.@", locale[n]));
}

/* The first locale of lang this system has: the client's, then LL.UTF-8, ll_LL.UTF-8. */
static locale_t lang_make(const char *lang, const char *locale)
{
	char cand[3][2 * LANG_NAME_MAX + 16];
	size_t ll = strcspn(lang, "_.@"), n = 0;
	locale_t loc = (locale_t)0;

	if (lang_name_ok(locale) && lang_locale_of(locale, lang))
		snprintf(cand[n++], sizeof(cand[0]), "%s", locale);
	snprintf(cand[n++], sizeof(cand[0]), "%s.UTF-8", lang);
	if (!lang[ll]) {
		snprintf(cand[n], sizeof(cand[0]), "%.*s_%.*s.UTF-8", (int)ll, lang, (int)ll, lang);
		for (size_t i = ll + 1; i < 2 * ll + 1; i++)
			cand[n][i] = (char)toupper((unsigned char)cand[n][i]);
		n++;
	}
	/* LC_CTYPE too: gettext converts the catalogue's text to the thread's codeset. */
	for (size_t i = 0; i < n && !loc; i++)
		loc = newlocale(LC_MESSAGES_MASK | LC_CTYPE_MASK, cand[i], (locale_t)0);
	return loc;
}

locale_t lang_locale(const char *lang, const char *locale)
{
	locale_t loc = (locale_t)0;

	if (!lang_name_ok(lang) || !locale)
		return (locale_t)0;
	pthread_mutex_lock(&lang_mu);
	for (size_t i = 0; i < lang_ncache; i++) {
		if (strcmp(lang_cache[i].lang, lang) == 0 &&
		    strcmp(lang_cache[i].locale, locale) == 0) {
			loc = lang_cache[i].loc;
			goto out;
		}
	}
	if (lang_ncache == LANG_CACHE_MAX)
		goto out;
	loc = lang_make(lang, locale);
	snprintf(lang_cache[lang_ncache].lang, sizeof(lang_cache[0].lang), "%s", lang);
	snprintf(lang_cache[lang_ncache].locale, sizeof(lang_cache[0].locale), "%s", locale);
	lang_cache[lang_ncache++].loc = loc;
out:
	pthread_mutex_unlock(&lang_mu);
	return loc;
}

locale_t lang_records(void)
{
	pthread_mutex_lock(&lang_mu);
	if (!lang_records_loc) {
		locale_t base = duplocale(LC_GLOBAL_LOCALE);

		lang_records_loc = base ? newlocale(LC_MESSAGES_MASK, "C", base) : (locale_t)0;
		if (!lang_records_loc) {
			if (base)
				freelocale(base);
			fatal("out of memory making the C locale");
		}
	}
	pthread_mutex_unlock(&lang_mu);
	return lang_records_loc;
}

locale_t lang_use(locale_t loc)
{
	return uselocale(loc);
}
