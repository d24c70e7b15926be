/*
 * cli/doctor.h — what this host gives boxy: one check per requirement, each
 * probed for real (namespaces are actually created in a child, /dev/net/tun
 * is actually opened), returned as plain data so `boxy doctor`, `boxy daemon
 * status` and the tests can share them.
 */
#ifndef BOXY_DOCTOR_H
#define BOXY_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "ui/doctor.h"       /* the report's data, and its text form */

/* The probes, one each; they fill c (free with doctor_check_free). */
void doctor_check_kernel(struct doctor_check *c);
void doctor_check_landlock(struct doctor_check *c);
void doctor_check_seccomp(struct doctor_check *c);
void doctor_check_userns(struct doctor_check *c);
/* AppArmor's kernel.apparmor_restrict_unprivileged_userns against boxy's own label. */
void doctor_check_apparmor(struct doctor_check *c);
/* The same with /proc read below root ("" for the real one): for the tests. */
void doctor_check_apparmor_at(struct doctor_check *c, const char *root);
void doctor_check_tun(struct doctor_check *c);
void doctor_check_cgroup(struct doctor_check *c);
/* How --memory is enforced here: the kernel (a delegated cgroup) or boxy's watchdog. */
void doctor_check_memory(struct doctor_check *c);
/* Can the daemon read who made a connection (/proc of a process in its own namespaces)? */
void doctor_check_attrib(struct doctor_check *c);
/* Can an opened decoy name its opener here (a lease, its break, the opener's wait channel)? */
void doctor_check_tripwires(struct doctor_check *c);
/* How an alert would freeze a run here (--on-alert freeze): the cgroup freezer, or SIGSTOP. */
void doctor_check_freeze(struct doctor_check *c);
void doctor_check_free(struct doctor_check *c);

/* Run every check, in the order the specification prints them. */
void doctor_run(struct doctor_report *r);
void doctor_report_free(struct doctor_report *r);
/* True when no check failed (warnings allowed): boxy can run here. */
bool doctor_can_run(const struct doctor_report *r);

/* The report as a JSON array (the text form is ui/doctor.h's). malloc'd. */
char *doctor_format_json(const struct doctor_report *r);

#endif
