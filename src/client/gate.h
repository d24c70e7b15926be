/*
 * client/gate.h — the CI gate: after a run, `--fail-on deny,new-destination,
 * alert` reads what the client saw at the run's end (client/tty.h's
 * findings: the refusal table of the daemon's last snapshot, the "new since
 * the last run" events, the alerts) and turns a run whose payload succeeded
 * into EXIT_BOXY_GATE when one of the named kinds occurred; `--report FILE`
 * writes the same findings as JUnit XML to FILE and as JSON to FILE.json
 * (doc/ci.md). Every string in a report was chosen by the payload: the XML
 * is escaped and stripped to what XML 1.0 allows, the JSON is json_str's.
 */
#ifndef BOXY_CLIENT_GATE_H
#define BOXY_CLIENT_GATE_H

#include <stddef.h>

/* s as XML 1.0 character data or attribute value: &<>"' as entities, tab/newline/CR
 * as character references, other control bytes, U+FFFE/U+FFFF and invalid UTF-8 as
 * U+FFFD. NULL → "". malloc'd. */
char *gate_xml_escape(const char *s);

/*
 * The run ended with code; fail_on: FAIL_ON_* bits (spec/values.h); argv: the
 * command, for the report. Says on stderr which words failed, sets *xml and
 * *json to the reports (malloc'd; the caller writes them), frees the
 * client's findings, and returns the run's status: code when it is not 0
 * (the payload's failure wins), else EXIT_BOXY_GATE when the gate failed,
 * else 0.
 */
int gate_finish(unsigned fail_on, char *const *argv, int code, char **xml, char **json);

#endif
