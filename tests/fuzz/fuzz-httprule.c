/*
 * fuzz-httprule.c — libFuzzer target for the --allow-http rule parser
 * (src/spec/http-rule.c) and the matcher (src/policy/http-rules.c).
 *
 * The input is a rule's text; a second line, if any, is a request's
 * "METHOD HOST PATH". Besides not crashing: a refused rule has a column
 * within the text and words; an accepted rule written back in its canonical
 * form reads back as the same canonical form; matching never crashes, and a
 * path the matcher calls ambiguous matches no rule that names paths.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/http-rules.h"
#include "spec/http-rule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *nl, *canon, *again_text;
	struct http_rule r, again;
	struct http_rule_error e;

	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (strlen(text) != size) {     /* a NUL: the flag and the profile never carry one */
		free(text);
		return 0;
	}
	nl = strchr(text, '\n');
	if (nl)
		*nl++ = '\0';
	if (http_rule_parse(text, &r, &e) < 0) {
		if (!e.why || e.column == 0 || e.column > strlen(text) + 1)
			abort();
		free(text);
		return 0;
	}
	canon = http_rule_text(&r);
	if (http_rule_parse(canon, &again, &e) < 0)
		abort();
	again_text = http_rule_text(&again);
	if (strcmp(canon, again_text) != 0)
		abort();
	if (nl) {
		struct http_rules rs = { .v = &r, .n = 1 };
		char *m = nl, *h = strchr(m, ' '), *p;

		if (h) {
			*h++ = '\0';
			p = strchr(h, ' ');
			if (p) {
				size_t got;

				*p++ = '\0';
				got = http_rules_match(&rs, m, h, p);
				if (got != HTTP_RULE_NONE && got != 0)
					abort();
				if (got == 0 && r.npaths && http_path_ambiguous(p))
					abort();
				(void)http_rules_inspect_host(&rs, h);
			}
		}
	}
	free(canon);
	free(again_text);
	http_rule_free(&again);
	http_rule_free(&r);
	free(text);
	return 0;
}
