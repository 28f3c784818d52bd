// SPDX-License-Identifier: Apache-2.0
/* See world_tls.h. */
#include "world_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "atomic_file.h"

extern char **environ;

#define PATHF(buf, ...) snprintf((buf), sizeof(buf), __VA_ARGS__)

/* Runs openssl with args, output appended to log; 0 when it exits 0. */
static int openssl(const char *log, char *const argv[], struct error *err)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return error_set(err, "running openssl: out of memory");
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, "openssl", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return error_set_errno(err, rc, "running openssl (is it installed?)");
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return error_set_errno(err, errno, "waiting for openssl");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return error_set(err, "openssl %s %s failed; see %s", argv[1], argv[2], log);
    return 0;
}

/* A key and a certificate signed by the CA (ca_cert, ca_key): subject,
 * and, when san is not NULL, that subjectAltName (a server). */
static int signed_cert(const char *dir, const char *log, const char *name, const char *subject,
                       const char *san, const struct world_certs *c, char *cert, size_t cert_size,
                       char *key, size_t key_size, struct error *err)
{
    char csr[2400], ext[2400], ca_key[2400], serial[2400];
    snprintf(key, key_size, "%s/%s.key", dir, name);
    snprintf(cert, cert_size, "%s/%s.crt", dir, name);
    PATHF(csr, "%s/%s.csr", dir, name);
    PATHF(ext, "%s/%s.ext", dir, name);
    PATHF(ca_key, "%s/ca.key", dir);
    PATHF(serial, "%s/ca.srl", dir);
    char extension[256];
    int n = san ? snprintf(extension, sizeof(extension),
                           "subjectAltName=%s\nextendedKeyUsage=serverAuth\n", san)
                : snprintf(extension, sizeof(extension), "extendedKeyUsage=clientAuth\n");
    if (atomic_write_file(ext, extension, (size_t)n, 0600, err) < 0)
        return -1;
    char *req[] = {"openssl", "req",  "-newkey", "rsa:2048", "-nodes",        "-keyout",
                   key,       "-out", csr,       "-subj",    (char *)subject, NULL};
    char *sign[] = {"openssl",   "x509",        "-req",   "-in",  csr,
                    "-CA",       (char *)c->ca, "-CAkey", ca_key, "-CAcreateserial",
                    "-CAserial", serial,        "-out",   cert,   "-days",
                    "2",         "-extfile",    ext,      NULL};
    return openssl(log, req, err) < 0 || openssl(log, sign, err) < 0 ? -1 : 0;
}

int world_make_certs(const char *dir, const char *node, struct world_certs *c, struct error *err)
{
    char log[2400], ca_key[2400], subject[300];
    PATHF(log, "%s/openssl.log", dir);
    PATHF(c->ca, "%s/ca.crt", dir);
    PATHF(ca_key, "%s/ca.key", dir);
    char *ca[] = {
        "openssl", "req",  "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
        ca_key,    "-out", c->ca,   "-days",   "2",        "-subj",  "/CN=fakehw-bench-ca",
        NULL};
    if (openssl(log, ca, err) < 0)
        return -1;
    if (signed_cert(dir, log, "server", "/CN=kube-apiserver", "IP:127.0.0.1,DNS:localhost", c,
                    c->server_cert, sizeof(c->server_cert), c->server_key, sizeof(c->server_key),
                    err) < 0)
        return -1;
    PATHF(subject, "/O=system:nodes/CN=system:node:%s", node);
    return signed_cert(dir, log, "client", subject, NULL, c, c->client_cert, sizeof(c->client_cert),
                       c->client_key, sizeof(c->client_key), err);
}
