// SPDX-License-Identifier: Apache-2.0
/* kubelet-standin: what the kubelet does with a DRA plugin, as a CLI for
 * tests.  Each subcommand lives in its own file. */
#ifndef FAKEHW_STANDIN_H
#define FAKEHW_STANDIN_H

#include <stdbool.h>
#include <stdio.h>

/* Exit codes, the same for every subcommand. */
#define EXIT_OK     0 /* everything as expected */
#define EXIT_FAILED 1 /* a claim failed, registration refused, health stream ended badly */
#define EXIT_USAGE  2 /* bad command line */
#define EXIT_RPC    3 /* could not connect, or the RPC itself failed */

/* The kubelet's own deadlines. */
#define GET_INFO_TIMEOUT 1.0  /* GetInfo during registration */
#define NOTIFY_TIMEOUT   5.0  /* NotifyRegistrationStatus */
#define DRA_CALL_TIMEOUT 45.0 /* NodePrepareResources / NodeUnprepareResources */

int cmd_register(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_unprepare(int argc, char **argv);
int cmd_watch_health(int argc, char **argv);
int cmd_call(int argc, char **argv);

/* Parses "1.5" as seconds into *out; -1 when not a number >= 0. */
int parse_seconds(const char *text, double *out);

/* Prints s with newlines and other control characters as spaces, so one
 * value stays on one key=value line. */
void print_oneline(FILE *out, const char *s);

#endif
