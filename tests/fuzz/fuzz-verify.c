/*
 * fuzz-verify.c — libFuzzer target for the audit-log verifier
 * (src/cli/verify.c): a log is bytes a payload may have written.
 *
 * Besides not crashing: every break names a line that exists (1..lines, or
 * 0 only for an empty log), breaks come sorted, an intact verdict has at
 * least one line, every chain of an intact log is sealed, and a trusted key
 * the input cannot know never lets a seal through.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/verify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char nobody[SIGN_PUB_LEN] = { 0x42 };
	struct verify_opts plain = { 0 }, trusted = { .trusted_key = nobody };
	struct verify_result r;
	size_t nl = 0;

	for (size_t i = 0; i < size; i++)
		nl += data[i] == '\n';
	verify_audit_log((const char *)data, size, &plain, &r);
	if (r.lines > nl)
		abort();
	for (size_t i = 0; i < r.nbreaks; i++) {
		if (r.breaks[i].line > nl + 1 || !r.breaks[i].why)
			abort();
		if (i && r.breaks[i].line < r.breaks[i - 1].line)
			abort();
	}
	if (!r.nbreaks && (r.lines == 0 || r.sealed != r.chains))
		abort();
	verify_result_free(&r);
	verify_audit_log((const char *)data, size, &trusted, &r);
	if (!r.nbreaks && r.sealed)
		abort();        /* sealed by a key nobody holds: never intact */
	verify_result_free(&r);
	return 0;
}
