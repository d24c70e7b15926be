/*
 * common/lang.h — in which language a thread words its messages.
 *
 * gettext picks its catalogue from the calling thread's LC_MESSAGES. The
 * client reads its language from its own environment (cli/boxy.c). The
 * daemon is one process for all of a user's clients, whatever language each
 * reads: each client tells it the language its own messages are in (MSG_LANG,
 * right after the welcome), and the daemon words what it answers that client
 * under that language (lang_use around the wording). What it records — the
 * store, audit logs, the journal, daemon.log — is worded in C (lang_records),
 * whoever caused it: a record is read later, by scripts and by anyone.
 */
#ifndef BOXY_LANG_H
#define BOXY_LANG_H

#include <locale.h>

#define LANG_NAME_MAX 64        /* a language or locale name on the wire */

/*
 * The client's side: the language of the catalogue its messages come from
 * ("de", "pt_BR"; "" when they are not translated, as under C or --json) and
 * its LC_MESSAGES locale ("de_DE.UTF-8"). Both malloc'd.
 */
void lang_client_tag(char **lang, char **locale);

/*
 * The daemon's side: a locale that words messages in lang (with the codeset
 * of a locale of that language, so "Größe" is not "Gr??e"), preferring the
 * client's own locale. Made once per pair and kept for the process's life;
 * (locale_t)0 for "" or a language no installed locale can give (the
 * caller's words stay in C). Names are checked: only [A-Za-z0-9_.@-].
 */
locale_t lang_locale(const char *lang, const char *locale);

/* The locale records are worded in: the thread's own, with LC_MESSAGES of C. */
locale_t lang_records(void);

/* Word messages under loc from now on in this thread; returns the one to restore.
 * (locale_t)0 changes nothing (and returns the current one). */
locale_t lang_use(locale_t loc);

#endif
